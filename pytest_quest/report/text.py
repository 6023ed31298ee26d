"""Text rendering: plain lines for facts and quests, rich tables for status.

Renderers return strings; the plugin hands them to pytest's terminal
reporter, so ``-q``, ``--color``, ``NO_COLOR`` and non-tty output work as
for the rest of pytest.
"""

from __future__ import annotations

import io
import shlex
import textwrap
from collections import Counter
from operator import attrgetter
from pathlib import Path
from typing import Any

from pytest_quest.core.model import SORT_KEY, Fact, Quest, Ratchet, State
from pytest_quest.core.seal import forged_passes
from pytest_quest.core.view import (
    MAX_TRIES,
    SECTIONS,
    StatusView,
    unwitnessed_lines,
    weaker_passes,
)
from pytest_quest.core.words import counted as counted  # noqa: PLC0414 (re-exported: the reports count with it)
from pytest_quest.report.escape import visible


def summarised(items: list[str], *, first: int = 5, width: int = 200) -> str:
    """The first few `items`, each cut at `width` characters, and how many more: one short line."""
    shown = [item if len(item) <= width else item[: width - 3] + "..." for item in items[:first]]
    rest = len(items) - len(shown)
    return "; ".join(shown + ([f"and {rest} more"] if rest else []))


#: The options that ask a command for its answer in JSON.
JSON_FORMAT = ("--quest-format", "json")


def submit_command(quest_id: str, *, json: bool = False) -> str:
    """The submit command of a quest (`json`: asking for JSON, as the command it follows did)."""
    command = f"pytest --quest submit --quest-id {shlex.quote(quest_id)}"
    return " ".join((command, *JSON_FORMAT)) if json else command


def submit_args(quest_id: str) -> list[str]:
    """`submit_command` as pytest's arguments: nothing for a program to split."""
    return ["--quest", "submit", "--quest-id", quest_id]


def source_with_marks(quest: Quest, rootdir: Path) -> str:
    """The function's source, uncovered lines marked ``>``, partial branches ``~``."""
    path = rootdir / quest.file
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    missing = set(quest.missing_lines)
    partial = {start for start, _ in quest.missing_branches} - missing
    width = len(str(quest.last))
    out = []
    for number in range(quest.first, min(quest.last, len(lines)) + 1):
        mark = ">" if number in missing else "~" if number in partial else " "
        out.append(f"{mark} {number:>{width}} | {lines[number - 1]}")
    return "\n".join(out)


def quest_text(quest: Quest, max_tries: int, data: dict[str, Any]) -> list[str]:
    out = [
        f"quest {quest.id}",
        f"  where : {quest.file}:{quest.first}-{quest.last}",
        f"  state : {quest.state.value}   tries: {quest.tries}/{max_tries}",
    ]
    if quest.facts:
        out.append("  facts :")
        out += [f"    {visible(fact.text())}" for fact in quest.facts]
    out += fresh_text(data)
    source = data.get("source") or ""
    if source:
        out.append("  source (> line not covered, ~ branch not taken):")
        out += ["    " + line for line in source.splitlines()]
    example = data.get("example") or {}
    if example.get("source"):
        if example.get("kind") == "own":
            out.append(f"  example: a passing test that runs this function ({example['test']}):")
        elif example.get("kind") == "neighbour":
            out.append(f"  example: a passing test of a neighbouring function ({example['test']}):")
        else:
            out.append("  example: a skeleton to start from:")
        out += ["    " + line for line in example["source"].splitlines()]
    out.append(f"  submit: {submit_command(quest.id)}")
    return out


def fresh_text(data: dict[str, Any]) -> list[str]:
    """Where a quest's facts come from, and the gate's last facts a rescan replaced."""
    out = []
    origin = data.get("facts_from") or {}
    if origin.get("note"):
        out.append(f"  ({origin['note']})")
    kept = (data.get("extra") or {}).get("gate_facts")
    if kept and data.get("state") == "TODO":
        out.append(f"  last gate facts (submit of {kept['at']}, {kept['verdict']}):")
        out += [f"    {visible(Fact.from_dict(fact).text())}" for fact in kept["facts"]]
    return out


def facts_text(facts: list[Fact]) -> list[str]:
    return [f"  {visible(fact.text())}" for fact in facts]


def progress_line(ratchet: Ratchet) -> str:
    return counts_line(ratchet.counts(), ratchet.remaining)


def counts_line(counts: dict[str, int], remaining: int) -> str:
    total = sum(counts.values())
    # EXCLUDED, a person's rare decision, is named only when some quest is.
    parts = ", ".join(
        f"{counts[s.value]} {s.value}" for s in State if s is not State.EXCLUDED or counts[s.value]
    )
    return f"{counted(total, 'quest')}: {parts}; {remaining} remaining"


class _AsciiBuffer(io.StringIO):
    """A buffer rich sees as ASCII-only: tables get ``|``/``-`` edges, the bar ``-``."""

    encoding = "ascii"


def status_view(ratchet: Ratchet) -> StatusView:
    """What `draw_status` shows of `ratchet` (the quests listed by name with their lines)."""
    files: dict[str, dict[str, int]] = {}
    # Counted in C (a dict per quest and an enum lookup each cost seconds on 50,000).
    for (file, state), number in Counter(map(_FILE_STATE, ratchet.quests.values())).items():
        if file not in files:
            files[file] = {s.value: 0 for s in State}
        files[file][state.value] = number
    from pytest_quest.core.dispute import is_dispute  # not for drawing a kept view (start-up)

    # Sorted once (a sort of 50,000 quests is not free), and only those listed.
    shown = sorted((q for q in ratchet.quests.values() if q.state in _LISTED), key=SORT_KEY)
    lines: dict[str, list[str]] = {}
    for quest in shown:
        if quest.state is State.EXCLUDED:
            title = SECTIONS[3][2]
            lines.setdefault(title, []).extend(excluded_text(quest))
            continue
        title = SECTIONS[1 if is_dispute(quest) else 0 if quest.state is State.REVIEW else 2][2]
        section = lines.setdefault(title, [])
        section.append(
            f"  {quest.id}  ({quest.file}:{quest.first}-{quest.last}, tries {quest.tries}/{MAX_TRIES})"
        )
        section.extend(f"    {visible(fact.text())}" for fact in quest.facts)
    unwitnessed = sorted((q for q in ratchet.quests.values() if q.unwitnessed), key=SORT_KEY)
    for quest in unwitnessed:
        lines.setdefault(SECTIONS[4][2], []).extend(
            visible(line) for line in unwitnessed_lines(quest)
        )
    counts = ratchet.counts()
    return StatusView(
        counts=counts,
        remaining=counts[State.TODO.value],
        files={name: files[name] for name in sorted(files)},
        sections={title: "\n".join(lines[title]) for *_, title in SECTIONS if title in lines},
        weaker=weaker_passes(ratchet),
        policy=ratchet.policy.to_dict() if ratchet.policy is not None else None,
        forged=forged_passes(ratchet),
        judged_in=judged_in(ratchet),
        issued=issued_todo(ratchet),
    )


def issued_todo(ratchet: Ratchet) -> dict[str, list[list[str]]]:
    """Per file (sorted by name), its TODO quests as issued: [id, fingerprint, issued_at]."""
    found: dict[str, list[list[str]]] = {}
    for quest in ratchet.todo():
        found.setdefault(quest.file, []).append([quest.id, quest.fingerprint, quest.issued_at])
    return {name: found[name] for name in sorted(found)}


def judged_in(ratchet: Ratchet) -> dict[str, int]:
    """How many quests each sandbox judged last ("none": unsandboxed), by name."""
    found = Counter(q.sandbox for q in ratchet.quests.values() if q.sandbox is not None)
    return {name: found[name] for name in sorted(found)}


def judged_in_line(judged: dict[str, int]) -> str:
    """The status line naming the sandbox each judged quest's last verdict came from."""
    parts = [
        f"{number} {'unsandboxed' if name == 'none' else f'in the {name} sandbox'}"
        for name, number in judged.items()
    ]
    return "quests by where their last verdict was judged: " + ", ".join(parts)


def draw_status(
    view: StatusView, max_tries: int, markup: bool, width: int, *, ascii: bool = False
) -> str:
    """The status view: counts, a progress bar, a table per file, REVIEW and DONE quests.

    It fits `width` (40 columns at least): a table too wide for it becomes one
    line per file and one of counts.  `ascii` (output not to a terminal, or
    ``NO_COLOR``/``TERM=dumb``) draws with ASCII only, and without rich where
    a line is as rich would draw it (`_Out`): the common case of an agent or a
    CI job reading the output, where importing rich cost more than the rest.
    """
    width = max(width, 40)
    out = _Out(markup=markup, width=width, ascii=ascii)
    counts = view.counts
    total = sum(counts.values())
    settled = total - counts[State.TODO.value]
    out.line(counts_line(counts, view.remaining))
    if total:
        size = max(min(width - 30, 50), 10)
        label = f"{settled}/{total} settled ({100 * settled // total}%)"
        if ascii or not markup:
            # Without colour rich's bar leaves the unsettled part blank (at 0%, an
            # empty line); this one draws both parts in two glyphs.
            done = size * settled // total
            full, empty = ("#", "-") if ascii else ("█", "░")
            out.raw(f"[{full * done}{empty * (size - done)}] {label}\n")
        else:
            from rich.progress_bar import ProgressBar
            from rich.table import Table

            bar = Table.grid(padding=(0, 1))
            # Settled work is progress, not an alarm: green, never rich's default red.
            bar.add_row(
                ProgressBar(
                    total=total,
                    completed=settled,
                    width=size,
                    complete_style="green",
                    finished_style="green",
                ),
                label,
            )
            out.console().print(bar)
    files = view.files
    if files:
        header = ["file", *(s.value for s in State), "total"]
        rows = [
            [name, *(str(counts_of[s.value]) for s in State), str(sum(counts_of.values()))]
            for name, counts_of in files.items()
        ]
        # Columns apart by " | " (no outer edge): its natural width, cells uncut.
        columns = [max(len(cell) for cell in column) for column in zip(header, *rows)]
        if sum(columns) + 3 * (len(columns) - 1) > width:
            out.raw("\n".join(_narrow_rows(files, width)) + "\n")
        elif out.plain and _plain_cells([header, *rows]):
            out.raw(_ascii_table(header, rows, columns))
        else:
            _file_table(out.console(), out.buffer, header, rows, columns)
    tries = str(max_tries)
    for *_, title in SECTIONS:
        body = view.sections.get(title)
        if body:
            out.line(f"{title}:")
            # Plain lines, written straight to the buffer: one rich print per
            # quest cost 1 ms each (7 s for 4,000 REVIEW/DONE quests); the
            # terminal wraps a long line as rich would.
            out.raw(body.replace(MAX_TRIES, tries) + "\n")
    if view.judged_in:
        out.line(judged_in_line(view.judged_in))
    return out.buffer.getvalue().rstrip("\n")


# (file, state) of a quest, got in C (50,000 quests).
_FILE_STATE = attrgetter("file", "state")
# Whether `draw_status` writes by itself what rich would draw the same (tests compare both).
_PLAIN = True


class _Out:
    """Status's output: plain text, and a rich console made only when a line needs one."""

    def __init__(self, *, markup: bool, width: int, ascii: bool) -> None:
        self.markup, self.width, self.ascii = markup, width, ascii
        self.buffer: io.StringIO = _AsciiBuffer() if ascii else io.StringIO()
        self._console: Any = None
        #: Whether rich would add nothing: ASCII and no colour (`--color=yes` off a
        #: terminal is ASCII with colour: rich draws that, bold header and all).
        self.plain = ascii and not markup and _PLAIN

    def console(self) -> Any:
        if self._console is None:
            self._console = console_into(self.buffer, markup=self.markup, width=self.width)
        return self._console

    def raw(self, text: str) -> None:
        self.buffer.write(text)

    def line(self, text: str) -> None:
        """`text` as rich prints it: written as is when rich would change nothing (ASCII output,
        no markup, no wrap), else printed by rich."""
        if self.plain and len(text) <= self.width and _plain_cells([[text]]):
            self.buffer.write(text + "\n")
        else:
            self.console().print(text)


def _plain_cells(rows: list[list[str]]) -> bool:
    """Cells rich draws as they are: printable ASCII, no markup, no leading or trailing space."""
    return all(
        cell.isascii() and cell.isprintable() and "[" not in cell and cell == cell.strip()
        for row in rows
        for cell in row
    )


def _ascii_table(header: list[str], rows: list[list[str]], widths: list[int]) -> str:
    """The per-file table as rich draws it in ASCII (`_rich_table`): the first column left,
    the others right, `` | `` between them, a ``-+-`` rule under the header, no outer edge."""

    def row(cells: list[str]) -> str:
        return " | ".join(
            cell.ljust(size) if n == 0 else cell.rjust(size)
            for n, (cell, size) in enumerate(zip(cells, widths))
        )

    last = len(widths) - 1
    rule = "+".join("-" * (size + (n != 0) + (n != last)) for n, size in enumerate(widths))
    return "\n".join([row(header), rule, *(row(cells) for cells in rows)]) + "\n"


# The states whose quests status lists one by one (TODO and PASS are only counted).
_LISTED = frozenset({State.REVIEW, State.DONE, State.EXCLUDED})


def terminal(*, markup: bool, width: int, ascii: bool) -> tuple[Any, io.StringIO]:
    """A rich console `width` wide writing into the returned buffer (ASCII-only when `ascii`)."""
    buffer = _AsciiBuffer() if ascii else io.StringIO()
    return console_into(buffer, markup=markup, width=width), buffer


def console_into(buffer: io.StringIO, *, markup: bool, width: int) -> Any:
    """A rich console `width` wide writing into `buffer` (ASCII-only when it says so)."""
    from rich.console import Console

    return Console(
        file=buffer,
        force_terminal=markup,
        no_color=not markup,
        color_system="standard" if markup else None,
        width=width,
        highlight=False,
        emoji=False,
    )


def _file_table(
    console: Any, buffer: io.StringIO, header: list[str], rows: list[list[str]], widths: list[int]
) -> None:
    """The per-file table: rich draws its header and first row, the other rows are formatted.

    One rich row costs about a millisecond (1,250 files: over a second); a
    row of plain cells is the same line as rich draws it, checked against the
    row rich drew.  Any cell rich might read otherwise (markup, wide or
    control characters) and any mismatch: rich draws every row.
    """
    plain = len(rows) > 1 and all(
        cell.isascii() and cell.isprintable() and "[" not in cell for row in rows for cell in row
    )
    if plain:
        drawn = _rich_table(console, header, rows[:1], widths)
        last = drawn.rstrip("\n").rsplit("\n", 1)[-1]
        separator = last[widths[0] + 1 : widths[0] + 2]
        lines = [
            cells[0].ljust(widths[0])
            + "".join(
                f" {separator} {cell.rjust(size)}" for cell, size in zip(cells[1:], widths[1:])
            )
            for cells in rows
        ]
        if separator.strip() and lines[0] == last:
            buffer.write(drawn + "".join(line + "\n" for line in lines[1:]))
            return
    buffer.write(_rich_table(console, header, rows, None))


def _rich_table(
    console: Any, header: list[str], rows: list[list[str]], widths: list[int] | None
) -> str:
    """`rows` under `header` as rich draws them (columns at least `widths` wide, when given)."""
    from rich.table import Table

    table = Table(title=None, show_edge=False, pad_edge=False)
    for position, title in enumerate(header):
        table.add_column(
            title,
            justify="left" if position == 0 else "right",
            no_wrap=True,
            min_width=widths[position] if widths else None,
        )
    for cells in rows:
        table.add_row(*cells)
    with console.capture() as capture:
        console.print(table)
    text: str = capture.get()
    return text


def _narrow_rows(files: dict[str, dict[str, int]], width: int) -> list[str]:
    """Each file's counts for a narrow terminal: its name, then the states it has (and all)."""
    lines = []
    for name in sorted(files):
        row = files[name]
        counts = ", ".join(f"{row[s.value]} {s.value}" for s in State if row[s.value])
        lines += [name[start : start + width] for start in range(0, len(name), width)]
        lines += textwrap.wrap(
            f"{counts} ({sum(row.values())})", width, initial_indent="  ", subsequent_indent="  "
        )
    return lines


def forged_lines(forged: dict[str, str]) -> list[str]:
    """The PASS entries no judged submit, scan or person wrote, one line each."""
    if not forged:
        return []
    return [
        f"{len(forged)} PASS not written by pytest-quest's gate, a scan or a person (forged):",
        *(f"  FORGED {qid}: {why}" for qid, why in forged.items()),
    ]


def weaker_lines(found: list[dict[str, Any]]) -> list[str]:
    return [
        f"  PASS under a weaker policy: {item['id']} ({', '.join(item['weaker'])}: {item['policy']})"
        for item in found
    ]


def excluded_text(quest: Quest) -> list[str]:
    """An EXCLUDED quest as status shows it: where, who excluded it, when and why."""
    lines = [f"  {quest.id}  ({quest.file}:{quest.first}-{quest.last})"]
    from pytest_quest.core.states import last_person_event  # not for drawing a kept view

    event = last_person_event(quest, "exclude")
    if event is not None:
        said = f"by {event.by or '?'} at {event.at}: {event.reason or '(no reason)'}"
        lines.append(f"    {visible(said)}")
    return lines
