"""The mutation report's cross-checks (app/trust.py) and the child's crediting of mutants."""

from __future__ import annotations

from pytest_quest.app.trust import unverified_facts
from pytest_quest.core.model import FunctionFacts
from pytest_quest.engine.mutation import MutationReport
from pytest_quest.plugin.mutation_child import PROBES, _credit, _schedule

FUNCTION = FunctionFacts(
    file="src/pkg/calc.py",
    qualname="level",
    ordinal=0,
    start=1,
    first=1,
    last=4,
    fingerprint="x",
    statements=3,
    branches=2,
    excluded_lines=[9],
    covering_tests=["t::a", "t::b"],
)


def mutant(status: str, line: int = 2, **extra: object) -> dict[str, object]:
    return {
        "line": line,
        "original": "if x > 10:",
        "mutated": "if True:",
        "status": status,
        **extra,
    }


def test_the_schedule_holds_every_mutant_and_the_probes_and_is_reproducible() -> None:
    order = _schedule(5, "src/pkg/calc.py::level")
    assert sorted(i for i in order if i is not None) == list(range(5))
    assert order.count(None) == PROBES
    assert order == _schedule(5, "src/pkg/calc.py::level")


def test_a_kill_or_survival_counts_only_by_a_test_that_ran_mutant_and_original() -> None:
    entry = mutant("killed", killed_by="t::a", reached_by=["t::a"])
    _credit(entry, {"t::a"})
    assert entry["status"] == "killed"
    entry = mutant("killed", killed_by="t::a", reached_by=[])
    _credit(entry, {"t::a"})
    assert entry["status"] == "unreached"
    entry = mutant("survived", killed_by="", reached_by=["t::b"])
    _credit(entry, {"t::a"})
    assert entry["status"] == "unreached"


def test_not_applied_unreached_detects_run_and_disagreement_are_facts() -> None:
    report = MutationReport(
        runs=[{"t::a": "passed", "t::b": "passed"}] * 2,
        mutants=[
            mutant("not_applied", reason="renamed"),
            mutant("unreached", line=3),
            mutant("unreached", line=9),  # excluded from coverage: not required
            mutant("killed"),
        ],
        original_reached=["t::a"],
        detects_run=["t::a"],
        own_copy={"t::a": "compiled src/pkg/calc.py"},
        kill_unconfirmed={"t::a": "it passed in a fresh process"},
        kill_outside={"t::a": "mutant m1 `x > 0` -> `x >= 0`"},
        stale_reads={"t::a": "read /p/golden.json, a file an earlier run created"},
        probed=True,
    )
    facts = unverified_facts(report, FUNCTION)
    assert [(f.check, f.field) for f in facts] == [
        ("mutation.not_applied", "src/pkg/calc.py:2"),
        ("mutation.unreached", "src/pkg/calc.py:3"),
        ("mutation.detects_run", "t::a"),
        ("mutation.own_copy", "t::a"),
        ("mutation.kill_unconfirmed", "t::a"),
        ("mutation.kill_outside", "t::a"),
        ("mutation.stale_read", "t::a"),
        ("evidence.disagree", "t::b"),
    ]
    assert "compiled src/pkg/calc.py" in facts[3].actual
    assert facts[4].actual == "it passed in a fresh process"
    assert "mutant m1 `x > 0` -> `x >= 0`" in facts[5].message


def test_an_honest_report_has_no_fact() -> None:
    report = MutationReport(
        runs=[{"t::a": "passed", "t::b": "passed"}] * 2,
        mutants=[mutant("killed"), mutant("survived")],
        original_reached=["t::a", "t::b"],
        probed=True,
    )
    assert unverified_facts(report, FUNCTION) == []


def test_a_test_that_did_not_reach_the_function_is_named_only_when_a_mutant_went_unrun() -> None:
    """A test that reached the function once per process only (a module its body imports
    for the first time) cannot reach it again in the mutation run: when every mutant was
    run by tests that also ran the original, the verdict rests on those, and it is not named."""

    def disagreeing(*mutants: dict[str, object]) -> list[str]:
        report = MutationReport(
            runs=[{"t::a": "passed", "t::b": "passed"}] * 2,
            mutants=list(mutants),
            original_reached=["t::a"],
            probed=True,
        )
        return [
            f.field for f in unverified_facts(report, FUNCTION) if f.check == "evidence.disagree"
        ]

    assert disagreeing(mutant("killed"), mutant("survived", line=3)) == []
    assert disagreeing(mutant("killed"), mutant("unreached", line=3)) == ["t::b"]
    assert disagreeing(mutant("killed"), mutant("unreached", line=9)) == []  # excluded line
    assert disagreeing(mutant("killed"), mutant("not_applied", line=3)) == ["t::b"]
    assert disagreeing() == ["t::b"]  # no mutant: nothing else vouches for the function
