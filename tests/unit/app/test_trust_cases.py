"""app/trust.py: a kill not confirmed in a fresh process, and tests that did not run the
original function in the mutation run."""

from __future__ import annotations

from pytest_quest.app.trust import _unconfirmed_fact, disagreement_facts
from pytest_quest.core.kills import IMPORTED_BEFORE_SIGN
from pytest_quest.core.model import Fact, FunctionFacts
from pytest_quest.engine.mutation import MutationReport

FUNCTION = FunctionFacts(
    file="src/m.py",
    qualname="Box.size",
    ordinal=1,
    start=10,
    first=10,
    last=14,
    fingerprint="sha256:x",
    statements=3,
    branches=0,
    excluded_lines=[13],
    covering_tests=["t::a", "t::b", "t::c"],
)


def test_unconfirmed_fact_of_a_kill_computed_from_the_function() -> None:
    assert _unconfirmed_fact("t::a", "it passed in a fresh process", FUNCTION) == Fact(
        check="mutation.kill_unconfirmed",
        field="t::a",
        expected="the test fails with the mutant in place from the start of a process",
        actual="it passed in a fresh process",
        message=(
            "could not confirm: t::a: it passed in a fresh process; its expected values may "
            "come from Box.size itself (computed at import, in parametrize, or on an earlier "
            "run), which no mutant can change"
        ),
    )


def test_unconfirmed_fact_of_a_module_imported_before() -> None:
    why = f"x {IMPORTED_BEFORE_SIGN} y"
    fact = _unconfirmed_fact("t::a", why, FUNCTION)
    assert fact.message == f"could not confirm: t::a: {why}; a person reviews it"
    assert fact.actual == why


def _report(**fields: object) -> MutationReport:
    report = MutationReport(probed=True, runs=[{"t::a": "passed", "t::b": "passed"}])
    for key, value in fields.items():
        setattr(report, key, value)
    return report


def test_disagreement_facts_none_without_a_probe_or_runs() -> None:
    assert disagreement_facts(_report(probed=False, mutants=[]), FUNCTION) == []
    assert disagreement_facts(_report(runs=[], mutants=[]), FUNCTION) == []


def test_disagreement_facts_none_when_every_mutant_was_judged() -> None:
    mutants = [{"line": 11, "status": "killed"}, {"line": 12, "status": "survived"}]
    assert disagreement_facts(_report(mutants=mutants), FUNCTION) == []


def test_disagreement_facts_name_stable_tests_that_did_not_reach_the_original() -> None:
    mutants = [{"line": 11, "status": "killed"}, {"line": 12, "status": "unreached"}]
    report = _report(
        mutants=mutants,
        original_reached=["t::a"],
        runs=[{"t::a": "passed", "t::b": "passed", "t::c": "failed"}],
    )
    assert disagreement_facts(report, FUNCTION) == [
        Fact(
            check="evidence.disagree",
            field="t::b",
            expected="the test runs the function in the mutation run, as in the measuring run",
            actual="it did not run the original function in the mutation run",
            message=(
                "could not confirm: t::b ran Box.size in the measuring run "
                "but not in the mutation run"
            ),
        )
    ]


def test_disagreement_facts_leave_excluded_lines_out() -> None:
    mutants = [{"line": 11, "status": "killed"}, {"line": "13", "status": "unreached"}]
    assert disagreement_facts(_report(mutants=mutants), FUNCTION) == []


def test_disagreement_facts_with_no_mutant_judged() -> None:
    report = _report(mutants=[{"line": 13, "status": "killed"}], original_reached=["t::a"])
    assert [fact.field for fact in disagreement_facts(report, FUNCTION)] == ["t::b"]
