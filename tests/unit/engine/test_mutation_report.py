"""MutationReport: what the mutation child's runs say about the covering tests."""

from __future__ import annotations

from pytest_quest.engine.mutation import MutationReport


def test_a_test_absent_from_a_run_is_no_outcome_and_never_flaky() -> None:
    report = MutationReport(runs=[{"t::a": "passed", "t::b": "passed"}, {"t::a": "passed"}])
    assert report.unstable() == []
    assert report.unstable({"t::c": "passed"}) == []


def test_outcomes_observed_to_differ_are_flaky() -> None:
    report = MutationReport(runs=[{"t::a": "passed"}, {"t::a": "failed", "t::b": "passed"}])
    assert report.unstable() == ["t::a"]
    steady = MutationReport(runs=[{"t::b": "passed"}, {"t::b": "passed"}])
    assert steady.unstable({"t::b": "failed"}) == ["t::b"]
