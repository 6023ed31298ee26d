"""`pytest --quest-status`: every quest and its state; changes nothing."""

from __future__ import annotations

from pytest_quest.app.context import Context, load_ratchet
from pytest_quest.report import text
from pytest_quest.report.json import Output, quest_json


def status(ctx: Context) -> Output:
    """The table of quests (text) or their list (JSON), with the counts."""
    ratchet = load_ratchet(ctx)
    table = text.status_text(
        ratchet, ctx.options.max_tries, ctx.terminal.markup, ctx.terminal.width
    )
    data = {
        "remaining": ratchet.remaining,
        "counts": ratchet.counts(),
        "active": ratchet.active,
        "quests": [
            quest_json(q, ratchet, max_tries=ctx.options.max_tries, rootdir=ctx.rootdir, full=False)
            for q in ratchet.ordered()
        ],
    }
    return Output(data, table.splitlines())


__all__ = ["status"]
