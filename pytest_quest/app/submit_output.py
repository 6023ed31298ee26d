"""What `pytest --quest submit` says: the verdict, the quest as recorded, what to do next."""

from __future__ import annotations

from typing import Any

from pytest_quest.app.context import Context
from pytest_quest.core.environment import ENVIRONMENT_EXIT
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Ratchet, State
from pytest_quest.core.words import counted
from pytest_quest.engine import sandbox
from pytest_quest.report import text
from pytest_quest.report.json import Output, quest_json

#: The `verdict` of a submit that recorded none (the run could not complete
#: for reasons outside the submission: core/environment.py).
NO_VERDICT = "NONE"


def said(
    ctx: Context,
    quest_id: str,
    result: GateResult,
    state: State,
    ratchet: Ratchet,
    *,
    environment: dict[str, Any] | None = None,
) -> Output:
    """The verdict, the quest as recorded, and the next quest once this one is settled.

    `environment` (cause, output tail, count in a row, limit): the run could
    not complete for reasons outside the submission and no verdict was
    recorded, unless the limit made the quest REVIEW.
    """
    max_tries = ctx.options.max_tries
    judged = ratchet.quests[quest_id]
    no_verdict = environment is not None and state is State.TODO
    verdict = NO_VERDICT if no_verdict else result.verdict.value
    data: dict[str, Any] = {
        "verdict": verdict,
        "step": result.step,
        "remaining": ratchet.remaining,
        "done": ratchet.remaining == 0,
        "counts": ratchet.counts(),
        "quest": quest_json(judged, ratchet, max_tries=max_tries, rootdir=ctx.rootdir),
        "next_quest": None,
        # The kernel sandbox the judged runs started in ("none": unsandboxed).
        "sandbox": sandbox.active_name(),
    }
    if environment is not None:
        data["environment"] = environment
    if no_verdict:
        assert environment is not None
        lines = [
            f"NO VERDICT: {quest_id} stays {state.value} (tries {judged.tries}/{max_tries}, "
            "none spent): the run could not complete for a reason outside the submission",
            f"  cause: {environment['cause']}",
            f"  {counted(environment['in_a_row'], 'such run')} in a row; REVIEW at {environment['limit']}",
        ]
        if environment["output_tail"]:
            lines.append("  last lines of the run's output:")
            lines += [f"    {line}" for line in environment["output_tail"]]
    else:
        headline = f"{verdict}: {quest_id} is now {state.value} (tries {judged.tries}/{max_tries})"
        if state is State.DONE:
            headline += ": no try left, the quest is closed; nothing remains to do for it"
        lines = [headline]
        lines += text.facts_text(result.facts)
        if judged.unwitnessed and state is State.PASS:
            # Not held against the tests; a test that tells one apart is still better.
            lines.append(
                f"  {counted(len(judged.unwitnessed), 'surviving mutant')} no call told apart "
                "(unwitnessed, not held against the tests): `pytest --quest-status` lists them"
            )
    lines.append(sandbox_line(sandbox.active_name()))
    nxt = ratchet.quests.get(ratchet.active) if ratchet.active else None
    if state.terminal and nxt is not None:
        data["next_quest"] = quest_json(nxt, ratchet, max_tries=max_tries, rootdir=ctx.rootdir)
        lines.append("next quest:")
        lines += text.quest_text(nxt, max_tries, data["next_quest"])
    elif state is State.TODO:
        lines.append(f"submit again: {text.submit_command(quest_id)}")
    lines.append(text.progress_line(ratchet))
    data["closed"] = state.terminal and not no_verdict
    data["summary"] = lines[0]
    exitcode = 1 if state is State.TODO else 0
    if no_verdict:
        exitcode = ENVIRONMENT_EXIT
    return Output(data, lines, exitcode)


def sandbox_line(engine: str) -> str:
    """What the submit says of the sandbox its judged runs started in."""
    if engine == sandbox.UNSANDBOXED:
        return (
            "judged unsandboxed (policy sandbox=off): only the judge's own detection "
            "stood between the tests and the judge"
        )
    return f"judged in the {engine} sandbox"
