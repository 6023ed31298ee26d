"""A person's actions on one quest: `reopen` (REVIEW or DONE back to TODO) and `accept` (REVIEW to PASS)."""

from __future__ import annotations

import getpass
import subprocess

from pytest_quest.app.context import Context, load_ratchet, now_utc
from pytest_quest.core import states
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Quest, Ratchet
from pytest_quest.engine.source import facts_from_source
from pytest_quest.report import text
from pytest_quest.report.json import Output, quest_json


def who() -> str:
    """The person acting: git's user.name, else the OS user."""
    try:
        name = subprocess.run(
            ["git", "config", "user.name"], check=False, capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        name = ""
    if name:
        return name
    try:
        return getpass.getuser()
    except Exception:  # getuser raises several kinds when no name is known
        return "unknown"


def reopen(ctx: Context) -> Output:
    """Put the REVIEW or DONE quest ``--quest-reopen`` names back to TODO, for the code as it is now."""
    ratchet, quest_id = _known(ctx, "reopen", ctx.options.reopen)
    by, now = who(), now_utc()
    quest = ratchet.quests[quest_id]
    current = facts_from_source(quest_id, quest.file, ctx.rootdir, all_missing=False)

    def change(fresh: Ratchet) -> Ratchet:
        target = _target(fresh, quest_id)
        # Re-issued for the code as it is now: the person has looked at it.
        states.reopen(target, by, now, current.fingerprint if current else None)
        if current is not None:
            shift = current.first - target.first
            target.excluded_lines = [line + shift for line in target.excluded_lines]
            target.first, target.last = current.first, current.last
        return fresh

    written = ctx.store.update(change)
    output = _said(ctx, "reopen", written, quest_id, by, now)
    output.lines.append(f"work on it: pytest --quest next --quest-id {quest_id}")
    return output


def accept(ctx: Context) -> Output:
    """Settle the REVIEW quest ``--quest-accept`` names as PASS."""
    _, quest_id = _known(ctx, "accept", ctx.options.accept)
    by, now = who(), now_utc()

    def change(fresh: Ratchet) -> Ratchet:
        states.accept(_target(fresh, quest_id), by, now)
        if fresh.active == quest_id:
            fresh.active = None
        return fresh

    written = ctx.store.update(change)
    return _said(ctx, "accept", written, quest_id, by, now)


def _known(ctx: Context, action: str, quest_id: str | None) -> tuple[Ratchet, str]:
    ratchet = load_ratchet(ctx)
    if not quest_id or quest_id not in ratchet.quests:
        raise QuestUsageError(
            f"--quest-{action} {quest_id!r}: unknown quest id; "
            "`pytest --quest-status --quest-format json` lists them"
        )
    return ratchet, quest_id


def _target(fresh: Ratchet, quest_id: str) -> Quest:
    target = fresh.quests.get(quest_id)
    if target is None:
        raise QuestUsageError(f"quest {quest_id} vanished from the ratchet file")
    return target


def _said(ctx: Context, action: str, ratchet: Ratchet, quest_id: str, by: str, now: str) -> Output:
    quest = ratchet.quests[quest_id]
    data = {
        "action": action,
        "by": by,
        "at": now,
        "quest": quest_json(
            quest, ratchet, max_tries=ctx.options.max_tries, rootdir=ctx.rootdir, full=False
        ),
        "counts": ratchet.counts(),
        "remaining": ratchet.remaining,
    }
    lines = [
        f"{action}: {quest_id} is now {quest.state.value} (by {by}, {now})",
        text.progress_line(ratchet),
    ]
    return Output(data, lines)


__all__ = ["accept", "reopen", "who"]
