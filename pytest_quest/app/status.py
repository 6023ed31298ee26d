"""`pytest --quest-status`: every quest and its state; changes nothing."""

from __future__ import annotations

from pytest_quest.app.context import Context, load_ratchet
from pytest_quest.app.policy import weaker_lines, weaker_passes
from pytest_quest.app.since import load_changes, narrowed, since_data, since_line
from pytest_quest.report import text
from pytest_quest.report.json import Output, quest_json


def status(ctx: Context) -> Output:
    """The table of quests (text) or their list (JSON), with the counts."""
    changes = load_changes(ctx)
    # The text shows the lists of few quests: those of the others are not decoded.
    ratchet = narrowed(load_ratchet(ctx, lazy=not ctx.options.json), changes)
    found = weaker_passes(ratchet)
    data = {
        "remaining": ratchet.remaining,
        "counts": ratchet.counts(),
        "active": ratchet.active,
        "quests": [],
        "policy": ratchet.policy.to_dict() if ratchet.policy is not None else None,
        "weaker_policy_passes": found,
    }
    # Each format builds only what it shows (on 50,000 quests either costs seconds):
    # the JSON list of quests, or the text table.
    table = ""
    if ctx.options.json:
        data["quests"] = [
            quest_json(q, ratchet, max_tries=ctx.options.max_tries, rootdir=ctx.rootdir, full=False)
            for q in ratchet.ordered()
        ]
    else:
        table = text.status_text(
            ratchet,
            ctx.options.max_tries,
            ctx.terminal.markup,
            ctx.terminal.width,
            ascii=ctx.terminal.ascii,
        )
    head = []
    if changes is not None:
        data["since"] = since_data(changes, ratchet)
        head.append(since_line(changes, ratchet))
    return Output(data, head + table.splitlines() + weaker_lines(found))


__all__ = ["status"]
