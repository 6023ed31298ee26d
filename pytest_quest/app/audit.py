"""`pytest --quest audit`: the mutation check over every PASS quest; reports, changes nothing."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pytest_quest.app.context import Context, load_ratchet, measured
from pytest_quest.app.deep_checks import clean_search_path, fill_mutation_evidence
from pytest_quest.app.policy import passed_since, since_time
from pytest_quest.app.preflight import audit_inputs
from pytest_quest.app.sandbox import enter_sandbox
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import (
    Evidence,
    step_mutants,
    step_stable,
    step_tampered,
    step_unverified,
    unwitnessed_record,
)
from pytest_quest.core.model import Fact, FunctionFacts, Quest, Ratchet, State, Verdict
from pytest_quest.core.mutant_ast import change_text
from pytest_quest.core.run import RunReport
from pytest_quest.engine.mutation import MutationReport, Target
from pytest_quest.engine.mutation_pool import run_mutation_checks_across
from pytest_quest.report.json import Output
from pytest_quest.report.text import counted


@dataclass
class AuditFinding:
    id: str
    facts: list[Fact]
    problem: str = ""
    mutants: int = 0
    seconds: float = 0.0
    # Mutants survived (the gate's FAIL); otherwise the check could not confirm.
    survived: bool = False


@dataclass
class AuditReport:
    audited: list[str] = field(default_factory=list)
    findings: list[AuditFinding] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    # Per quest, its survivors no call tells apart (core/gate.py `unwitnessed_record`):
    # not findings, listed for a person to read.
    unwitnessed: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # Where the mutation check's time went: its wall seconds, the children
    # run at once, and seconds per phase summed over the functions.
    timing: dict[str, Any] = field(default_factory=dict)


def audit(ctx: Context) -> Output:
    """The findings of the audit; exit status 0 whatever is found.

    The audit reports on PASS quests, which stay PASS (the gate's PASS is
    immutable); CI that wants to fail on findings reads ``findings`` from the
    JSON output.
    """
    if not ctx.options.mutants:
        raise QuestUsageError(
            "audit is the mutation check, and --quest-mutants is off: drop "
            "--quest-mutants off (or the quest_mutants ini option) to audit"
        )
    inputs = ctx.run.inputs or audit_inputs(ctx)
    ratchet = inputs.ratchet or load_ratchet(ctx)
    enter_sandbox(ctx, ratchet.policy)
    source = measured(ctx)
    report = audit_functions(ctx, ratchet, source.functions, source.line_tests)
    data = {
        "audited": report.audited,
        "findings": [
            {
                "id": finding.id,
                "facts": [fact.to_dict() for fact in finding.facts],
                "problem": finding.problem,
                "survived": finding.survived,
                "mutants": finding.mutants,
                "seconds": finding.seconds,
            }
            for finding in report.findings
        ],
        "skipped": report.skipped,
        "unwitnessed": report.unwitnessed,
        "timing": report.timing,
        "counts": ratchet.counts(),
        "remaining": ratchet.remaining,
    }
    lines = audit_lines(report)
    return Output(data, lines, 0)


def audit_lines(report: AuditReport) -> list[str]:
    """The survivors first, one line each, then every finding's facts, then what was skipped."""
    survived = [f for f in report.findings if f.survived]
    unconfirmed = [f for f in report.findings if not f.survived]
    lines = [
        f"audit: {counted(len(report.audited), 'PASS function')} checked, "
        f"{len(survived)} run without being checked, {len(unconfirmed)} could not be confirmed"
    ]
    for finding in survived:
        at = _survivor_lines(finding)
        where = ", ".join(str(line) for line in at)
        lines.append(
            f"  survived: {finding.id}: {counted(len(finding.facts), 'mutant')} at "
            f"{'line' if len(at) == 1 else 'lines'} {where}"
        )
    for finding in unconfirmed:
        first = finding.facts[0].message if finding.facts else finding.problem
        first = first.removeprefix("could not confirm: ")
        more = f" (and {len(finding.facts) - 1} more)" if len(finding.facts) > 1 else ""
        lines.append(f"  could not confirm: {finding.id}: {first}{more}")
    if report.findings:
        lines.append("details:")
    for finding in report.findings:
        lines.append(f"  {finding.id}:")
        lines += [f"    {fact.text()}" for fact in finding.facts]
    for quest_id, found in sorted(report.unwitnessed.items()):
        lines += [
            f"  {quest_id}: unwitnessed (no call tells it apart): {m['file']}:{m['line']}: "
            f"{change_text(str(m['original']), str(m['mutated']))} "
            f"(operator {m['operator']}, mutant {m['id']})"
            for m in found
        ]
    for quest_id, why in sorted(report.skipped.items()):
        lines.append(f"  skipped {quest_id}: {why}")
    lines.append("the audit changes no state: PASS quests stay PASS")
    return lines


def _survivor_lines(finding: AuditFinding) -> list[int]:
    """The lines of `finding`'s surviving mutants, from its facts' ``path:line`` fields."""
    found = {
        int(line) for line in (f.field.rpartition(":")[2] for f in finding.facts) if line.isdigit()
    }
    return sorted(found)


def audit_functions(
    ctx: Context,
    ratchet: Ratchet,
    functions: list[FunctionFacts],
    line_tests: dict[str, dict[int, set[str]]] | None = None,
) -> AuditReport:
    """The mutation check over every PASS function (baseline or submitted); changes nothing.

    ``--quest-since`` limits it to the quests that passed since a date or a git ref's commit.
    """
    current = {facts.quest_id: facts for facts in functions}
    report = AuditReport()
    chosen: list[tuple[Quest, FunctionFacts]] = []
    since = since_time(ctx.options.since, ctx.rootdir) if ctx.options.since else None
    for quest in ratchet.ordered():
        if quest.state is not State.PASS:
            continue
        if since is not None and not passed_since(quest.passed_at, since):
            continue
        function = current.get(quest.id)
        if function is None:
            report.skipped[quest.id] = "not found in the current code"
        elif not function.covering_tests:
            report.skipped[quest.id] = "no passing test executes it now"
        else:
            chosen.append((quest, function))
    if not chosen:
        return report
    # One child for every function (one pytest start, one collection), or
    # one per worker with -n.  The timeout is per function, as a submit's is per gate run.
    started = time.monotonic()
    described = f"audit: mutants of {counted(len(chosen), 'PASS function')}"
    with ctx.progress(described, len(chosen)) as progress:
        results = _audit_children(ctx, ratchet, chosen, line_tests, progress.advance)
    phases: dict[str, float] = {}
    for result in results:
        for name, seconds in result.phases.items():
            phases[name] = phases.get(name, 0.0) + seconds
    report.timing = {
        "seconds": round(time.monotonic() - started, 3),
        "children": min(ctx.child.workers, len(chosen)),
        "phases": {name: round(seconds, 3) for name, seconds in sorted(phases.items())},
    }
    for (quest, function), result in zip(chosen, results):
        report.audited.append(quest.id)
        evidence = Evidence(quest=quest, current=function, run=RunReport())
        if ratchet.policy is not None and ratchet.policy.mutants == "strict":
            evidence.mutants_rule = "strict"
        # The covering tests are every test of the measured suite that runs it.
        fill_mutation_evidence(evidence, result, None, whole_suite=True)
        unwitnessed = [
            {"file": function.file, **unwitnessed_record(m)} for m in evidence.unwitnessed_mutants()
        ]
        if unwitnessed:
            report.unwitnessed[quest.id] = unwitnessed
        decided = (
            step_tampered(evidence)
            or step_mutants(evidence)
            or step_stable(evidence)
            or step_unverified(evidence)
        )
        if decided is not None:
            report.findings.append(
                AuditFinding(
                    id=quest.id,
                    facts=decided.facts,
                    problem=evidence.mutation_problem,
                    mutants=len(result.mutants),
                    seconds=round(result.duration, 3),
                    survived=decided.verdict is Verdict.FAIL,
                )
            )
    return report


def _audit_children(
    ctx: Context,
    ratchet: Ratchet,
    chosen: list[tuple[Quest, FunctionFacts]],
    line_tests: dict[str, dict[int, set[str]]] | None,
    done: Callable[[int], None],
) -> list[MutationReport]:
    """The mutation check of the `chosen` functions in the children; `done` hears each child end."""
    return run_mutation_checks_across(
        [
            Target(
                ctx.rootdir / f.file,
                f.start,
                tuple(sorted(f.covering_tests)),
                f.quest_id,
                None if ratchet.policy is None else tuple(ratchet.policy.operators),
                line_tests=_span((line_tests or {}).get(f.file, {}), f),
                confirm_kills=False,
                test_seconds=_seconds(ctx.run.seconds, f.covering_tests),
            )
            for _, f in chosen
        ],
        ctx.child.workers,
        rootdir=ctx.rootdir,
        inifile=ctx.child.inifile,
        timeout=ctx.options.timeout,
        cwd=ctx.rootdir,
        plugin_args=ctx.child.plugin_args,
        mutants=True,
        has_xdist=ctx.child.has_xdist,
        has_cov=ctx.child.has_cov,
        done=done,
        search_path=clean_search_path(ctx),
    )


def _seconds(seconds: dict[str, float], tests: Iterable[str]) -> float | None:
    """The tests' own time in the measuring run, summed; None when one was not timed."""
    try:
        return sum(seconds[test] for test in tests)
    except KeyError:
        return None


def _span(by_line: dict[int, set[str]], function: FunctionFacts) -> dict[int, set[str]]:
    """The per-line tests of `function`'s own lines (each mutant runs against its statement's)."""
    return {
        line: tests for line, tests in by_line.items() if function.first <= line <= function.last
    }
