"""Gate steps 4 (mutants) and 5 (stability) and the project's L1 hooks, for a submission steps 1-3 pass."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from pytest_quest.app.context import Context
from pytest_quest.app.trust import tampered_facts, unverified_facts
from pytest_quest.core.gate import Evidence
from pytest_quest.core.model import Fact, FunctionFacts, Verdict
from pytest_quest.core.observed import held_because, observed_text, witness_text
from pytest_quest.core.run import SurvivingMutant
from pytest_quest.core.seal import seal_facts
from pytest_quest.engine.clean_search import SearchPath
from pytest_quest.engine.mutation import MutationReport, run_mutation_check


def check_function(
    ctx: Context,
    function: FunctionFacts,
    nodeids: list[str],
    l1: dict[str, Any] | None = None,
    line_tests: dict[int, set[str]] | None = None,
) -> MutationReport:
    """Baseline twice, then every mutant of `function`, against `nodeids` (one child).

    With `l1`, the child also calls the project's L1 hooks on that evidence;
    with `line_tests`, each mutant runs against the tests that ran its statement.
    """
    return run_mutation_check(
        nodeids,
        file=ctx.rootdir / function.file,
        start=function.start,
        rootdir=ctx.rootdir,
        inifile=ctx.child.inifile,
        timeout=ctx.options.timeout,
        # Node ids are relative to the rootdir, whatever folder pytest was run from.
        cwd=ctx.rootdir,
        plugin_args=ctx.child.plugin_args,
        mutants=ctx.options.mutants,
        has_xdist=ctx.child.has_xdist,
        has_cov=ctx.child.has_cov,
        l1=l1,
        seed=function.quest_id,
        operators=planned_operators(ctx),
        subprocesses=ctx.options.policy.subprocesses if ctx.options.policy is not None else True,
        line_tests={
            line: tests
            for line, tests in (line_tests or {}).items()
            if function.first <= line <= function.last
        },
        search_path=clean_search_path(ctx),
        sources=list(ctx.options.sources),
    )


def clean_search_path(ctx: Context) -> SearchPath:
    """Where the clean witness search imports the code under test from, as the judge sees it.

    The ini file's ``pythonpath``, the rootdir and the parent of each source
    folder (the interpreter's own path follows); and the source folders, whose
    modules a seed's classes may come from.  Never what the mutation child reports.
    """
    sources = [Path(s).resolve() for s in ctx.options.sources]
    path = [*ctx.child.pythonpath, str(ctx.rootdir.resolve())]
    path += [str(source.parent) for source in sources]
    roots = sources or [ctx.rootdir.resolve()]
    return SearchPath(tuple(dict.fromkeys(path)), tuple(str(root) for root in roots))


def planned_operators(ctx: Context) -> tuple[str, ...] | None:
    """The mutation operators of the gate policy in force (None: the planner's default)."""
    policy = ctx.options.policy
    return None if policy is None else tuple(policy.operators)


def survivors(
    report: MutationReport, file: str, whole_suite: frozenset[str] | None = None
) -> list[SurvivingMutant]:
    """The surviving mutants as the gate's facts want them.

    `whole_suite`: the covering tests when they are every test of the suite
    that runs the function (audit): each survivor is then labelled possibly
    equivalent, with the tests that ran it (only those the judge knows).
    """
    found = []
    for m in report.survivors():
        reached = m.get("reached_by")
        tests = (
            tuple(sorted(t for t in reached if isinstance(t, str) and t in whole_suite))
            if whole_suite is not None and isinstance(reached, list)
            else ()
        )
        found.append(
            SurvivingMutant(
                file=file,
                line=int(m["line"]),
                original=str(m["original"]),
                mutated=str(m["mutated"]),
                operator=str(m["operator"]),
                mutant_id=str(m.get("id", "")),
                observed=observed_text(m.get("observed")),
                whole_suite=tests,
                witness=witness_text(m.get("search")),
                held_because=held_because(m.get("search")),
            )
        )
    return found


def fill_mutation_evidence(
    evidence: Evidence,
    report: MutationReport,
    first: dict[str, str] | None,
    *,
    whole_suite: bool = False,
) -> None:
    """What the mutation child found, into `evidence` (`first`: the gate run's outcomes).

    `whole_suite`: the function's covering tests are every test of the suite that runs it.
    """
    function = evidence.current
    assert function is not None
    if report.tampered:
        evidence.tampered = tampered_facts(report, evidence.quest.id)
        return
    if not report.completed:
        evidence.mutation_problem = report.problem
        evidence.mutation_environment = report.environment
        return
    evidence.unverified = unverified_facts(report, function)
    evidence.unstable_tests = report.unstable(first)
    evidence.unstable_outcomes = {
        name: report.outcomes_of(name, first) for name in evidence.unstable_tests
    }
    # A flaky test can kill a mutant by chance: with one, step 5 decides.
    evidence.surviving_mutants = (
        []
        if evidence.unstable_tests
        else survivors(
            report,
            function.file,
            frozenset(function.covering_tests) if whole_suite else None,
        )
    )
    if not evidence.unstable_tests and not report.passed_again():
        evidence.mutation_problem = "no covering test passed when run again"


def deep_checks(
    ctx: Context, evidence: Evidence, verify: dict[str, Any] | None = None
) -> MutationReport | None:
    """Steps 4 and 5 and the ``pytest_quest_l1_check`` hooks, filling `evidence` in place.

    Returns the mutation child's report (None when nothing could run).
    """
    function = evidence.current
    assert function is not None
    evidence.mutants_rule = ctx.options.mutants_rule
    tests = sorted(function.covering_tests)
    report = None
    if not tests:
        evidence.mutation_problem = "no covering test was recorded for the function"
    else:
        hooks = l1_evidence(ctx, evidence)
        if verify is not None:
            hooks["verify"] = verify  # the plugin verifiers are asked in the child too
        report = check_function(ctx, function, tests, hooks, evidence.line_tests)
        fill_mutation_evidence(evidence, report, evidence.run.outcomes)
    evidence.extra_checks += seal_facts(evidence.quest)
    evidence.extra_checks += l1_checks(ctx, evidence)
    if report is not None:
        evidence.extra_checks += child_l1_checks(report)
    return report


def l1_evidence(ctx: Context, evidence: Evidence) -> dict[str, Any]:
    """What the mutation child hands the project's L1 hooks (they run there, not in the judge)."""
    assert evidence.current is not None
    run = evidence.run
    return {
        "ratchet": str(ctx.store.path),
        "quest": evidence.quest.id,
        "function": asdict(evidence.current),
        "run": {
            "completed": run.completed,
            "problem": run.problem,
            "collection_errors": [asdict(e) for e in run.collection_errors],
            "outcomes": dict(run.outcomes),
            "duration": run.duration,
        },
    }


def child_l1_checks(report: MutationReport) -> list[tuple[Verdict, Fact]]:
    """The L1 hook results the mutation child returned: FAIL or REVIEW only (PASS adds nothing)."""
    found: list[tuple[Verdict, Fact]] = []
    for item in report.l1 or []:
        try:
            verdict = Verdict(item["verdict"])
            fact = Fact(**{k: str(v) for k, v in dict(item["fact"]).items()})
        except (KeyError, TypeError, ValueError):
            continue
        if verdict is not Verdict.PASS:
            found.append((verdict, fact))
    return found


def l1_checks(ctx: Context, evidence: Evidence) -> list[tuple[Verdict, Fact]]:
    """The project's own deterministic checks (``pytest_quest_l1_check``), FAIL or REVIEW only."""
    found: list[tuple[Verdict, Fact]] = []
    try:
        results = ctx.l1_check(quest=evidence.quest, function=evidence.current, run=evidence.run)
    except Exception as exc:
        return [
            (
                Verdict.REVIEW,
                Fact(
                    check="l1.error",
                    field=evidence.quest.id,
                    expected="the pytest_quest_l1_check hooks run",
                    actual=f"{type(exc).__name__}: {exc}",
                    message=f"could not confirm: an L1 check raised {type(exc).__name__}: {exc}",
                ),
            )
        ]
    for checks in results:
        for item in checks or []:
            verdict, fact = item
            if Verdict(verdict) is not Verdict.PASS:
                found.append((Verdict(verdict), fact))
    return found
