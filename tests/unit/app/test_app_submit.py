"""`submit` in-process with a fake child run: judge, record, render; and its refusals."""

from __future__ import annotations

from typing import Any

import pytest
from app_calc import CLAMP, SIGN, CalcProject

from pytest_quest.app import submit as submit_module
from pytest_quest.app.next import next_quest
from pytest_quest.app.submit import Judgement, record, submit
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import FunctionFacts, Verdict
from pytest_quest.core.run import RunReport
from pytest_quest.engine.measure import MeasuredSource

TEST_LOW = "tests/test_clamp.py::test_low"


def clamp_low_only(project: CalcProject) -> FunctionFacts:
    """clamp as `test_low` measures it: the low branch only."""
    clamp = next(f for f in project.measured({}).functions if f.quest_id == CLAMP)
    clamp.missing_lines = [14, 15, 16]
    clamp.missing_branches = [(12, 14), (14, 15), (14, 16)]
    clamp.covering_tests = [TEST_LOW]
    return clamp


@pytest.fixture
def fake_run(calc: CalcProject, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The child run replaced: it ran `test_low`, which covers clamp's low branch only."""
    calc.test("test_clamp", "from pkg.calc import clamp\n\ndef test_low():\n    pass\n")
    runs: list[list[str]] = []

    def run_child(selection: list[str], *args: Any, **kwargs: Any) -> Any:
        runs.append(selection)
        report = RunReport(outcomes={TEST_LOW: "passed"}, duration=0.25)
        measured = MeasuredSource(functions=[clamp_low_only(calc)], config={"run:branch": True})
        return report, measured

    monkeypatch.setattr(submit_module, "run_child", run_child)
    return runs


def test_submit_fail_spends_a_try_then_done(calc: CalcProject, fake_run: list[list[str]]) -> None:
    next_quest(calc.context("next", quest_id=CLAMP))
    output = submit(calc.context("submit", max_tries=2))
    assert fake_run == [["tests/test_clamp.py"]]  # the new test file
    assert output.exitcode == 1
    assert output.lines[0] == f"FAIL: {CLAMP} is now TODO (tries 1/2)"
    assert "  src/pkg/calc.py:14: branch 14->15 not taken" in output.lines
    assert "  src/pkg/calc.py:15: line 15 not covered" in output.lines
    assert f"submit again: pytest --quest submit --quest-id {CLAMP}" in output.lines
    quest = calc.context("next").store.load().quests[CLAMP]
    assert quest.tries == 1
    assert quest.last_run_seconds == 0.25

    # Changed (the same tests on the same code are not judged twice), judged again.
    clamp_test = calc.root / "tests" / "test_clamp.py"
    clamp_test.write_text(clamp_test.read_text() + "# again\n")
    output = submit(calc.context("submit", max_tries=2))
    assert output.exitcode == 0
    data = output.data
    assert (data["verdict"], data["step"]) == ("FAIL", "3-coverage")
    quest_data = data["quest"]
    assert (quest_data["state"], quest_data["tries"], quest_data["max_tries"]) == ("DONE", 2, 2)
    assert quest_data["missing_lines"] == [14, 15, 16]
    assert quest_data["missing_branches"] == [[12, 14], [14, 15], [14, 16]]
    assert [fact["field"] for fact in quest_data["facts"]] == [
        "src/pkg/calc.py:14",
        "src/pkg/calc.py:15",
        "src/pkg/calc.py:16",
        "src/pkg/calc.py:12->14",
        "src/pkg/calc.py:14->15",
        "src/pkg/calc.py:14->16",
    ]
    # Settled: the next TODO quest becomes the active one and is shown.
    assert data["next_quest"]["id"] == SIGN
    assert calc.context("next").store.load().active == SIGN


def test_submit_refusals_run_nothing_and_write_nothing(
    calc: CalcProject, fake_run: list[list[str]]
) -> None:
    before = (calc.root / "quest.json").read_bytes()
    with pytest.raises(QuestUsageError, match="no active quest: run `pytest --quest next`"):
        submit(calc.context("submit"))
    with pytest.raises(QuestUsageError, match="unknown quest id 'src/pkg/calc.py::nope'"):
        submit(calc.context("submit", quest_id="src/pkg/calc.py::nope"))
    with pytest.raises(QuestUsageError, match="is PASS and refuses resubmission"):
        submit(calc.context("submit", quest_id="src/pkg/calc.py::double"))
    assert (calc.root / "quest.json").read_bytes() == before
    (calc.root / "src" / "pkg" / "calc.py").write_text("def broken(:\n")
    with pytest.raises(QuestUsageError, match=r"src/pkg/calc.py:1: syntax error"):
        submit(calc.context("submit", quest_id=SIGN))
    assert fake_run == []
    assert (calc.root / "quest.json").read_bytes() == before


def test_record_pass_keeps_what_the_gate_measured(calc: CalcProject) -> None:
    sign = next(
        f
        for f in calc.measured({"sign": ["tests/t.py::test_sign"]}).functions
        if f.quest_id == SIGN
    )
    ctx = calc.context("submit")
    quest = ctx.store.load().quests[SIGN]
    judgement = Judgement(GateResult(Verdict.PASS, [], "pass"), sign, RunReport(duration=1.0))
    judgement.mutation_seconds = 0.5
    state, written = record(ctx, quest=quest, judgement=judgement, now="2026-01-01T00:00:00Z")
    assert state.value == "PASS"
    assert written == ctx.store.load()  # what the update wrote, no re-read needed
    recorded = written.quests[SIGN]
    assert recorded.covering_tests == ["tests/t.py::test_sign"]
    assert (recorded.passed_at, recorded.missing_lines) == ("2026-01-01T00:00:00Z", [])
    assert (recorded.last_run_seconds, recorded.mutation_seconds) == (1.0, 0.5)
    assert written.active == CLAMP  # the next TODO


def test_record_refuses_a_quest_judged_meanwhile(calc: CalcProject) -> None:
    ctx = calc.context("submit")
    quest = ctx.store.load().quests[SIGN]
    failed = Judgement(GateResult(Verdict.FAIL, [], "3-coverage"), None, RunReport())
    record(ctx, quest=quest, judgement=failed, now="2026-01-01T00:00:00Z")
    before = (calc.root / "quest.json").read_bytes()
    with pytest.raises(QuestUsageError, match="was judged by another process"):
        record(ctx, quest=quest, judgement=failed, now="2026-01-01T00:00:01Z")
    assert (calc.root / "quest.json").read_bytes() == before
