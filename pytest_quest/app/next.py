"""`pytest --quest next`: pick the quest to work on, make it the active one, show it."""

from __future__ import annotations

from typing import Any

from pytest_quest.app.context import Context, load_ratchet
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Quest, Ratchet, State
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
            )
        return quest
    if ratchet.active and ratchet.active in ratchet.quests:
        active = ratchet.quests[ratchet.active]
        if active.state is State.TODO:
            return active
    return ratchet.next_todo()


def next_quest(ctx: Context) -> Output:
    """Show the quest to work on and record it as the active one."""
    ratchet = load_ratchet(ctx)
    quest = pick(ratchet, ctx.options.quest_id)
    if quest is not None and quest.state.terminal:
        raise QuestUsageError(
            f"quest {quest.id} is {quest.state.value} and cannot be worked on "
            "(PASS, REVIEW and DONE are settled)"
        )
    target = quest.id if quest else None
    if ratchet.active != target:

        def set_active(fresh: Ratchet) -> None:
            if target is None or (
                target in fresh.quests and not fresh.quests[target].state.terminal
            ):
                fresh.active = target

        ctx.store.update(set_active)
    data: dict[str, Any] = {
        "remaining": ratchet.remaining,
        "counts": ratchet.counts(),
        "quest": None,
    }
    if quest is None:
        return Output(
            data, [text.progress_line(ratchet), "nothing remains: every quest is settled"]
        )
    data["quest"] = quest_json(quest, ratchet, max_tries=ctx.options.max_tries, rootdir=ctx.rootdir)
    lines = [
        text.progress_line(ratchet),
        *text.quest_text(quest, ctx.options.max_tries, data["quest"]),
    ]
    return Output(data, lines)


__all__ = ["next_quest", "pick"]
