"""A submit whose run could not complete for a reason outside the submission (core/environment.py).

No verdict and no try: the streak grows, and the quest is REVIEW at the policy's limit.
"""

from __future__ import annotations

from typing import Any

from pytest_quest.app.context import Context
from pytest_quest.core.environment import STREAK_KEY, record_environment_failure
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Quest, State, Verdict
from pytest_quest.core.run import RunReport


def outside_cause(run: RunReport, result: GateResult) -> bool:
    """The run could not complete for a reason outside the submission, and nothing else decided."""
    return bool(run.environment) and result.step == "environment"


def record_outside_failure(
    ctx: Context, target: Quest, run: RunReport, result: GateResult, now: str
) -> tuple[State, GateResult, dict[str, Any]]:
    """Record one more such run on `target`: its state, the result to show, what to say of it."""
    policy = ctx.options.policy
    limit = policy.environment_failures if policy is not None else 3
    streak = int(target.extra.get(STREAK_KEY, 0) or 0) + 1
    state = record_environment_failure(target, result, limit=limit, now=now)
    said = {
        "cause": run.environment,
        "output_tail": list(run.output_tail),
        "in_a_row": streak,
        "limit": limit,
    }
    if state is State.REVIEW:
        result = GateResult(Verdict.REVIEW, list(target.facts), "environment")
    return state, result, said


__all__ = ["outside_cause", "record_outside_failure"]
