"""The gate's environment step on each kind of run, and how a test's runs are named."""

from __future__ import annotations

from pytest_quest.core.gate import Evidence, GateResult, _runs_text, step_environment
from pytest_quest.core.model import Fact, Verdict
from pytest_quest.core.run import CollectionError, RunReport
from tests.support import quests

QUEST_ID = "src/pkg/m.py::f"


def _evidence(run: RunReport) -> Evidence:
    return Evidence(quest=quests.make_quest(), current=None, run=run)


def test_a_complete_run_without_collection_errors_passes_the_step() -> None:
    assert step_environment(_evidence(RunReport())) is None


def test_a_tampered_report_is_review_naming_what_was_wrong() -> None:
    run = RunReport(tampered="no nonce", completed=False, problem="timeout")
    assert step_environment(_evidence(run)) == GateResult(
        Verdict.REVIEW,
        [
            Fact(
                check="evidence.tampered",
                field=QUEST_ID,
                expected="one message with the judge's nonce from the test run",
                actual="no nonce",
                message="could not confirm: the test run's report was tampered with (no nonce)",
            )
        ],
        "environment",
    )


def test_an_incomplete_run_is_review_with_its_problem() -> None:
    assert step_environment(_evidence(RunReport(completed=False, problem="timed out"))) == (
        GateResult(
            Verdict.REVIEW,
            [
                Fact(
                    check="environment",
                    field=QUEST_ID,
                    expected="the test run completes",
                    actual="timed out",
                    message="could not confirm: timed out",
                )
            ],
            "environment",
        )
    )


def test_an_incomplete_run_from_outside_without_a_problem_says_it_did_not_complete() -> None:
    run = RunReport(completed=False, environment="killed by a signal")
    assert step_environment(_evidence(run)) == GateResult(
        Verdict.REVIEW,
        [
            Fact(
                check="environment.outside",
                field=QUEST_ID,
                expected="the test run completes",
                actual="the run did not complete",
                message="could not confirm: the run did not complete",
            )
        ],
        "environment",
    )


def test_collection_errors_fail_one_fact_each_with_the_line_when_known() -> None:
    run = RunReport(
        collection_errors=[
            CollectionError("tests/test_a.py", 7, "SyntaxError: bad"),
            CollectionError("tests/test_b.py", 0, "ImportError: x"),
        ]
    )
    assert step_environment(_evidence(run)) == GateResult(
        Verdict.FAIL,
        [
            Fact(
                check="collection.error",
                field="tests/test_a.py:7",
                expected="the tests are collected without error",
                actual="SyntaxError: bad",
                message="collection error: SyntaxError: bad",
            ),
            Fact(
                check="collection.error",
                field="tests/test_b.py",
                expected="the tests are collected without error",
                actual="ImportError: x",
                message="collection error: ImportError: x",
            ),
        ],
        "collection",
    )


def test_runs_are_named_in_order_or_as_a_different_outcome() -> None:
    assert _runs_text(["passed", "error (E boom)"]) == "runs: passed, error (E boom)"
    assert _runs_text(["failed"]) == "runs: failed"
    assert _runs_text([]) == "a different outcome"
    assert _runs_text(None) == "a different outcome"
