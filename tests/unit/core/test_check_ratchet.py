"""check's re-measure of every PASS quest (core/ratchet.py check_ratchet), facts written out."""

from __future__ import annotations

from typing import Any

from pytest_quest.core.model import Fact, FunctionFacts, Quest, Ratchet, State
from pytest_quest.core.ratchet import CheckReport, Regression, check_ratchet


def _quest(name: str, state: State = State.PASS, **changes: Any) -> Quest:
    values: dict[str, Any] = {
        "id": f"a.py::{name}",
        "file": "a.py",
        "qualname": name,
        "first": 10,
        "last": 14,
        "fingerprint": "fp-1",
        "state": state,
        "passed_at": "2026-12-01T10:00:00Z",
    }
    values.update(changes)
    return Quest(**values)


def _facts(name: str, **changes: Any) -> FunctionFacts:
    values: dict[str, Any] = {
        "file": "a.py",
        "qualname": name,
        "ordinal": 1,
        "start": 10,
        "first": 10,
        "last": 14,
        "fingerprint": "fp-1",
        "statements": 3,
        "branches": 0,
    }
    values.update(changes)
    return FunctionFacts(**values)


def _ratchet(*quests: Quest) -> Ratchet:
    return Ratchet(quests={quest.id: quest for quest in quests})


def test_a_pass_still_covered_holds_and_other_states_are_not_checked() -> None:
    ratchet = _ratchet(_quest("ok"), _quest("todo", State.TODO), _quest("review", State.REVIEW))
    report = check_ratchet(ratchet, [_facts("ok"), _facts("todo", missing_lines=[11])])
    assert (report.checked, report.regressions, report.changed, report.untracked) == (1, [], [], [])


def test_a_gone_pass_function_is_a_regression() -> None:
    quest = _quest("gone")
    report = check_ratchet(_ratchet(quest), [])
    assert report.checked == 1
    assert report.regressions == [
        Regression(
            quest,
            [
                Fact(
                    check="ratchet.gone",
                    field="a.py:10",
                    expected="PASS function gone (PASS since 2026-12-01T10:00:00Z)",
                    actual="not found in the current code",
                    message=(
                        "PASS function gone is gone [a.py::gone, PASS since 2026-12-01T10:00:00Z]; "
                        "if it was removed on purpose, run `pytest --quest scan` to record the "
                        "removal in the ratchet file"
                    ),
                )
            ],
        )
    ]


def test_a_changed_function_still_covered_is_listed_as_changed() -> None:
    report = check_ratchet(_ratchet(_quest("f")), [_facts("f", fingerprint="fp-2")])
    assert (report.changed, report.regressions) == (["a.py::f"], [])


def test_missing_coverage_of_a_changed_function_is_a_regression_saying_so() -> None:
    quest = _quest("f", passed_at="")
    report = check_ratchet(
        _ratchet(quest),
        [_facts("f", fingerprint="fp-2", missing_lines=[12], missing_branches=[(12, 14)])],
    )
    assert report.changed == []
    assert report.regressions == [
        Regression(
            quest,
            [
                Fact(
                    "coverage.line",
                    "a.py:12",
                    "executed by a passing test",
                    "never executed",
                    "line 12 not covered [a.py::f, PASS (no date recorded)]",
                ),
                Fact(
                    "coverage.branch",
                    "a.py:12->14",
                    "branch taken by a passing test",
                    "never taken",
                    "branch 12->14 not taken [a.py::f, PASS (no date recorded)]",
                ),
                Fact(
                    "ratchet.changed",
                    "a.py:10",
                    "code as at PASS (fp-1)",
                    "changed (fp-2)",
                    "function f changed since it passed [a.py::f, PASS (no date recorded)]",
                ),
            ],
            True,
        )
    ]


def test_a_line_newly_excluded_is_a_regression_counted_by_offset() -> None:
    # Excluded at PASS: line 12 of a function starting at 10; the function moved 5 lines down.
    quest = _quest("f", excluded_lines=[12])
    moved = _facts("f", start=15, first=15, last=19, excluded_lines=[17, 18])
    report = check_ratchet(_ratchet(quest), [moved])
    assert report.regressions == [
        Regression(
            quest,
            [
                Fact(
                    "ratchet.excluded",
                    "a.py:18",
                    "no coverage exclusion added after PASS",
                    "excluded from coverage",
                    "line 18 newly excluded from coverage [a.py::f, PASS since 2026-12-01T10:00:00Z]",
                ),
            ],
            False,
        )
    ]


def test_an_exclusion_moved_by_an_edit_above_or_below_it_is_no_regression() -> None:
    # Excluded at PASS: line 18 of lines 10-20 (8 from the top, 2 from the end).
    quest = _quest("f", excluded_lines=[18], first=10, last=20)
    shorter_docstring = _facts("f", start=10, first=10, last=16, excluded_lines=[14])
    code_added_below = _facts("f", start=10, first=10, last=25, excluded_lines=[18])
    for facts in (shorter_docstring, code_added_below):
        assert check_ratchet(_ratchet(quest), [facts]).regressions == []
    # At neither distance: new, even when the old exclusion went (a pragma moved).
    moved = _facts("f", start=10, first=10, last=20, excluded_lines=[15])
    assert _excluded_fields(check_ratchet(_ratchet(quest), [moved])) == ["a.py:15"]
    # One more than at PASS, each at one of the old distances: still a new one.
    more = _facts("f", start=10, first=10, last=26, excluded_lines=[18, 24])
    assert _excluded_fields(check_ratchet(_ratchet(quest), [more])) == ["a.py:24"]


def _excluded_fields(report: CheckReport) -> list[str]:
    return [
        fact.field
        for regression in report.regressions
        for fact in regression.facts
        if fact.check == "ratchet.excluded"
    ]


def test_a_function_left_without_statements_is_a_regression() -> None:
    quest = _quest("f")
    report = check_ratchet(_ratchet(quest), [_facts("f", statements=0)])
    assert report.regressions == [
        Regression(
            quest,
            [
                Fact(
                    "ratchet.empty",
                    "a.py:10",
                    "measurable statements",
                    "none left",
                    "the function has no measurable statement any more [a.py::f, PASS since 2026-12-01T10:00:00Z]",
                ),
            ],
            False,
        )
    ]


def test_no_statements_because_of_a_new_exclusion_is_told_once() -> None:
    quest = _quest("f")
    report = check_ratchet(_ratchet(quest), [_facts("f", statements=0, excluded_lines=[11])])
    assert [fact.check for fact in report.regressions[0].facts] == ["ratchet.excluded"]


def test_untracked_functions_with_statements_are_listed_sorted() -> None:
    report = check_ratchet(
        _ratchet(_quest("f")),
        [_facts("f"), _facts("zeta"), _facts("alpha"), _facts("empty", statements=0)],
    )
    assert report.untracked == ["a.py::alpha", "a.py::zeta"]
    assert report.checked == 1
