"""`pytest --quest next`: pick the quest to work on, make it the active one, show it."""

from __future__ import annotations

from typing import Any

from pytest_quest.app.context import Context, load_ratchet
from pytest_quest.app.options import suggest_quest_ids
from pytest_quest.app.since import load_changes, narrowed, since_data, since_line
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Quest, Ratchet, State
from pytest_quest.engine.active import set_active
from pytest_quest.report import text
from pytest_quest.report.json import Output, quest_json


def pick(ratchet: Ratchet, quest_id: str | None) -> Quest | None:
    """The quest `next`/`submit` act on: `quest_id`, else the active one, else the next TODO."""
    if quest_id:
        quest = ratchet.quests.get(quest_id)
        if quest is None:
            raise QuestUsageError(
                f"unknown quest id {quest_id!r}; "
                "`pytest --quest-status --quest-format json` lists them"
                + suggest_quest_ids(quest_id, ratchet.quests)
            )
        return quest
    if ratchet.active and ratchet.active in ratchet.quests:
        active = ratchet.quests[ratchet.active]
        if active.state is State.TODO:
            return active
    return ratchet.next_todo()


def next_quest(ctx: Context) -> Output:
    """Show the quest to work on and record it as the active one."""
    changes = load_changes(ctx)
    # One quest is shown: the lists of the others are decoded only if used.
    ratchet = narrowed(load_ratchet(ctx, lazy=True), changes)
    if changes is not None and ctx.options.quest_id and ctx.options.quest_id not in ratchet.quests:
        raise QuestUsageError(
            f"quest {ctx.options.quest_id!r} did not change since {changes.ref}; "
            "drop --quest-since to work on it"
        )
    quest = pick(ratchet, ctx.options.quest_id)
    if quest is not None and quest.state.terminal:
        raise QuestUsageError(
            f"quest {quest.id} is {quest.state.value} and cannot be worked on "
            "(PASS, REVIEW and DONE are settled)"
        )
    target = quest.id if quest else None
    previous = ratchet.active
    # Narrowed by --quest-since, `ratchet.active` is None when the active quest did not change.
    if ratchet.active != target:
        # Only the active pointer changes: one line of the file (engine/active.py).
        previous = set_active(ctx.store, target)
    data: dict[str, Any] = {
        "remaining": ratchet.remaining,
        "done": ratchet.remaining == 0,
        "counts": ratchet.counts(),
        "quest": None,
        # `next` makes the quest it shows the active one (the one `submit` judges).
        "active_changed": previous != target,
        "previous_active": previous,
        # Every TODO id in `next`'s order: `--quest-id` with one of them passes over a quest.
        "queue": [todo.id for todo in ratchet.todo()],
    }
    head = [text.progress_line(ratchet)]
    if changes is not None:
        data["since"] = since_data(changes, ratchet)
        head.insert(0, since_line(changes, ratchet))
    if quest is None:
        return Output(data, [*head, "nothing remains: every quest is settled"])
    data["quest"] = quest_json(quest, ratchet, max_tries=ctx.options.max_tries, rootdir=ctx.rootdir)
    lines = [
        *head,
        *text.quest_text(quest, ctx.options.max_tries, data["quest"]),
    ]
    if previous is not None and previous != target:
        lines.append(f"note: the active quest is now {target} (was {previous})")
    return Output(data, lines)


__all__ = ["next_quest", "pick"]
