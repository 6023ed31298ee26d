"""`pytest --quest export`: a report of every quest as recorded (JSON, CSV, Markdown, SARIF, HTML)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_quest.app.context import Context, load_ratchet, now_utc
from pytest_quest.app.since import load_changes, narrowed, since_data, since_line
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Ratchet
from pytest_quest.core.view import weaker_passes
from pytest_quest.engine import outputs
from pytest_quest.engine.source import read_source
from pytest_quest.report import export as formats
from pytest_quest.report.html import render_html
from pytest_quest.report.json import Output, quest_json
from pytest_quest.report.text import counted


def export(ctx: Context) -> Output:
    """Write the report to ``--quest-export-to``; runs no test."""
    if not ctx.options.export_to:
        raise QuestUsageError(
            "--quest export needs --quest-export-to PATH (.json, .csv, .md, .sarif, .html)"
        )
    changes = load_changes(ctx)
    ratchet = narrowed(load_ratchet(ctx), changes)
    target = export_target(ctx)
    written = write_export(ctx, ratchet, target, None)
    data: dict[str, Any] = {
        "export": written,
        "format": target[1],
        "counts": ratchet.counts(),
        "remaining": ratchet.remaining,
    }
    lines = [
        f"export: {counted(len(ratchet.quests), 'quest')} written to {where_written(ctx, written)}"
    ]
    if changes is not None:
        data["since"] = since_data(changes, ratchet)
        lines.insert(0, since_line(changes, ratchet))
    return Output(data, lines)


def export_target(ctx: Context) -> tuple[Path, str]:
    """The file ``--quest-export-to`` names and its format; a usage error for one not to write."""
    assert ctx.options.export_to
    quest_file = ctx.options.quest_file
    return outputs.target(
        ctx.options.export_to,
        ctx.invocation_dir,
        ctx.options.export_force,
        [quest_file, ctx.store.lock_path, ctx.store.claims_path],
        ctx.options.sources,
        rootdir=ctx.rootdir,
        # Test folders inside the rootdir (the rootdir itself is every project's own folder).
        test_roots=[r for r in ctx.tests.roots if r.resolve() != ctx.rootdir.resolve()],
    )


def write_export(
    ctx: Context, ratchet: Ratchet, target: tuple[Path, str], regressions: list[Any] | None
) -> str:
    """Render `ratchet` (and `check`'s `regressions`) to `target`; returns the path written."""
    path, fmt = target
    quests = [
        quest_json(q, ratchet, max_tries=ctx.options.max_tries, rootdir=ctx.rootdir, full=False)
        for q in ratchet.ordered()
    ]
    # A PASS obtained under a weaker policy than the current one says so.
    weaker = {item["id"]: item["weaker"] for item in weaker_passes(ratchet)}
    for quest in quests:
        if quest["id"] in weaker:
            quest["weaker_policy"] = weaker[quest["id"]]
    if fmt == "html":
        sources = _sources(ctx.rootdir, {quest.file for quest in ratchet.quests.values()})
        text = render_html(ratchet, quests, regressions, sources, now_utc())
    else:
        text = formats.render(fmt, ratchet, quests, regressions, ctx.rootdir, now_utc())
    outputs.write(path, text)
    return str(path)


def where_written(ctx: Context, written: str) -> str:
    """`written` as a message says it: outside the rootdir (``--quest-export-force``), in full."""
    path = Path(written).resolve()
    root = ctx.rootdir.resolve()
    return written if path.is_relative_to(root) else f"{path} (outside the rootdir {root})"


def _sources(rootdir: Path, files: set[str]) -> dict[str, list[str]]:
    """The lines of each file the HTML report shows; only files inside `rootdir` are read."""
    root = rootdir.resolve()
    sources = {}
    for file in sorted(files):
        path = (root / file).resolve()
        if path.is_relative_to(root) and path.is_file():
            sources[file] = read_source(path).splitlines()
    return sources
