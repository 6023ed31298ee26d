"""`check --quest-base`: every PASS new or changed since the base, re-judged by the full gate.

Steps 1-3 reuse the check's own measurement; steps 4-5 run in one mutation child for all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from pytest_quest.app.context import Context
from pytest_quest.app.deep_checks import clean_search_path, fill_mutation_evidence, l1_checks
from pytest_quest.app.policy import given_keys
from pytest_quest.app.sandbox import enter_sandbox
from pytest_quest.app.submit import gather_evidence
from pytest_quest.core.gate import Evidence, GateResult, judge
from pytest_quest.core.model import Ratchet, Verdict
from pytest_quest.core.person_log import person_actions_since
from pytest_quest.core.rejudge import (
    Rejudged,
    RejudgeReport,
    Selected,
    policy_changes_since,
    rejudge_fact,
    select_rejudge,
    trusted_entry,
)
from pytest_quest.core.run import RunReport
from pytest_quest.core.seal import seal_facts
from pytest_quest.engine.base import Base, base_from_file, base_from_ref, default_ref
from pytest_quest.engine.measure import MeasuredSource
from pytest_quest.engine.mutation import Target, run_mutation_checks


@dataclass(frozen=True)
class RejudgePolicy:
    """How hard the re-judge is: the gate policy recorded in the BASE ratchet."""

    mutants: bool
    timeout: float
    # The recorded mutation operators (None: the planner's default set).
    operators: tuple[str, ...] | None = None
    # Gate step 4's rule (core/policy.py `MUTANT_RULES`) when `mutants`.
    rule: str = "on"


def base_policy(base: Ratchet, ctx: Context) -> RejudgePolicy:
    """The gate policy to re-judge under: the one recorded in the BASE ratchet.

    The current file's policy may have been edited on the branch, and so may
    the ini: this run's options can only tighten the base's policy (mutants
    on, a longer timeout), never weaken it.  A base that records no policy
    (written before policies were) falls back to this run's options.
    """
    recorded = base.policy
    if recorded is None:
        return RejudgePolicy(mutants=ctx.options.mutants, timeout=ctx.options.timeout)
    given = given_keys(ctx.options)
    return RejudgePolicy(
        mutants=recorded.checks_mutants or ("mutants" in given and ctx.options.mutants),
        rule=(
            "strict"
            if recorded.mutants == "strict"
            or ("mutants" in given and ctx.options.mutants_rule == "strict")
            else "on"
        ),
        timeout=max(
            recorded.timeout_floor, ctx.options.timeout if "timeout_floor" in given else 0.0
        ),
        operators=tuple(recorded.operators),
    )


def load_base(ctx: Context) -> Base | None:
    """The base given (``--quest-base-file``, ``--quest-base``), or the pull request's base in CI."""
    options = ctx.options
    if options.base_file:
        path = Path(options.base_file)
        return base_from_file(path if path.is_absolute() else ctx.invocation_dir / path)
    ref = options.base_ref or default_ref(ctx.environ, ctx.rootdir)
    if ref is None:
        return None
    return base_from_ref(ref, options.quest_file)


def rejudge(ctx: Context, base: Base, ratchet: Ratchet, source: MeasuredSource) -> RejudgeReport:
    """Re-judge every PASS of `ratchet` new or changed since `base`; changes nothing."""
    started = time.monotonic()
    policy = base_policy(base.ratchet, ctx)
    # The base's policy: the branch's copy of the file may have been edited.
    enter_sandbox(ctx, base.ratchet.policy)
    before = base.ratchet if base.found else None
    actions = person_actions_since(ratchet, before) + policy_changes_since(ratchet, before)
    actions.sort(key=lambda action: (action.at, action.quest_id))
    report = RejudgeReport(base.source, base.found, person_actions=actions, mutants=policy.mutants)
    # The configuration the scan recorded, from the base (the branch's copy may be edited).
    config_from = base.ratchet if base.found else ratchet
    run = RunReport(outcomes=dict(ctx.run.outcomes))
    current = source.by_id()
    deep: list[tuple[Selected, Evidence]] = []
    for selected in select_rejudge(base.ratchet, ratchet):
        quest = trusted_entry(selected, actions)
        evidence = gather_evidence(
            ctx,
            quest,
            ratchet=config_from,
            run=run,
            source=source,
            current=current.get(quest.id),
        )
        result = judge(evidence)  # steps 1-3: nothing of steps 4-5 is filled in yet
        if result.verdict is Verdict.PASS and evidence.current is not None:
            deep.append((selected, evidence))
        else:
            report.results.append(_rejudged(selected, result))
    if deep:
        _deep_checks(ctx, policy, deep)
        for selected, evidence in deep:
            report.results.append(_rejudged(selected, judge(evidence)))
    order = {quest.id: index for index, quest in enumerate(ratchet.ordered())}
    report.results.sort(key=lambda result: order.get(result.id, 0))
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _deep_checks(
    ctx: Context, policy: RejudgePolicy, deep: list[tuple[Selected, Evidence]]
) -> None:
    """Steps 4 and 5 for every quest steps 1-3 passed: one child, like ``audit``."""
    runnable = []
    for selected, evidence in deep:
        evidence.extra_checks += seal_facts(evidence.quest)
        evidence.extra_checks += l1_checks(ctx, evidence)
        assert evidence.current is not None
        if evidence.current.covering_tests:
            runnable.append((selected, evidence))
        else:
            evidence.mutation_problem = "no passing test covers the function"
    if not runnable:
        return
    targets = [
        Target(
            ctx.rootdir / e.current.file,
            e.current.start,
            tuple(sorted(e.current.covering_tests)),
            operators=policy.operators,
        )
        for _, e in runnable
        if e.current is not None
    ]
    results = run_mutation_checks(
        targets,
        rootdir=ctx.rootdir,
        inifile=ctx.child.inifile,
        timeout=policy.timeout * len(targets),
        cwd=ctx.rootdir,
        plugin_args=ctx.child.plugin_args,
        mutants=policy.mutants,
        has_xdist=ctx.child.has_xdist,
        has_cov=ctx.child.has_cov,
        search_path=clean_search_path(ctx),
    )
    for (_, evidence), result in zip(runnable, results):
        evidence.mutants_rule = policy.rule
        fill_mutation_evidence(evidence, result, ctx.run.outcomes)


def _rejudged(selected: Selected, result: GateResult) -> Rejudged:
    return Rejudged(
        id=selected.quest.id,
        reason=selected.reason,
        verdict=result.verdict,
        step=result.step,
        facts=[rejudge_fact(result.step, fact, selected) for fact in result.facts],
    )
