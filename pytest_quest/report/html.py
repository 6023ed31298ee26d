"""The HTML report: one self-contained page (``--quest-export-to report.html``).

Totals, the progress chart (``chart.py``), files by state, and each quest's
facts and source.  Inline style, no script, a Content-Security-Policy that
forbids any request, every foreign string escaped.  Pure: data in, text out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from pytest_quest.core.model import Quest, Ratchet, State, arc_text
from pytest_quest.core.states import last_person_event
from pytest_quest.core.words import counted
from pytest_quest.report import chart
from pytest_quest.report.escape import visible

STATES = tuple(State)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'"

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em;
       color: #1b1f24; }
h1 { margin-bottom: 0.2em; } .meta { color: #57606a; margin-top: 0; }
table { border-collapse: collapse; } th, td { padding: 0.2em 0.6em; text-align: left; }
table.counts td.n, table.files td.n { text-align: right; font-variant-numeric: tabular-nums; }
table.files tr:nth-child(even), table.counts tr:nth-child(even) { background: #f6f8fa; }
.state { font-weight: 600; padding: 0 0.4em; border-radius: 3px; color: #fff; }
.state-PASS { background: #1a7f37; } .state-TODO { background: #9a6700; }
.state-REVIEW { background: #8250df; } .state-DONE { background: #cf222e; }
.state-EXCLUDED { background: #6e7781; }
svg.chart { max-width: 100%; height: auto; background: #fff; }
svg .axis { stroke: #57606a; } svg .total { stroke: #8c959f; fill: #57606a; }
svg polyline.passed { stroke: #1a7f37; stroke-width: 2.5; }
svg polyline.settled { stroke: #0969da; stroke-width: 1.5; }
svg tspan.passed { fill: #1a7f37; } svg tspan.settled { fill: #0969da; }
svg .tick, svg .legend { font-size: 12px; fill: #57606a; }
details.quest { border: 1px solid #d0d7de; border-radius: 4px; margin: 0.4em 0; padding: 0.3em 0.6em; }
details.quest summary { cursor: pointer; }
ul.facts { margin: 0.3em 0; } .none { color: #57606a; }
table.source { font: 12px/1.35 ui-monospace, monospace; width: 100%; }
table.source td { padding: 0 0.5em; white-space: pre; vertical-align: top; }
table.source td.ln { color: #8c959f; text-align: right; user-select: none; }
table.source td.mark { font-weight: 700; user-select: none; }
tr.miss { background: #ffebe9; } tr.partial { background: #fff8c5; }
tr.excluded td.code { color: #8c959f; }
"""


def _e(value: object) -> str:
    # Control and bidirectional characters shown escaped, as in every other output: a
    # reviewer reading the page sees the bytes (no hidden ESC, no U+202E reordering).
    return escape(visible(str(value)), quote=True)


def _state(state: str) -> str:
    return f'<span class="state state-{_e(state)}">{_e(state)}</span>'


def _counts_table(counts: Mapping[str, int], remaining: int) -> list[str]:
    total = sum(counts.values())
    out = ['<table class="counts" id="totals">', "<tr><th>state</th><th>quests</th></tr>"]
    out += [
        f'<tr><td>{_state(state.value)}</td><td class="n">{counts.get(state.value, 0)}</td></tr>'
        for state in STATES
    ]
    out += [
        f'<tr><td>total</td><td class="n">{total}</td></tr>',
        f'<tr><td>remaining (TODO)</td><td class="n">{remaining}</td></tr>',
        "</table>",
    ]
    return out


def _files(ratchet: Ratchet) -> dict[str, list[Quest]]:
    files: dict[str, list[Quest]] = {}
    for quest in ratchet.ordered():
        files.setdefault(quest.file, []).append(quest)
    return files


def _files_table(files: Mapping[str, list[Quest]]) -> list[str]:
    head = "".join(f"<th>{_e(state.value)}</th>" for state in STATES)
    out = ['<table class="files" id="files">', f"<tr><th>file</th>{head}<th>total</th></tr>"]
    for index, (file, quests) in enumerate(files.items()):
        cells = "".join(
            f'<td class="n">{sum(1 for q in quests if q.state is state) or ""}</td>'
            for state in STATES
        )
        out.append(
            f'<tr><td><a href="#file-{index}">{_e(file)}</a></td>{cells}'
            f'<td class="n">{len(quests)}</td></tr>'
        )
    out.append("</table>")
    return out


def _branch_notes(quest: Quest) -> dict[int, list[str]]:
    notes: dict[int, list[str]] = {}
    for arc in quest.missing_branches:
        notes.setdefault(arc[0], []).append(f"branch {arc_text(arc)} not taken")
    return notes


def _source(quest: Quest, lines: Sequence[str] | None) -> list[str]:
    if not lines:
        return ['<p class="none">source not available (the file is not there any more)</p>']
    missing = set(quest.missing_lines)
    excluded = set(quest.excluded_lines)
    branches = _branch_notes(quest)
    out = ['<table class="source">']
    for number in range(quest.first, min(quest.last, len(lines)) + 1):
        if number in missing:
            kind, mark, note = "miss", ">", "line not covered"
        elif number in branches:
            kind, mark, note = "partial", "~", "; ".join(branches[number])
        elif number in excluded:
            kind, mark, note = "excluded", "-", "excluded from coverage"
        else:
            kind, mark, note = "", "", ""
        if number in missing and number in branches:
            note += "; " + "; ".join(branches[number])
        attrs = f' class="{kind}" title="{_e(note)}"' if kind else ""
        out.append(
            f'<tr{attrs}><td class="ln">{number}</td><td class="mark">{_e(mark)}</td>'
            f'<td class="code">{_e(lines[number - 1])}</td></tr>'
        )
    out.append("</table>")
    return out


def _quest(
    quest: Quest, index: int, data: Mapping[str, Any], lines: Sequence[str] | None
) -> list[str]:
    opened = "" if quest.state is State.PASS else " open"
    out = [
        f'<details class="quest" id="quest-{index}" data-state="{_e(quest.state.value)}"{opened}>',
        f"<summary>{_state(quest.state.value)} <code>{_e(quest.qualname)}</code> "
        f"lines {quest.first}-{quest.last} · tries {quest.tries}</summary>",
        f'<p class="meta">id <code>{_e(quest.id)}</code>',
    ]
    if quest.passed_at:
        out.append(f" · PASS since {_e(quest.passed_at)}")
    if quest.covering_tests:
        out.append(f" · {counted(len(quest.covering_tests), 'covering test')}")
    if data.get("weaker_policy"):
        out.append(f" · passed under a weaker policy: {_e(data['weaker_policy'])}")
    out.append("</p>")
    excluded = last_person_event(quest, "exclude")
    if quest.state is State.EXCLUDED and excluded is not None:
        out.append(
            f"<p>excluded by {_e(excluded.by)} at {_e(excluded.at)}: {_e(excluded.reason)}</p>"
        )
    if quest.facts:
        out.append('<ul class="facts">')
        out += [f"<li>{_e(fact.text())}</li>" for fact in quest.facts]
        out.append("</ul>")
    else:
        out.append('<p class="none">no facts recorded</p>')
    out += _source(quest, lines)
    out.append("</details>")
    return out


def _regressions(regressions: list[dict[str, Any]]) -> list[str]:
    out = ['<section id="regressions"><h2>Regressions</h2>']
    if not regressions:
        out.append("<p>None: every PASS function is still fully covered.</p>")
    for regression in regressions:
        out.append(
            f"<h3><code>{_e(regression['id'])}</code> (PASS since "
            f"{_e(regression.get('passed_at') or '?')})</h3><ul>"
        )
        out += [
            f"<li><code>{_e(fact.get('field', ''))}</code>: "
            f"{_e(fact.get('message') or fact.get('actual', ''))}</li>"
            for fact in regression.get("facts", [])
        ]
        out.append("</ul>")
    out.append("</section>")
    return out


def render_html(
    ratchet: Ratchet,
    quests: Sequence[Mapping[str, Any]],
    regressions: list[dict[str, Any]] | None,
    sources: Mapping[str, Sequence[str]],
    generated_at: str,
    version: str = "",
) -> str:
    """The page; `sources` maps each quest's file to its lines (absent: not available)."""
    by_id = {str(item.get("id")): item for item in quests}
    counts = ratchet.counts()
    points, undated = chart.progress(ratchet)
    files = _files(ratchet)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(CSP)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>pytest-quest report</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>pytest-quest report</h1>",
        f'<p class="meta">Generated {_e(generated_at)}'
        + (f" by pytest-quest {_e(version)}" if version else "")
        + f"; {counted(sum(counts.values()), 'quest')} in {counted(len(files), 'file')}.</p>",
        "<h2>Totals</h2>",
        *_counts_table(counts, ratchet.remaining),
        '<h2>Progress</h2><figure id="progress">',
        chart.svg(points, sum(counts.values())),
        "<figcaption>Quests settled over time: PASS (green) and settled in any state "
        "(PASS, REVIEW, DONE, EXCLUDED; blue), against all quests (dashed), from the dates "
        "the ratchet file records"
        + (f"; {undated} settled quests have no recorded date and are not drawn" if undated else "")
        + ".</figcaption></figure>",
    ]
    if regressions is not None:
        out += _regressions(regressions)
    out += ["<h2>Files</h2>", *_files_table(files)]
    index = 0
    for number, (file, file_quests) in enumerate(files.items()):
        out.append(f'<section class="file" id="file-{number}"><h2>{_e(file)}</h2>')
        for quest in file_quests:
            out += _quest(quest, index, by_id.get(quest.id, {}), sources.get(file))
            index += 1
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
