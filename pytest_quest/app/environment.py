"""A submit whose run could not complete for a reason outside the submission (core/environment.py).

No verdict and no try: the streak grows, and the quest is REVIEW at the policy's limit.
The same rule for every gate child: the measuring run and the mutation child.
"""

from __future__ import annotations

from typing import Any

from pytest_quest.app.context import Context
from pytest_quest.core.environment import (
    BEGUN_KEY,
    STREAK_KEY,
    begin_run,
    record_environment_failure,
)
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Quest, Ratchet, State, Verdict
from pytest_quest.core.run import RunReport
from pytest_quest.engine.active import set_quest_extra
from pytest_quest.engine.mutation import MutationReport


def outside_cause(
    run: RunReport, result: GateResult, mutation: MutationReport | None = None
) -> tuple[str, list[str]]:
    """Why a gate child could not complete for a reason outside the submission, and its output tail.

    ("", []) unless that, and nothing else, decided `result`.
    """
    if result.step != "environment":
        return "", []
    if run.environment:
        return run.environment, list(run.output_tail)
    if mutation is not None and mutation.environment:
        return mutation.environment, list(mutation.output_tail)
    return "", []


def limit_of(ctx: Context) -> int:
    """The policy's ``environment_failures``: runs in a row with no verdict before REVIEW."""
    policy = ctx.options.policy
    return policy.environment_failures if policy is not None else 3


def begin_submit(
    ctx: Context, quest_id: str, now: str
) -> tuple[Ratchet, Quest, tuple[GateResult, dict[str, Any]] | None]:
    """Write ahead that a submit of `quest_id` began, before any child starts (core/environment.py).

    Returns the ratchet as written, the quest in it, and, when an earlier
    submit that recorded nothing made the quest REVIEW, the result and what
    to say of it (the submit then runs nothing).
    """
    seen = ctx.store.seen[1].quests.get(quest_id) if ctx.store.seen is not None else None
    if seen is not None and BEGUN_KEY not in seen.extra:
        # The usual case, no earlier run to count: the quest's line alone (engine/active.py).
        fast = set_quest_extra(ctx.store, quest_id, BEGUN_KEY, now)
        if fast is not None:
            ctx.store.marks += 1
            return fast, fast.quests[quest_id], None
    limit = limit_of(ctx)
    stopped: list[tuple[GateResult, dict[str, Any]]] = []

    def change(fresh: Ratchet) -> Ratchet:
        target = fresh.quests.get(quest_id)
        if target is None:
            raise QuestUsageError(f"quest {quest_id} vanished from the ratchet file")
        streak = int(target.extra.get(STREAK_KEY, 0) or 0) + 1
        state, earlier = begin_run(target, limit=limit, now=now)
        if state is State.REVIEW and earlier is not None:
            said = {"cause": earlier.facts[0].actual, "output_tail": [], "in_a_row": streak}
            said["limit"] = limit
            stopped.append((GateResult(Verdict.REVIEW, list(target.facts), "environment"), said))
        return fresh

    written = ctx.store.update(change)
    ctx.store.marks += 1
    return written, written.quests[quest_id], stopped[0] if stopped else None


def interrupted_done(writes: int, marks: int) -> str:
    """What an interrupted command recorded, from its store's `writes` and begun `marks`."""
    if writes > marks:
        return "the ratchet file was already written"
    if marks:
        return (
            "no verdict was recorded and no try spent (it counts as a run stopped from "
            "outside: the policy's environment_failures such runs in a row make the quest REVIEW)"
        )
    return "nothing was recorded"


def record_outside_failure(
    ctx: Context, target: Quest, cause: tuple[str, list[str]], result: GateResult, now: str
) -> tuple[State, GateResult, dict[str, Any]]:
    """Record one more such run on `target`: its state, the result to show, what to say of it."""
    limit = limit_of(ctx)
    streak = int(target.extra.get(STREAK_KEY, 0) or 0) + 1
    state = record_environment_failure(target, result, limit=limit, now=now)
    said = {
        "cause": cause[0],
        "output_tail": list(cause[1]),
        "in_a_row": streak,
        "limit": limit,
    }
    if state is State.REVIEW:
        result = GateResult(Verdict.REVIEW, list(target.facts), "environment")
    return state, result, said
