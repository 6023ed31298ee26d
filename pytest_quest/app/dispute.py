"""`pytest --quest submit --quest-dispute ID --quest-reason WHY`: a surviving mutant disputed.

A submit in the clean judge that never yields PASS: the gate runs as for a
submit, then, when it fails only on disputed mutants, each runs against every
test of the whole suite that reaches the function.  Killed or seen to behave
otherwise: FAIL ``dispute.refused`` (a try); survived: REVIEW
``dispute.equivalent`` for a person.  Details: docs/gate.md, "Disputing a mutant".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from pytest_quest.app.context import Context
from pytest_quest.app.deep_checks import clean_search_path, planned_operators
from pytest_quest.app.submit import Judgement, judge_quest, run_selection, submit
from pytest_quest.core import dispute
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, FunctionFacts, Quest, Ratchet, Verdict, arc_text
from pytest_quest.core.mutants import plan_mutants
from pytest_quest.engine.mutation import MutationReport, run_mutation_check
from pytest_quest.engine.source import facts_from_source, read_source
from pytest_quest.engine.testfiles import digest_test_files
from pytest_quest.report.json import Output
from pytest_quest.verify import equivalence
from pytest_quest.verify.adapters import Verifier
from pytest_quest.verify.prompt import build_request
from pytest_quest.verify.vote import excluded_by


def submit_or_dispute(ctx: Context) -> Output:
    """`pytest --quest submit`, a dispute when ``--quest-dispute`` is given."""
    if not ctx.options.dispute:
        return submit(ctx)
    if dispute.parse_spots(ctx.options.dispute) is not None:
        return submit(ctx, judging=_spots_judge)
    return submit(ctx, judging=_dispute_judge)


def _spots_judge(ctx: Context, quest: Quest) -> Callable[..., Judgement]:
    spots = check_spots(ctx, quest)
    return lambda c, q, r, verifiers: judge_unreachable(c, q, r, spots)


def check_spots(ctx: Context, quest: Quest) -> list[dispute.Spot]:
    """The disputed lines and branches, each inside the quest's function; else a usage error."""
    spots = dispute.parse_spots(ctx.options.dispute or "") or []
    if not (ctx.options.reason or "").strip():
        raise QuestUsageError(
            "--quest-dispute needs --quest-reason: why no input can reach the line "
            "(a person reads it)"
        )
    for spot in spots:
        if spot.path is not None and spot.path != quest.file:
            raise QuestUsageError(
                f"{spot.path}:{spot.line} is not in the file of {quest.id} ({quest.file})"
            )
        inside = [n for n in (spot.line, spot.end) if n is not None and n > 0]
        if any(not quest.first <= n <= quest.last for n in inside):
            raise QuestUsageError(
                f"{spot.text()} is not in {quest.id} (lines {quest.first}-{quest.last})"
            )
    return spots


def judge_unreachable(
    ctx: Context, quest: Quest, ratchet: Ratchet, spots: list[dispute.Spot]
) -> Judgement:
    """Lines or branches said to be unreachable: the whole suite must not reach them. Never PASS.

    docs/gate.md, "Disputing an unreachable line or branch".
    """
    ctx.options = dataclasses.replace(ctx.options, verify="off")
    judgement = judge_quest(
        ctx, quest, ratchet, [], assume=lambda facts: dispute.assumed_reached(facts, spots)
    )
    result, current = judgement.result, judgement.current
    if current is None:
        return judgement
    disputed = {f"{quest.file}:{_spot_field(spot)}" for spot in spots}
    others = [
        f for f in result.facts if not (f.check.startswith("coverage.") and f.field in disputed)
    ]
    reached_now = [s for s in spots if not _missing(s, current)]
    if result.verdict is Verdict.FAIL and others and not reached_now:
        why = f"the gate's verdict is {result.verdict.value} at step {result.step} for more than the disputed code"
        judgement.result = GateResult(
            result.verdict, [*result.facts, dispute.not_judged_fact(quest.id, why)], result.step
        )
        return judgement
    tests = sorted(digest_test_files(ctx.tests, ctx.rootdir))
    run, source = run_selection(ctx, tests, quest)
    whole = source.by_id().get(quest.id) if source else None
    if run.environment:
        judgement.run = run  # no verdict, as for a submit (core/environment.py)
        judgement.result = outside(quest, run.problem)
        return judgement
    if not run.completed or source is None or whole is None:
        why = run.problem or "the whole suite's run did not measure the function"
        judgement.result = GateResult(
            Verdict.REVIEW, [dispute.unconfirmed_fact(quest.id, why)], dispute.STEP
        )
        return judgement
    refused = [
        dispute.reached_fact(quest.file, spot, _reaching(spot, whole, run.failed))
        for spot in spots
        if spot in reached_now or not _missing(spot, whole)
    ]
    if refused:
        kept = [f for f in others if not f.check.startswith("mutation.")]
        judgement.result = GateResult(Verdict.FAIL, [*refused, *kept], dispute.STEP)
        return judgement
    reason = ctx.options.reason or ""
    facts = [
        dispute.unreachable_fact(quest.file, spot, reason, len(run.outcomes)) for spot in spots
    ]
    # What else the gate could not confirm is the person's to see too; a mutant of a
    # disputed line that no test reached is the dispute's own evidence, not more.
    inside = {f"{quest.file}:{s.line if s.end is None else s.end}" for s in spots}
    facts += [
        f
        for f in others
        if result.verdict is Verdict.REVIEW
        and not (f.check == "mutation.unreached" and f.field in inside)
    ]
    judgement.result = GateResult(Verdict.REVIEW, facts, dispute.STEP)
    return judgement


def _spot_field(spot: dispute.Spot) -> str:
    return str(spot.line) if spot.end is None else arc_text((spot.line, spot.end))


def _missing(spot: dispute.Spot, current: FunctionFacts) -> bool:
    """Whether no passing test reached `spot` (nor a failing one: failing reach is reach)."""
    lines = [n for n in current.missing_lines if n not in current.failing_lines]
    arcs = [a for a in current.missing_branches if a not in current.failing_branches]
    return spot.missing_in(lines, arcs)


def _reaching(spot: dispute.Spot, whole: FunctionFacts, failed: set[str]) -> list[str]:
    """The tests that may have reached `spot`: those that ran the function, else those that failed.

    The child reports the tests per function, not per line: with one such
    test it is the one; with several, the fact says "among".
    """
    return sorted(whole.covering_tests) or sorted(failed) or ["a test of the suite"]


def _dispute_judge(ctx: Context, quest: Quest) -> Callable[..., Judgement]:
    ids = check_dispute(ctx, quest)
    return lambda c, q, r, verifiers: judge_dispute(c, q, r, ids, verifiers)


def check_dispute(ctx: Context, quest: Quest) -> tuple[str, ...]:
    """The disputed ids, each a mutant the gate plans for the quest now; else a usage error.

    Decided from the source alone, before any test runs.
    """
    ids = dispute.parse_ids(ctx.options.dispute or "")
    if not ids:
        raise QuestUsageError("--quest-dispute needs the id of a surviving mutant (m1a2b3c4d)")
    if not (ctx.options.reason or "").strip():
        raise QuestUsageError(
            "--quest-dispute needs --quest-reason: why no input can tell the mutant "
            "from the function (a person reads it)"
        )
    function = facts_from_source(quest.id, quest.file, ctx.rootdir, all_missing=False)
    source = read_source(ctx.rootdir / quest.file)
    planned = (
        {m.id for m in plan_mutants(source, function.start, planned_operators(ctx))}
        if function is not None
        else set()
    )
    unknown = [i for i in ids if i not in planned]
    if unknown:
        raise QuestUsageError(
            f"mutant {unknown[0]} is not a mutant of {quest.id} as its code is now "
            f"(its mutants: {', '.join(sorted(planned)) or 'none'})"
        )
    return ids


def judge_dispute(
    ctx: Context,
    quest: Quest,
    ratchet: Ratchet,
    ids: tuple[str, ...],
    verifiers: Sequence[Verifier] = (),
) -> Judgement:
    """The gate again, then the disputed mutants against the whole suite: never PASS."""
    # With verification on, the verifiers are asked about a REVIEW's mutants (below);
    # the submission's L2 is for a PASS, which a dispute never gives.
    verifying = ctx.options.verify == "on" and not excluded_by(quest, ctx.options.verify_exclude)
    ctx.options = dataclasses.replace(ctx.options, verify="off")
    judgement = judge_quest(ctx, quest, ratchet, [])
    result, report = judgement.result, judgement.mutation
    entries = {str(m.get("id")): m for m in (report.mutants if report else [])}
    killed = [entries[i] for i in ids if entries.get(i, {}).get("status") == "killed"]
    if killed:
        facts = [dispute.refused_fact(quest.file, m, whole_suite=False) for m in killed]
        judgement.result = GateResult(Verdict.FAIL, [*facts, *_kept(result)], dispute.STEP)
        return judgement
    seen = _seen(quest, ids, entries)
    if seen:
        judgement.result = GateResult(Verdict.FAIL, [*seen, *_kept(result)], dispute.STEP)
        return judgement
    if result.verdict is Verdict.PASS:
        # Not killed and yet PASS: the mutant was not run (a skipped plan).
        judgement.result = GateResult(
            Verdict.REVIEW,
            [dispute.unconfirmed_fact(quest.id, "the disputed mutant did not run")],
            dispute.STEP,
        )
        return judgement
    survivors = {str(m.get("id")) for m in (report.survivors() if report else [])}
    others = sorted(survivors - set(ids))
    if result.step != "4-mutants" or result.verdict is not Verdict.FAIL or others:
        why = (
            f"other mutants survive too ({', '.join(others)}); dispute them all or kill them"
            if others and result.step == "4-mutants"
            else f"the gate's verdict is {result.verdict.value} at step {result.step}"
        )
        judgement.result = GateResult(
            result.verdict, [*result.facts, dispute.not_judged_fact(quest.id, why)], result.step
        )
        return judgement
    judgement.result = whole_suite(ctx, quest, ids, judgement)
    if verifying and verifiers and judgement.current is not None:
        views(ctx, quest, judgement, [entries[i] for i in ids if i in entries], list(verifiers))
    return judgement


def views(
    ctx: Context,
    quest: Quest,
    judgement: Judgement,
    mutants: list[dict[str, Any]],
    verifiers: list[Verifier],
) -> None:
    """The verifiers' view on each mutant of a dispute's REVIEW, added as a fact (REVIEW stays)."""
    result, current = judgement.result, judgement.current
    assert current is not None
    if result.verdict is not Verdict.REVIEW or result.step != dispute.STEP:
        return
    disputed = {f.field for f in result.facts if f.check == "dispute.equivalent"}
    added: list[Fact] = []
    records = []
    for mutant in mutants:
        if f"{quest.file}:{mutant.get('line', 0)}" not in disputed:
            continue
        reached = [str(t) for t in mutant.get("reached_by") or current.covering_tests]
        request = build_request(
            rootdir=ctx.rootdir,
            quest=quest,
            current=current,
            covering_tests=sorted(reached)[: equivalence.TESTS_SHOWN],
            changed_files=[],
            questions=1,
        )
        reason = ctx.options.reason or ""
        verification = equivalence.ask(
            request,
            mutant,
            reason,
            verifiers,
            threshold=ctx.options.verify_threshold,
            rootdir=ctx.rootdir,
        )
        added.append(equivalence.equivalence_fact(quest.file, mutant, verification))
        records.append({"mutant": str(mutant.get("id", "")), **verification.record()})
    if added:
        judgement.result = GateResult(Verdict.REVIEW, [*result.facts, *added], result.step)
        judgement.verification = {"result": "equivalence", "equivalence": records}


def _seen(quest: Quest, ids: tuple[str, ...], entries: dict[str, dict[str, Any]]) -> list[Fact]:
    """Refusals of the disputed survivors seen returning or raising otherwise on a test's inputs."""
    found = (
        dispute.seen_fact(quest.file, entries[i])
        for i in ids
        if entries.get(i, {}).get("status") == "survived"
    )
    return [fact for fact in found if fact is not None]


def _kept(result: GateResult) -> list[Fact]:
    """The gate's own facts a refusal keeps (its other failures), without surviving mutants."""
    return [f for f in result.facts if not f.check.startswith("mutation.")]


def whole_suite(
    ctx: Context, quest: Quest, ids: tuple[str, ...], judgement: Judgement
) -> GateResult:
    """Step 2: the whole suite measured, the disputed mutants run against every test reaching it."""
    tests = sorted(digest_test_files(ctx.tests, ctx.rootdir))
    run, source = run_selection(ctx, tests, quest)
    current = source.by_id().get(quest.id) if source else None
    if run.environment:
        judgement.run = run  # no verdict, as for a submit (core/environment.py)
        return outside(quest, run.problem)
    if not run.completed or current is None or not current.covering_tests:
        why = run.problem or "the whole suite's run did not measure the function"
        return GateResult(Verdict.REVIEW, [dispute.unconfirmed_fact(quest.id, why)], dispute.STEP)
    report = run_mutation_check(
        sorted(current.covering_tests),
        file=ctx.rootdir / current.file,
        start=current.start,
        rootdir=ctx.rootdir,
        inifile=ctx.child.inifile,
        timeout=ctx.options.timeout,
        cwd=ctx.rootdir,
        plugin_args=ctx.child.plugin_args,
        has_xdist=ctx.child.has_xdist,
        has_cov=ctx.child.has_cov,
        seed=quest.id,
        operators=planned_operators(ctx),
        only=ids,
        subprocesses=ctx.options.policy.subprocesses if ctx.options.policy is not None else True,
        search_path=clean_search_path(ctx),
    )
    if judgement.mutation_seconds is not None:
        judgement.mutation_seconds = round(judgement.mutation_seconds + report.duration, 3)
    if report.environment:
        judgement.mutation = report
        return outside(quest, report.problem)
    # Step 1's run killed every other mutant (else the dispute stopped there): named to the person.
    step1 = judgement.mutation.mutants if judgement.mutation is not None else []
    others = [m for m in step1 if m.get("status") == "killed" and str(m.get("id")) not in ids]
    return decide(quest, ids, report, ctx.options.reason or "", others=others)


def outside(quest: Quest, problem: str) -> GateResult:
    """A whole-suite child ended from outside the submission: step ``environment``, no verdict."""
    fact = Fact(
        check="environment.outside",
        field=quest.id,
        expected="the dispute's whole-suite run completes",
        actual=problem,
        message=f"could not confirm: {problem}",
    )
    return GateResult(Verdict.REVIEW, [fact], "environment")


def decide(
    quest: Quest,
    ids: tuple[str, ...],
    report: MutationReport,
    reason: str,
    *,
    others: Sequence[dict[str, Any]] = (),
) -> GateResult:
    """The dispute's verdict from the whole suite's mutation report (pure).

    `others`: the function's other mutants, which the gate's run killed; a REVIEW names them.
    """
    if report.tampered or not report.completed:
        why = report.problem or "the mutation run did not complete"
        return GateResult(Verdict.REVIEW, [dispute.unconfirmed_fact(quest.id, why)], dispute.STEP)
    unstable = report.unstable()
    if unstable:
        why = f"tests of the suite are unstable: {', '.join(unstable[:3])}"
        return GateResult(Verdict.REVIEW, [dispute.unconfirmed_fact(quest.id, why)], dispute.STEP)
    entries: dict[str, dict[str, Any]] = {str(m.get("id")): m for m in report.mutants}
    killed = [entries[i] for i in ids if entries.get(i, {}).get("status") == "killed"]
    if killed:
        facts = [dispute.refused_fact(quest.file, m, whole_suite=True) for m in killed]
        return GateResult(Verdict.FAIL, facts, dispute.STEP)
    seen = _seen(quest, ids, entries)
    if seen:
        return GateResult(Verdict.FAIL, seen, dispute.STEP)
    facts = []
    for mutant_id in ids:
        entry = entries.get(mutant_id)
        if entry is None or entry.get("status") != "survived":
            status = "not run" if entry is None else str(entry.get("status"))
            facts.append(dispute.unconfirmed_fact(quest.id, f"mutant {mutant_id}: {status}"))
            continue
        tests = sorted(str(t) for t in entry.get("reached_by", []))
        facts.append(dispute.equivalent_fact(quest.file, entry, reason, tests, quest_id=quest.id))
    if any(f.check == "dispute.equivalent" for f in facts):
        facts.append(dispute.others_killed_fact(quest.id, list(others)))
    return GateResult(Verdict.REVIEW, facts, dispute.STEP)
