"""`submit` when the run could not complete for a reason outside the submission (issue 14, item 2)."""

from __future__ import annotations

from typing import Any

import pytest
from app_calc import CLAMP, CalcProject

from pytest_quest.app import submit as submit_module
from pytest_quest.app.next import next_quest
from pytest_quest.app.submit import submit
from pytest_quest.core.environment import ENVIRONMENT_EXIT, STREAK_KEY
from pytest_quest.core.run import RunReport

KILLED = RunReport(
    completed=False,
    problem="the test run could not complete: killed by signal SIGKILL",
    environment="killed by signal SIGKILL, not sent by the gate",
    output_tail=["tests/test_clamp.py ."],
)
TIMEOUT = RunReport(completed=False, problem="the test run exceeded --quest-timeout (5s)")


def fake(monkeypatch, calc: CalcProject, report: RunReport) -> None:
    calc.test("test_clamp", "from pkg.calc import clamp\n\ndef test_low():\n    pass\n")

    def run_child(selection: list[str], *args: Any, **kwargs: Any) -> Any:
        return report, None

    monkeypatch.setattr(submit_module, "run_child", run_child)


def test_outside_kills_spend_no_try_until_the_limit_in_a_row(calc, monkeypatch):
    fake(monkeypatch, calc, KILLED)
    next_quest(calc.context("next", quest_id=CLAMP))
    for count in (1, 2):
        output = submit(calc.context("submit"))
        assert output.exitcode == ENVIRONMENT_EXIT
        assert output.data["verdict"] == "NONE"
        assert output.data["environment"]["in_a_row"] == count
        assert output.lines[0].startswith(f"NO VERDICT: {CLAMP} stays TODO (tries 0/3")
        assert "  cause: killed by signal SIGKILL, not sent by the gate" in output.lines
        assert "    tests/test_clamp.py ." in output.lines
        quest = calc.context("next").store.load().quests[CLAMP]
        assert (quest.state.value, quest.tries, quest.extra[STREAK_KEY]) == ("TODO", 0, count)
    output = submit(calc.context("submit"))
    assert output.exitcode == 0
    assert (output.data["verdict"], output.data["step"]) == ("REVIEW", "environment")
    checks = [fact["check"] for fact in output.data["quest"]["facts"]]
    assert checks == ["environment.outside", "environment.repeated"]
    quest = calc.context("next").store.load().quests[CLAMP]
    assert (quest.state.value, quest.tries) == ("REVIEW", 0)


@pytest.mark.parametrize("report", [TIMEOUT])
def test_the_gates_own_timeout_stays_review_at_once(calc, monkeypatch, report):
    fake(monkeypatch, calc, report)
    next_quest(calc.context("next", quest_id=CLAMP))
    output = submit(calc.context("submit"))
    assert output.exitcode == 0
    assert (output.data["verdict"], output.data["step"]) == ("REVIEW", "environment")
    assert "environment" not in output.data
    assert output.data["quest"]["facts"][0]["check"] == "environment"
