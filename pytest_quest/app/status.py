"""`pytest --quest-status`: every quest and its state; changes nothing."""

from __future__ import annotations

from typing import Any

from pytest_quest.app.context import Context, keep_view, load_ratchet
from pytest_quest.app.next import Issued
from pytest_quest.app.since import load_changes, narrowed, since_data, since_line
from pytest_quest.core.seal import forged_passes
from pytest_quest.core.view import StatusView, weaker_passes
from pytest_quest.core.words import counted
from pytest_quest.engine import view_cache
from pytest_quest.report import text
from pytest_quest.report.json import Output, quest_json
from pytest_quest.report.text import forged_lines, weaker_lines


def status(ctx: Context) -> Output:
    """The table of quests (text) or their list (JSON), with the counts."""
    changes = load_changes(ctx)
    if not ctx.options.json and changes is None:
        kept = _kept_view(ctx)
        if kept is not None:
            return _changed(ctx, _text(ctx, *kept), kept[0].issued)
    # The text shows the lists of few quests: those of the others are not decoded.
    ratchet = narrowed(load_ratchet(ctx, lazy=not ctx.options.json), changes)
    if not ctx.options.json:
        view = text.status_view(ratchet)
        if changes is None and ctx.store.seen is not None:
            # The next status of these bytes draws this view without reading a quest.
            keep_view(ctx.store, ratchet, ctx.store.seen[0], view, written=False)
        output = _changed(ctx, _text(ctx, view, ratchet.active), view.issued)
        if changes is not None:
            output.data["since"] = since_data(changes, ratchet)
            output.lines.insert(0, since_line(changes, ratchet))
        return output
    # Each format builds only what it shows (on 50,000 quests either costs seconds).
    found = weaker_passes(ratchet)
    data: dict[str, Any] = {
        "remaining": ratchet.remaining,
        "counts": ratchet.counts(),
        "active": ratchet.active,
        "quests": [
            quest_json(q, ratchet, max_tries=ctx.options.max_tries, rootdir=ctx.rootdir, full=False)
            for q in ratchet.ordered()
        ],
        "policy": ratchet.policy.to_dict() if ratchet.policy is not None else None,
        "weaker_policy_passes": found,
        "forged": forged_passes(ratchet),
        "judged_in": text.judged_in(ratchet),
    }
    lines = []
    if changes is not None:
        data["since"] = since_data(changes, ratchet)
        lines.append(since_line(changes, ratchet))
    output = Output(data, lines + weaker_lines(found) + forged_lines(data["forged"]))
    return _changed(ctx, output, text.issued_todo(ratchet))


def _changed(ctx: Context, output: Output, issued_todo: dict[str, list[list[str]]]) -> Output:
    """`output` with the TODO quests issued for code that changed since, and what to do
    (`issued_todo`: per file, its TODO quests as issued, `text.issued_todo`).

    A rescan keeps the code a quest was issued for: a submit of one whose
    code changed is REVIEW (identity.changed) without its tests judged;
    `next` passes over them; a person re-issues each.
    """
    issued = Issued(ctx.rootdir, touched_only=True)
    changed = [
        quest_id
        for file, quests in issued_todo.items()
        for quest_id, fingerprint, issued_at in quests
        if issued.changed_code(quest_id, file, fingerprint, issued_at)
    ]
    output.data["changed_since_issue"] = changed
    if changed:
        output.lines.append(
            f"{counted(len(changed), 'TODO quest')} issued for code that changed since: "
            "a submit of one is REVIEW (identity.changed) without its tests judged; "
            "`pytest --quest next` passes over them; a person re-issues each "
            '(`pytest --quest-reopen ID --quest-reason "..."`), `next` then shows it'
        )
    return output


def _kept_view(ctx: Context) -> tuple[StatusView, str | None] | None:
    """The view kept for the file as it is now, and its active quest (None: read the file)."""
    data = ctx.store.read_bytes()
    if data is None:
        return None
    good, active = view_cache.active_line(data, view_cache.quests_start(data))
    if not good:
        return None
    view = view_cache.load(ctx.store.journal_path, data, str(ctx.store.root))
    return None if view is None else (view, active)


def _data(view: StatusView, active: str | None) -> dict[str, Any]:
    return {
        "remaining": view.remaining,
        "counts": view.counts,
        "active": active,
        "quests": [],
        "policy": view.policy,
        "weaker_policy_passes": view.weaker,
        "forged": view.forged,
        "judged_in": view.judged_in,
    }


def _text(ctx: Context, view: StatusView, active: str | None) -> Output:
    table = text.draw_status(
        view,
        ctx.options.max_tries,
        ctx.terminal.markup,
        ctx.terminal.width,
        ascii=ctx.terminal.ascii,
    )
    lines = table.splitlines() + weaker_lines(view.weaker) + forged_lines(view.forged)
    return Output(_data(view, active), lines)
