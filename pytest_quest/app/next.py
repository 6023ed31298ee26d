"""`pytest --quest next`: pick the quest to work on, make it the active one, show it."""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_quest.app import remeasure
from pytest_quest.app.context import Context, keep_view, load_ratchet, now_utc
from pytest_quest.app.options import suggest_quest_ids
from pytest_quest.app.since import load_changes, narrowed, since_data, since_line
from pytest_quest.core.errors import QuestUsageError, RatchetFileError
from pytest_quest.core.model import Quest, Ratchet, State
from pytest_quest.core.states import code_changed
from pytest_quest.core.view import NextView, StatusView
from pytest_quest.core.words import counted
from pytest_quest.engine import codec, view_cache
from pytest_quest.engine.active import set_active
from pytest_quest.engine.changes import Changes
from pytest_quest.engine.source import read_source, source_functions
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


@dataclass
class _Loaded:
    """The ratchet as `next` read it: whole, or one file's quests and a kept view."""

    ratchet: Ratchet
    counts: dict[str, int]
    remaining: int
    queue: list[str]
    recorded: Callable[[], set[str]] | None = None
    partial: bool = False


def _load(ctx: Context, changes: Changes | None) -> _Loaded:
    kept = _from_view(ctx) if changes is None else None
    if kept is None:
        return _Loaded(*_whole(ctx, changes))
    # The quests of one file, and the rest from the view kept for these bytes.
    ratchet, view, more = kept
    recorded = functools.partial(
        _recorded,
        ratchet,
        more,
        ctx.store.seen[0] if ctx.store.seen else b"",
        str(ctx.store.path),
    )
    return _Loaded(ratchet, view.counts, view.remaining, more.queue, recorded, partial=True)


def _refuse_settled(quest: Quest | None, ratchet: Ratchet) -> None:
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


def _pass_over_changed(
    ctx: Context, changes: Changes | None, loaded: _Loaded, quest: Quest | None
) -> tuple[_Loaded, Quest | None, list[str]]:
    """A TODO quest issued for code that changed since: any submit of it is REVIEW
    (identity.changed). Passed over (said), unless asked for by id or by
    --quest-since, which looks for changed code (said too)."""
    issued = Issued(ctx.rootdir)
    if quest is None or not issued.changed(quest):
        return loaded, quest, []
    if ctx.options.quest_id or changes is not None:
        return loaded, quest, [quest.id]
    if loaded.partial:
        loaded = _Loaded(*_whole(ctx, changes))
    order = [quest, *(todo for todo in loaded.ratchet.todo() if todo.id != quest.id)]
    found = next((todo for todo in order if not issued.changed(todo)), None)
    return loaded, found, [todo.id for todo in order if todo.id in issued.stale]


def _nothing_left(data: dict[str, Any], head: list[str], counts: dict[str, int]) -> Output:
    if data["changed_since_issue"]:
        return Output(
            data, [*head, "nothing remains for an agent: what is left waits for a person"]
        )
    said = "nothing remains: every quest is settled"
    waiting = [f"{counts[s]} {s}" for s in ("REVIEW", "DONE") if counts.get(s)]
    if waiting:
        # Settled for the agent, not closed: a person decides these.
        said += (
            f"; {' and '.join(waiting)} wait for a person "
            "(`pytest --quest-status` lists them): nothing for an agent to do"
        )
    return Output(data, [*head, said])


def next_quest(ctx: Context) -> Output:
    """Show the quest to work on and record it as the active one."""
    changes = load_changes(ctx)
    loaded = _load(ctx, changes)
    quest = pick(loaded.ratchet, ctx.options.quest_id)
    _refuse_settled(quest, loaded.ratchet)
    loaded, quest, changed = _pass_over_changed(ctx, changes, loaded, quest)
    ratchet, counts = loaded.ratchet, loaded.counts
    target = quest.id if quest else None
    previous = ratchet.active
    # Narrowed by --quest-since, `ratchet.active` is None when the active quest did not change.
    if ratchet.active != target:
        # Only the active pointer changes: one line of the file (engine/active.py).
        previous = set_active(ctx.store, target)
    data: dict[str, Any] = {
        "remaining": loaded.remaining,
        # Nothing an agent can work on (what is left waits for a person).
        "done": quest is None,
        "counts": counts,
        "quest": None,
        # `next` makes the quest it shows the active one (the one `submit` judges).
        "active_changed": previous != target,
        "previous_active": previous,
        # Every TODO id in `next`'s order: `--quest-id` with one of them passes over a quest.
        "queue": loaded.queue,
        "changed_since_issue": changed,
    }
    head = [text.counts_line(counts, loaded.remaining)]
    if changed:
        head.append(_changed_line(changed, shown=quest is not None and quest.id in changed))
    if changes is not None:
        data["since"] = since_data(changes, ratchet)
        head.insert(0, since_line(changes, ratchet))
    if quest is None:
        return _nothing_left(data, head, counts)
    # The facts as the tests are now: measured again when a test file changed since.
    fresh = remeasure.current(ctx, quest, ratchet, now_utc)
    shown = fresh.quest
    data["quest"] = quest_json(
        shown,
        ratchet,
        max_tries=ctx.options.max_tries,
        rootdir=ctx.rootdir,
        recorded=loaded.recorded,
    )
    data["quest"]["facts_measured"] = fresh.measured()
    origin = data["quest"]["facts_from"]
    if fresh.how == "remeasured":
        origin["kind"], origin["at"] = fresh.how, fresh.at
    # `pick` shows only TODO quests, and a TODO quest's facts always come with a note.
    origin["note"] = fresh.note
    lines = [*head, *text.quest_text(shown, ctx.options.max_tries, data["quest"])]
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


class Issued:
    """Which TODO quests were issued for other code than their function's now (a parse a file).

    `touched_only`: a file not modified since the quest was issued (its
    modification time before the issue) is not parsed: its code is the
    issued one unless it was written back with an older time (`--quest-status`
    counts with it, for speed; `next` and `submit` parse every file).
    """

    def __init__(self, rootdir: Path, *, touched_only: bool = False) -> None:
        self.rootdir = rootdir
        self.touched_only = touched_only
        self.prints: dict[str, dict[str, str]] = {}
        self.stale: set[str] = set()

    def changed(self, quest: Quest) -> bool:
        if quest.state is not State.TODO:
            return False
        return self.changed_code(quest.id, quest.file, quest.fingerprint, quest.issued_at)

    def changed_code(self, quest_id: str, file: str, fingerprint: str, issued_at: str) -> bool:
        """`changed` of a TODO quest given by its id, file, fingerprint and time of issue."""
        if self.touched_only and not _touched_since(self.rootdir / file, issued_at):
            return False
        prints = self.prints.get(file)
        if prints is None:
            try:
                functions = source_functions(file, read_source(self.rootdir / file))
            except (OSError, ValueError, QuestUsageError):
                functions = []  # unreadable, or a syntax error: the submit says so
            prints = self.prints[file] = {f.quest_id: f.fingerprint for f in functions}
        if code_changed(fingerprint, prints.get(quest_id)):
            self.stale.add(quest_id)
            return True
        return False


def _touched_since(path: Path, issued_at: str) -> bool:
    """Whether `path` was modified at or after `issued_at` (UTC, ``...Z``); True when unknown."""
    try:
        issued = datetime.datetime.fromisoformat(issued_at.replace("Z", "+00:00"))
        return path.stat().st_mtime >= issued.timestamp() - 1
    except (OSError, ValueError):
        return True


def _changed_line(changed: list[str], *, shown: bool) -> str:
    """What `next` says of quests issued for code that changed since."""
    reopen = 'pytest --quest-reopen ID --quest-reason "..."'
    if shown:
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
        whole = codec.view(data, path)
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
    ratchet = codec.view(part[0], str(ctx.store.path), table=part[1]) if part else None
    if ratchet is None or target not in ratchet.quests:
        return None
    ratchet.active = active
    # A `next` that moves the active quest writes that line alone (engine/active.py).
    ctx.store.seen = (data, ratchet)
    return ratchet, view, more
