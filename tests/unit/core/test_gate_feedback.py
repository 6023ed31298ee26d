"""Gate facts an agent can act on: failing tests named first, with their
error, and coverage facts that say which lines only failing tests reached."""

from __future__ import annotations

from typing import Any

from pytest_quest.core.gate import Evidence, coverage_facts, judge
from pytest_quest.core.model import FunctionFacts, Verdict
from pytest_quest.core.run import RunReport
from tests.support import quests

FILE = "src/pkg/lri.py"


def current(**changes: Any) -> FunctionFacts:
    values: dict[str, Any] = {
        "file": FILE,
        "qualname": "LRI.__eq__",
        "ordinal": 1,
        "start": 10,
        "first": 10,
        "last": 14,
        "fingerprint": "sha256:" + "0" * 32,
        "statements": 3,
        "branches": 2,
        "missing_lines": [11, 12],
        "missing_branches": [(11, 12), (11, 13)],
        "failing_lines": [12],
        "failing_branches": [(11, 12)],
    }
    values.update(changes)
    return FunctionFacts(**values)


def evidence(run: RunReport, **changes: Any) -> Evidence:
    quest = quests.make_quest(
        id=f"{FILE}::LRI.__eq__",
        file=FILE,
        qualname="LRI.__eq__",
        first=10,
        last=14,
        fingerprint="sha256:" + "0" * 32,
    )
    return Evidence(quest=quest, current=current(**changes), run=run)


RUN = RunReport(
    outcomes={
        "tests/test_lri.py::test_eq_cycle": "failed",
        "tests/test_lri.py::test_ok": "passed",
        "tests/test_lri.py::test_fixture": "error",
        "tests/test_lri.py::test_skipped": "skipped",
    },
    errors={
        "tests/test_lri.py::test_eq_cycle": "RecursionError: maximum recursion depth exceeded",
        "tests/test_lri.py::test_fixture": "ValueError: no such fixture value",
    },
)


def test_failing_tests_come_first_with_outcome_and_error() -> None:
    result = judge(evidence(RUN))
    assert (result.verdict, result.step) == (Verdict.FAIL, "3-coverage")
    first, second = result.facts[:2]
    assert first.check == "test.failed"
    assert first.field == "tests/test_lri.py::test_eq_cycle"
    assert first.actual == "failed: RecursionError: maximum recursion depth exceeded"
    assert first.text() == (
        "tests/test_lri.py::test_eq_cycle failed: RecursionError: maximum recursion depth exceeded"
    )
    assert second.check == "test.error"
    assert (
        second.text() == "tests/test_lri.py::test_fixture error: ValueError: no such fixture value"
    )
    assert [fact.check for fact in result.facts[2:]] == [
        "coverage.line",
        "coverage.line",
        "coverage.branch",
        "coverage.branch",
    ]


def test_coverage_facts_say_which_lines_only_failing_tests_reached() -> None:
    facts = {fact.field: fact for fact in coverage_facts(current())}
    assert facts[f"{FILE}:11"].message == "line 11 not covered"
    assert facts[f"{FILE}:12"].message == "line 12 not covered (reached only by failing tests)"
    assert facts[f"{FILE}:12"].actual == "executed only by tests that did not pass"
    assert facts[f"{FILE}:11->12"].message == (
        "branch 11->12 not taken (taken only by failing tests)"
    )
    assert facts[f"{FILE}:11->13"].message == "branch 11->13 not taken"


def test_an_error_without_text_still_names_the_test() -> None:
    run = RunReport(outcomes={"tests/t.py::test_x": "failed"})
    [fact] = [f for f in judge(evidence(run)).facts if f.check.startswith("test.")]
    assert fact.text() == "tests/t.py::test_x failed"


def test_many_failing_tests_are_summarised() -> None:
    outcomes = {f"tests/t.py::test_{n:02d}": "failed" for n in range(25)}
    result = judge(evidence(RunReport(outcomes=outcomes)))
    named = [f for f in result.facts if f.check == "test.failed"]
    assert len(named) == 10
    [more] = [f for f in result.facts if f.check == "test.more"]
    assert more.message == "and 15 more tests that did not pass"


def test_a_pass_has_no_test_facts_and_other_steps_keep_theirs() -> None:
    covered = current(missing_lines=[], missing_branches=[], failing_lines=[], failing_branches=[])
    result = judge(Evidence(quest=evidence(RUN).quest, current=covered, run=RUN))
    assert result.verdict is Verdict.PASS
