"""`submit` when the run could not complete for a reason outside the submission."""

from __future__ import annotations

from typing import Any

import pytest
from app_calc import CLAMP, SIGN, CalcProject

from pytest_quest.app import deep_checks as deep_checks_module
from pytest_quest.app import submit as submit_module
from pytest_quest.app.environment import begin_submit, interrupted_done, outside_cause
from pytest_quest.app.next import next_quest
from pytest_quest.app.submit import Judgement, submit
from pytest_quest.core.environment import BEGUN_KEY, ENVIRONMENT_EXIT, STREAK_KEY
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.run import RunReport
from pytest_quest.engine.mutation import MutationReport

KILLED = RunReport(
    completed=False,
    problem="the test run could not complete: killed by signal SIGKILL",
    environment="killed by signal SIGKILL, not sent by the gate",
    output_tail=["tests/test_clamp.py ."],
)
TIMEOUT = RunReport(completed=False, problem="the test run exceeded --quest-timeout (5s)")


def fake(monkeypatch: pytest.MonkeyPatch, calc: CalcProject, report: RunReport) -> None:
    calc.test("test_clamp", "from pkg.calc import clamp\n\ndef test_low():\n    pass\n")

    def run_child(selection: list[str], *args: Any, **kwargs: Any) -> Any:
        return report, None

    monkeypatch.setattr(submit_module, "run_child", run_child)


def test_outside_kills_spend_no_try_until_the_limit_in_a_row(
    calc: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
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
def test_the_gates_own_timeout_stays_review_at_once(
    calc: CalcProject, monkeypatch: pytest.MonkeyPatch, report: RunReport
) -> None:
    fake(monkeypatch, calc, report)
    next_quest(calc.context("next", quest_id=CLAMP))
    output = submit(calc.context("submit"))
    assert output.exitcode == 0
    assert (output.data["verdict"], output.data["step"]) == ("REVIEW", "environment")
    assert "environment" not in output.data
    assert output.data["quest"]["facts"][0]["check"] == "environment"


# -- the same rule for the mutation child (step 4) ---------------------------------------

TEST_SIGN = "tests/test_sign.py::test_sign"
MUTATION_KILLED = MutationReport(
    completed=False,
    problem="the mutation check could not complete: killed by signal SIGKILL",
    environment="killed by signal SIGKILL, not sent by the gate (the mutation child, step 4)",
    output_tail=["tests/test_sign.py ."],
)
MUTATION_TIMEOUT = MutationReport(
    completed=False, problem="the mutation check exceeded --quest-timeout (5s) and was stopped"
)


def fake_mutation(
    monkeypatch: pytest.MonkeyPatch, calc: CalcProject, report: MutationReport
) -> list[int]:
    """Steps 1-3 pass (sign fully covered by TEST_SIGN); the mutation child ends as `report`."""
    calc.test("test_sign", "from pkg.calc import sign\n\ndef test_sign():\n    pass\n")
    runs: list[int] = []

    def run_child(selection: list[str], *args: Any, **kwargs: Any) -> Any:
        return RunReport(outcomes={TEST_SIGN: "passed"}), calc.measured({"sign": [TEST_SIGN]})

    def run_mutation_check(*args: Any, **kwargs: Any) -> MutationReport:
        runs.append(1)
        return report

    monkeypatch.setattr(submit_module, "run_child", run_child)
    monkeypatch.setattr(deep_checks_module, "run_mutation_check", run_mutation_check)
    return runs


def test_a_mutation_child_killed_from_outside_spends_no_try_until_the_limit(
    calc: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = fake_mutation(monkeypatch, calc, MUTATION_KILLED)
    next_quest(calc.context("next", quest_id=SIGN))
    for count in (1, 2):
        output = submit(calc.context("submit"))
        assert output.exitcode == ENVIRONMENT_EXIT
        assert (output.data["verdict"], output.data["step"]) == ("NONE", "environment")
        assert output.data["environment"] == {
            "cause": MUTATION_KILLED.environment,
            "output_tail": ["tests/test_sign.py ."],
            "in_a_row": count,
            "limit": 3,
        }
        assert f"  cause: {MUTATION_KILLED.environment}" in output.lines
        quest = calc.context("next").store.load().quests[SIGN]
        assert (quest.state.value, quest.tries, quest.extra[STREAK_KEY]) == ("TODO", 0, count)
        assert quest.history[-1].action == "environment"
        assert "SIGKILL" in quest.history[-1].note
    output = submit(calc.context("submit"))
    assert (output.exitcode, output.data["verdict"]) == (0, "REVIEW")
    checks = [fact["check"] for fact in output.data["quest"]["facts"]]
    assert checks == ["environment.outside", "environment.repeated"]
    assert len(runs) == 3


def test_the_mutation_childs_own_timeout_stays_review_at_once(
    calc: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_mutation(monkeypatch, calc, MUTATION_TIMEOUT)
    next_quest(calc.context("next", quest_id=SIGN))
    output = submit(calc.context("submit"))
    assert (output.exitcode, output.data["verdict"]) == (0, "REVIEW")
    assert output.data["step"] == "4-mutants"
    assert "environment" not in output.data
    assert output.data["quest"]["facts"][0]["check"] == "mutation.environment"


class JudgeKilled(BaseException):
    """The judge dies mid-run (SIGKILL): nothing after the run happens."""


def test_a_judge_killed_mid_run_counts_at_the_next_submit(
    calc: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    calc.test("test_clamp", "from pkg.calc import clamp\n\ndef test_low():\n    pass\n")
    runs: list[int] = []

    def run_child(selection: list[str], *args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        raise JudgeKilled

    monkeypatch.setattr(submit_module, "run_child", run_child)
    next_quest(calc.context("next", quest_id=CLAMP))
    for count in (0, 1, 2):
        with pytest.raises(JudgeKilled):
            submit(calc.context("submit"))
        quest = calc.context("next").store.load().quests[CLAMP]
        assert (quest.state.value, quest.tries) == ("TODO", 0)
        assert quest.extra.get(STREAK_KEY, 0) == count
        assert BEGUN_KEY in quest.extra
    output = submit(calc.context("submit"))
    assert len(runs) == 3  # the fourth submit ran nothing
    assert (output.exitcode, output.data["verdict"], output.data["step"]) == (
        0,
        "REVIEW",
        "environment",
    )
    assert output.data["environment"]["in_a_row"] == 3
    assert "recorded nothing" in output.data["environment"]["cause"]
    quest = calc.context("next").store.load().quests[CLAMP]
    assert (quest.state.value, quest.tries) == ("REVIEW", 0)
    assert [f.check for f in quest.facts] == ["environment.outside", "environment.repeated"]
    assert BEGUN_KEY not in quest.extra


def test_a_quest_gone_before_the_submit_begins_is_a_usage_error_and_nothing_is_written(
    calc: CalcProject,
) -> None:
    before = (calc.root / "quest.json").read_bytes()
    with pytest.raises(QuestUsageError, match="vanished from the ratchet file"):
        begin_submit(calc.context("submit"), "src/pkg/calc.py::gone", "2026-12-01T10:00:00Z")
    assert (calc.root / "quest.json").read_bytes() == before


def test_an_interrupted_command_says_what_it_recorded() -> None:
    assert interrupted_done(0, 0) == "nothing was recorded"
    assert interrupted_done(1, 1).startswith("no verdict was recorded and no try spent")
    assert interrupted_done(2, 1) == "the ratchet file was already written"


# -- a dispute's whole-suite stage: the same rule -------------------------------------------


def whole_suite_with(
    calc: CalcProject,
    monkeypatch: pytest.MonkeyPatch,
    run: RunReport,
    report: MutationReport | None = None,
) -> tuple[GateResult, Judgement]:
    from pytest_quest.app import dispute as dispute_module
    from pytest_quest.core.model import Verdict

    monkeypatch.setattr(
        dispute_module,
        "run_selection",
        lambda *a, **k: (run, calc.measured({"sign": [TEST_SIGN]}) if run.completed else None),
    )
    monkeypatch.setattr(dispute_module, "run_mutation_check", lambda *a, **k: report)
    calc.test("test_sign", "from pkg.calc import sign\n\ndef test_sign():\n    pass\n")
    ctx = calc.context("submit")
    quest = ctx.store.load().quests[SIGN]
    judgement = Judgement(GateResult(Verdict.FAIL, [], "4-mutants"), None, RunReport())
    result = dispute_module.whole_suite(ctx, quest, ("m1",), judgement)
    return result, judgement


def test_a_disputes_whole_suite_run_killed_from_outside_is_no_verdict(
    calc: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    killed = RunReport(completed=False, problem="killed: SIGKILL", environment="killed by SIGKILL")
    result, judgement = whole_suite_with(calc, monkeypatch, killed)
    assert (result.step, [f.check for f in result.facts]) == (
        "environment",
        ["environment.outside"],
    )
    assert outside_cause(judgement.run, result, judgement.mutation)[0] == "killed by SIGKILL"


def test_a_disputes_mutation_child_killed_from_outside_is_no_verdict(
    calc: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = RunReport(outcomes={TEST_SIGN: "passed"})
    result, judgement = whole_suite_with(calc, monkeypatch, run, MUTATION_KILLED)
    assert result.step == "environment"
    assert outside_cause(judgement.run, result, judgement.mutation) == (
        MUTATION_KILLED.environment,
        ["tests/test_sign.py ."],
    )
