"""Fresh facts in `next`: where they come from, and the gate's last facts
kept over a rescan."""

from __future__ import annotations

from typing import Any

import pytest
from app_calc import CLAMP, TEST_DOUBLE, CalcProject

from pytest_quest.app import submit as submit_module
from pytest_quest.app.next import next_quest
from pytest_quest.app.submit import submit
from pytest_quest.core.run import RunReport
from pytest_quest.engine.measure import MeasuredSource


def test_next_says_where_facts_come_from_and_keeps_gate_facts_over_a_rescan(
    calc: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = next_quest(calc.context("next", quest_id=CLAMP))
    origin = first.data["quest"]["facts_from"]
    assert origin["kind"] == "scan"
    assert origin["note"].endswith("; no test file changed since: current")
    assert any("no test file changed since" in line for line in first.lines)

    calc.test("test_clamp", "from pkg.calc import clamp\n\ndef test_low():\n    assert 0\n")
    clamp = next(f for f in calc.measured({}).functions if f.quest_id == CLAMP)

    def run_child(selection: list[str], *args: Any, **kwargs: Any) -> Any:
        report = RunReport(
            outcomes={"tests/test_clamp.py::test_low": "failed"},
            errors={"tests/test_clamp.py::test_low": "AssertionError: assert 0"},
        )
        return report, MeasuredSource(functions=[clamp], config={"run:branch": True})

    monkeypatch.setattr(submit_module, "run_child", run_child)
    assert submit(calc.context("submit")).data["verdict"] == "FAIL"
    after = next_quest(calc.context("next")).data["quest"]
    assert after["facts_from"]["kind"] == "submit"
    assert after["facts"][0]["check"] == "test.failed"

    # A rescan: clamp is now covered by a test written for another quest.
    calc.scan({"double": [TEST_DOUBLE], "clamp": ["tests/test_other.py::test_x"]})
    output = next_quest(calc.context("next"))
    quest = output.data["quest"]
    assert (quest["state"], quest["tries"], quest["facts"]) == ("TODO", 1, [])
    assert quest["facts_from"]["kind"] == "scan"
    assert "found nothing missing" in quest["facts_from"]["note"]
    kept = quest["extra"]["gate_facts"]
    assert kept["verdict"] == "FAIL"
    assert kept["facts"][0]["check"] == "test.failed"
    assert any(line.startswith("  last gate facts (submit of ") for line in output.lines)
    assert "    tests/test_clamp.py::test_low failed: AssertionError: assert 0" in output.lines
