"""`pytest --quest next`: pick the quest to work on, make it the active one, show it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_quest.app import remeasure
from pytest_quest.app.context import Context, keep_view, load_ratchet, now_utc
from pytest_quest.app.options import suggest_quest_ids
from pytest_quest.app.since import load_changes, narrowed, since_data, since_line
from pytest_quest.core.errors import QuestUsageError, RatchetFileError
from pytest_quest.core.model import Quest, Ratchet, State
from pytest_quest.core.states import changed_since_issue
from pytest_quest.core.view import NextView, StatusView
from pytest_quest.core.words import counted
from pytest_quest.engine import codec_view, view_cache
from pytest_quest.engine.changes import Changes
from pytest_quest.engine.source import read_source, source_functions
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
    kept = _from_view(ctx) if changes is None else None
    if kept is not None:
        # The quests of one file, and the rest from the view kept for these bytes.
        ratchet, view, more = kept
        counts, remaining, queue = view.counts, view.remaining, more.queue
        recorded: Callable[[], set[str]] | None = functools.partial(
            _recorded,
            ratchet,
            more,
            ctx.store.seen[0] if ctx.store.seen else b"",
            str(ctx.store.path),
        )
    else:
        ratchet, counts, remaining, queue = _whole(ctx, changes)
        recorded = None
    quest = pick(ratchet, ctx.options.quest_id)
    if quest is not None and quest.state.terminal:
        active = ratchet.active
        raise QuestUsageError(
            f"quest {quest.id} is {quest.state.value} and cannot be worked on "
            "(PASS, REVIEW and DONE are settled)"
            + (
                f"; the active quest is still {active}, which a submit without --quest-id judges"
                if active and active != quest.id
                else ""
            )
        )
    # A TODO quest issued for code that changed since: any submit of it is REVIEW
    # (identity.changed). Passed over (said), unless asked for by id (said too).
    issued = _Issued(ctx.rootdir)
    changed: list[str] = []
    if quest is not None and issued.changed(quest):
        if ctx.options.quest_id:
            changed = [quest.id]
        else:
            if kept is not None:
                ratchet, counts, remaining, queue = _whole(ctx, changes)
                recorded = None
            order = [quest, *(todo for todo in ratchet.todo() if todo.id != quest.id)]
            quest = next((todo for todo in order if not issued.changed(todo)), None)
            changed = [todo.id for todo in order if todo.id in issued.stale]
    target = quest.id if quest else None
    previous = ratchet.active
    # Narrowed by --quest-since, `ratchet.active` is None when the active quest did not change.
    if ratchet.active != target:
        # Only the active pointer changes: one line of the file (engine/active.py).
        previous = set_active(ctx.store, target)
    data: dict[str, Any] = {
        "remaining": remaining,
        # Nothing an agent can work on (what is left waits for a person).
        "done": quest is None,
        "counts": counts,
        "quest": None,
        # `next` makes the quest it shows the active one (the one `submit` judges).
        "active_changed": previous != target,
        "previous_active": previous,
        # Every TODO id in `next`'s order: `--quest-id` with one of them passes over a quest.
        "queue": queue,
        "changed_since_issue": changed,
    }
    head = [text.counts_line(counts, remaining)]
    if changed:
        head.append(_changed_line(changed, shown_by_id=quest is not None and quest.id in changed))
    if changes is not None:
        data["since"] = since_data(changes, ratchet)
        head.insert(0, since_line(changes, ratchet))
    if quest is None and changed:
        return Output(data, [*head, "nothing remains for an agent: what is left waits for a person"])
    if quest is None:
        said = "nothing remains: every quest is settled"
        waiting = [f"{counts[s]} {s}" for s in ("REVIEW", "DONE") if counts.get(s)]
        if waiting:
            # Settled for the agent, not closed: a person decides these.
            said += (
                f"; {' and '.join(waiting)} wait for a person "
                "(`pytest --quest-status` lists them): nothing for an agent to do"
            )
        return Output(data, [*head, said])
    # The facts as the tests are now: measured again when a test file changed since.
    fresh = remeasure.current(ctx, quest, ratchet, now_utc)
    shown = fresh.quest
    data["quest"] = quest_json(
        shown, ratchet, max_tries=ctx.options.max_tries, rootdir=ctx.rootdir, recorded=recorded
    )
    data["quest"]["facts_measured"] = fresh.measured()
    origin = data["quest"]["facts_from"]
    if fresh.how == "remeasured":
        origin["kind"], origin["at"] = fresh.how, fresh.at
    # `pick` shows only TODO quests, and a TODO quest's facts always come with a note.
    origin["note"] = fresh.note
    lines = [
        *head,
        *text.quest_text(shown, ctx.options.max_tries, data["quest"]),
    ]
    if previous is not None and previous != target:
        lines.append(f"note: the active quest is now {target} (was {previous})")
    return Output(data, lines)


def _whole(ctx: Context, changes: Changes | None) -> tuple[Ratchet, dict[str, int], int, list[str]]:
    """The whole ratchet (narrowed by --quest-since), its counts, remaining and queue."""
    # One quest is shown: the lists of the others are decoded only if used.
    ratchet = narrowed(load_ratchet(ctx, lazy=True), changes)
    if changes is not None and ctx.options.quest_id and ctx.options.quest_id not in ratchet.quests:
        raise QuestUsageError(
            f"quest {ctx.options.quest_id!r} did not change since {changes.ref}; "
            "drop --quest-since to work on it"
        )
    if changes is None and ctx.store.seen is not None:
        # The next `next` or `status` of these bytes reads one file's quests, or none.
        keep_view(ctx.store, ratchet, ctx.store.seen[0], written=False)
    return ratchet, ratchet.counts(), ratchet.remaining, [todo.id for todo in ratchet.todo()]


class _Issued:
    """Which TODO quests were issued for other code than their function's now (a parse a file)."""

    def __init__(self, rootdir: Path) -> None:
        self.rootdir = rootdir
        self.prints: dict[str, dict[str, str]] = {}
        self.stale: set[str] = set()

    def changed(self, quest: Quest) -> bool:
        if quest.state is not State.TODO:
            return False
        prints = self.prints.get(quest.file)
        if prints is None:
            try:
                functions = source_functions(quest.file, read_source(self.rootdir / quest.file))
            except (OSError, ValueError, QuestUsageError):
                functions = []  # unreadable, or a syntax error: the submit says so
            prints = self.prints[quest.file] = {f.quest_id: f.fingerprint for f in functions}
        if changed_since_issue(quest, prints.get(quest.id)):
            self.stale.add(quest.id)
            return True
        return False


def _changed_line(changed: list[str], *, shown_by_id: bool) -> str:
    """What `next` says of quests issued for code that changed since."""
    reopen = "pytest --quest-reopen ID --quest-reason \"...\""
    if shown_by_id:
        return (
            f"note: {changed[0]} was issued for code that changed since: any submit of it is "
            f"REVIEW (identity.changed) until a person re-issues it ({reopen})"
        )
    return (
        f"passed over {counted(len(changed), 'quest')} issued for code that changed since "
        f"(any submit of one is REVIEW, identity.changed); a person re-issues each "
        f"({reopen}): {', '.join(changed)}"
    )


def _recorded(ratchet: Ratchet, more: NextView, data: bytes, path: str) -> set[str]:
    """The covering tests a scan recorded, named (from the file's tests table): kept in the
    view, or (a view a read kept) found in the whole file, read lazily, now that they are needed."""
    places = more.recorded
    if places is None:
        whole = codec_view.read(data, path)
        places = view_cache.recorded_places(whole, data) if whole is not None else None
    if places is None:
        raise RatchetFileError(path, "the tests the scan recorded could not be read")
    table = ratchet.test_table
    return {table[index] for index in places}


def _from_view(ctx: Context) -> tuple[Ratchet, StatusView, NextView] | None:
    """The quests of the file of the quest to show (its file's only), and the view kept for the
    ratchet file as it is now (engine/view_cache.py); None: read the whole file.

    The view was made from these very bytes (the ``active`` line aside, checked on its own),
    validated when they were written or read whole: the one file's quests are validated again
    by the view reader; nothing else of the file needs decoding.
    """
    data = ctx.store.read_bytes()
    if data is None:
        return None
    start = view_cache.quests_start(data)
    good, active = view_cache.active_line(data, start)
    if start < 0 or not good:
        return None
    kept = view_cache.load_next(ctx.store.journal_path, data, str(ctx.store.root))
    if kept is None:
        return None
    view, more = kept
    target = ctx.options.quest_id
    if not target:
        if active is not None and active in set(more.queue):
            target = active
        elif more.queue:
            target = more.queue[0]
        else:
            return None  # nothing remains: the whole read says so (rare, and cheap then)
    part = view_cache.one_file(data, target, start)
    ratchet = codec_view.read(part[0], str(ctx.store.path), table=part[1]) if part else None
    if ratchet is None or target not in ratchet.quests:
        return None
    ratchet.active = active
    # A `next` that moves the active quest writes that line alone (engine/active.py).
    ctx.store.seen = (data, ratchet)
    return ratchet, view, more


__all__ = ["next_quest", "pick"]
