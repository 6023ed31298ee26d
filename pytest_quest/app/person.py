"""A person's actions on one quest: `reopen`, `accept` and `exclude`, and the guard they all pass.

The guard, `require_person`, is the one place that decides a person is acting.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from dataclasses import dataclass

from pytest_quest.app.context import Context, load_ratchet, now_utc
from pytest_quest.app.options import suggest_quest_ids
from pytest_quest.core import states
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import FunctionFacts, Quest, Ratchet
from pytest_quest.engine.base import user_name
from pytest_quest.engine.source import facts_from_source
from pytest_quest.report import text
from pytest_quest.report.json import Output, quest_json


def who() -> str:
    """The person acting: git's user.name, else the OS user."""
    name = user_name()
    if name:
        return name
    try:
        return getpass.getuser()
    except Exception:  # getuser raises several kinds when no name is known
        return "unknown"


@dataclass(frozen=True)
class Person:
    """Who confirmed a person action, when, and the reason they gave."""

    by: str
    at: str
    reason: str


def require_person(
    ctx: Context, action: str, confirmation: str, summary: list[str] | None = None
) -> Person:
    """Refuse `action` unless a person at this process's terminal confirms it.

    `action` is the option as typed (``--quest-accept``); the person gives
    ``--quest-reason`` and types `confirmation` (a quest id, or the policy
    change) at the controlling terminal after reading `summary`.  Without an
    interactive terminal, without a reason, or with another answer typed, a
    `QuestUsageError` (exit 4) says so and nothing is changed.
    """
    terminal = ctx.person_terminal()
    if terminal is None:
        raise QuestUsageError(
            f"{action} is a person action: a person must run it at an interactive terminal "
            "and type a confirmation; this process has no controlling terminal, so nothing "
            "was changed (an agent or a script must not run person actions)"
        )
    reason = (ctx.options.reason or "").strip()
    if not reason:
        raise QuestUsageError(
            f'{action} needs a reason: add --quest-reason "..." (it is recorded with who, '
            "when and the code as you saw it, and listed in CI)"
        )
    lines = [*(summary or []), f"reason: {reason}"]
    prompt = "\n".join([*lines, f"type {confirmation} to confirm (anything else cancels): "])
    typed = terminal.ask(prompt)
    if typed != confirmation:
        raise QuestUsageError(
            f"{action}: the confirmation typed does not match {confirmation!r}; nothing was changed"
        )
    return Person(by=who(), at=now_utc(), reason=reason)


def reopen(ctx: Context) -> Output:
    """Put the REVIEW, DONE or EXCLUDED quest ``--quest-reopen`` names back to TODO, for the code as
    it is now; a TODO quest whose code changed since it was issued is re-issued so."""
    quest, current = _known(ctx, "reopen", ctx.options.reopen, lambda quest: None)
    states.check_reopen(quest, current.fingerprint if current is not None else None)
    person = require_person(
        ctx,
        "--quest-reopen",
        quest.id,
        _summary(quest, "back to TODO with its tries reset, re-issued for the code as it is now"),
    )
    fingerprint = current.fingerprint if current is not None else None

    def change(target: Quest) -> None:
        # Re-issued for the code as it is now: the person has looked at it.
        states.reopen(target, person.by, person.at, fingerprint, reason=person.reason)
        if current is not None:
            shift = current.first - target.first
            target.excluded_lines = [line + shift for line in target.excluded_lines]
            target.first, target.last = current.first, current.last

    output = _apply(ctx, "reopen", quest.id, person, fingerprint, change)
    output.lines.append(f"work on it: pytest --quest next --quest-id {quest.id}")
    return output


def accept(ctx: Context) -> Output:
    """Settle the REVIEW quest ``--quest-accept`` names as PASS."""
    quest, current = _known(ctx, "accept", ctx.options.accept, states.check_accept)
    person = require_person(
        ctx, "--quest-accept", quest.id, _summary(quest, "settled as PASS, locked from now on")
    )
    fingerprint = current.fingerprint if current is not None else None

    def change(target: Quest) -> None:
        states.accept(target, person.by, person.at, reason=person.reason, fingerprint=fingerprint)

    return _apply(ctx, "accept", quest.id, person, fingerprint, change)


def exclude(ctx: Context) -> Output:
    """Take the quest ``--quest-exclude`` names out of the work (dead or untestable code)."""
    quest, current = _known(ctx, "exclude", ctx.options.exclude, states.check_exclude)
    person = require_person(
        ctx,
        "--quest-exclude",
        quest.id,
        _summary(quest, "EXCLUDED: out of the work, shown in status and export"),
    )
    fingerprint = current.fingerprint if current is not None else None

    def change(target: Quest) -> None:
        states.exclude(target, person.by, person.at, reason=person.reason, fingerprint=fingerprint)

    return _apply(ctx, "exclude", quest.id, person, fingerprint, change)


def _known(
    ctx: Context, action: str, quest_id: str | None, allowed: Callable[[Quest], None]
) -> tuple[Quest, FunctionFacts | None]:
    """The quest named, checked for `action` before anyone is asked, and its current code."""
    ratchet = load_ratchet(ctx)
    ctx.store.check_writable()  # before anyone is asked to confirm what cannot be written
    if not quest_id or quest_id not in ratchet.quests:
        raise QuestUsageError(
            f"--quest-{action} {quest_id!r}: unknown quest id; "
            "`pytest --quest-status --quest-format json` lists them"
            + suggest_quest_ids(quest_id or "", ratchet.quests)
        )
    quest = ratchet.quests[quest_id]
    allowed(quest)
    return quest, facts_from_source(quest_id, quest.file, ctx.rootdir, all_missing=False)


def _summary(quest: Quest, effect: str) -> list[str]:
    return [
        f"quest {quest.id} ({quest.file}:{quest.first}-{quest.last}) is {quest.state.value}",
        f"this makes it {effect}",
    ]


def _apply(
    ctx: Context,
    action: str,
    quest_id: str,
    person: Person,
    fingerprint: str | None,
    change: Callable[[Quest], None],
) -> Output:
    def update(fresh: Ratchet) -> Ratchet:
        target = fresh.quests.get(quest_id)
        if target is None:
            raise QuestUsageError(f"quest {quest_id} vanished from the ratchet file")
        change(target)  # checks the state again, under the lock
        if fresh.active == quest_id and target.state.terminal:
            fresh.active = None
        return fresh

    written = ctx.store.update(update)
    quest = written.quests[quest_id]
    data = {
        "action": action,
        "by": person.by,
        "at": person.at,
        "reason": person.reason,
        "fingerprint": fingerprint or "",
        "quest": quest_json(
            quest, written, max_tries=ctx.options.max_tries, rootdir=ctx.rootdir, full=False
        ),
        "counts": written.counts(),
        "remaining": written.remaining,
    }
    lines = [
        f"{action}: {quest_id} is now {quest.state.value} (by {person.by}, {person.at})",
        f"reason: {person.reason}",
        text.progress_line(written),
    ]
    return Output(data, lines)
