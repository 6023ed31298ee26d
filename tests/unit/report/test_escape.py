"""Escaping per medium, attacked first with hostile names (a GitHub command, a table pipe, a tag, control bytes).

Each medium's parser is simulated by what matters to it: the GitHub runner
reads ``::cmd::`` at a line's start (after blanks) and ``##[cmd]`` anywhere;
a Markdown table row is split on unescaped ``|`` and ends at a line break;
raw HTML is a ``<`` followed by a tag name; a terminal obeys control bytes.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_quest.core.model import Fact, Quest, Ratchet, State
from pytest_quest.core.ratchet import check_ratchet
from pytest_quest.report import ci, text
from pytest_quest.report.escape import (
    escape_data,
    escape_property,
    github_json,
    github_line,
    github_plain,
    md_code,
    md_text,
    terminal_line,
    visible,
)
from pytest_quest.report.export import render_markdown

HOSTILE = [
    "\n::error file=X::Y",
    "a\r::warning::spoof",
    "\x1b[31mred\x1b[0m\x1b]0;title\x07",
    "`code` then <img src=x onerror=alert(1)>",
    "  ::error::indented",
    "##[error]legacy anywhere",
    "x | y | z",
    "\n# heading\n## injected",
    "_under_ *star* [link](http://e) ~~gone~~ $x$",
    "\u202eevil\u2028next",
    "50% of %0A",
]


def runner_would_run(line: str) -> bool:
    """Whether the GitHub runner would read `line` as a workflow command."""
    return line.lstrip().startswith("::") or "##[" in line


def is_our_command(line: str) -> bool:
    return bool(re.fullmatch(r"::(error|warning|notice) [^:\r\n]*::[^\r\n]*", line))


@pytest.mark.parametrize("hostile", HOSTILE)
def test_terminal_lines_hold_no_control_character(hostile: str) -> None:
    shown = terminal_line(hostile)
    assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in shown)
    assert "\u202e" not in shown and "\u2028" not in shown
    assert "\n" not in shown and "\r" not in shown


def test_visible_shows_what_it_escapes() -> None:
    assert visible("a\nb\rc\x1b[0m\td") == "a\\nb\\rc\\x1b[0m\td"
    assert visible("a\tb", keep_tabs=False) == "a\\tb"
    assert visible("plain é") == "plain é"


def test_terminal_keeps_only_colour_codes_when_colour_is_on() -> None:
    ours = "\x1b[32mPASS\x1b[0m"
    assert terminal_line(ours, markup=True) == ours
    assert terminal_line(ours + "\x1b]0;t\x07\r", markup=True) == ours + "\\x1b]0;t\\x07\\r"
    assert terminal_line(ours, markup=False) == "\\x1b[32mPASS\\x1b[0m"


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_plain_line_never_starts_a_workflow_command(hostile: str) -> None:
    for line in terminal_line(hostile).splitlines() or [""]:
        assert not runner_would_run(github_plain(line))
        assert not runner_would_run(github_line(line)) or is_our_command(github_line(line))


def test_well_formed_commands_pass_and_plain_text_keeps_its_words() -> None:
    command = ci.workflow_command("error", "a.py", 3, "t: x", "\n::error file=X::Y")
    assert github_line(command) == command
    assert is_our_command(command) and "\n" not in command
    assert github_plain("::error::x") == ": :error::x"
    assert github_plain("  ::x::y") == "  : :x::y"
    assert github_plain("see ##[group]") == "see ## [group]"
    assert github_line("::error file=a::##[error]") == "::error file=a::##[error]"
    assert github_line("::error file=a::x\n##[error]") == ": :error file=a::x\n## [error]"


@given(st.text())
def test_commands_from_any_text_are_one_well_formed_line(message: str) -> None:
    command = ci.workflow_command("error", message or "f", 1, message, message)
    assert "\n" not in command and "\r" not in command
    assert escape_data(message).count("%") >= message.count("%")
    assert ":" not in escape_property(message) and "," not in escape_property(message)


def test_json_for_the_log_stays_json() -> None:
    import json

    raw = json.dumps({"m": "##[error]x", "n": "\n::error::y"}, indent=2)
    safe = github_json(raw)
    assert json.loads(safe) == json.loads(raw)
    assert not any(runner_would_run(line) for line in safe.splitlines())


def cells(row: str) -> list[str]:
    """A GitHub-flavoured Markdown table row split on its unescaped pipes."""
    return re.split(r"(?<!\\)\|", row.strip().strip("|"))


@pytest.mark.parametrize("hostile", HOSTILE)
def test_markdown_text_and_code_cannot_break_a_row_or_inject(hostile: str) -> None:
    for shown in (md_text(hostile), md_code(hostile)):
        assert "\n" not in shown and "\r" not in shown
        row = f"| {shown} | next |"
        assert len(cells(row)) == 2, row
    plain = md_text(hostile)
    assert not re.search(r"<[a-zA-Z/!?]", plain)  # no raw HTML tag
    assert not re.search(r"(?<!\\)[`*_\[\]~$]", plain)  # no live Markdown


def test_code_spans_fence_past_backticks() -> None:
    assert md_code("a`b") == "`` a`b ``"
    assert md_code("") == "` `"
    assert md_code("x|y") == "`x\\|y`"
    assert md_code("x|y", cell=False) == "`x|y`"
    assert md_text('a & "b" <i>') == 'a &amp; "b" &lt;i>'
    # An arc reads as itself in the Markdown source, not as an entity.
    assert md_text("branch 2->4 not taken") == "branch 2->4 not taken"


# -- through the renderers: step summary, Markdown export, terminal text ----------------

FILE = "src/pkg/calc.py"
DANGER = "\n::error file=X::Y\r\x1b[31m`<img src=x onerror=alert(1)>`|\n# injected"


def hostile_ratchet() -> Ratchet:
    fact = Fact("test.failed", "tests/t.py::test_a[::error]", "passed", "failed", message=DANGER)
    todo = Quest(
        id=f"{FILE}::_under_score_",
        file=FILE,
        qualname="_under_score_",
        first=1,
        last=3,
        fingerprint="fp",
        facts=[fact],
    )
    passed = Quest(
        id=f"{FILE}::very_" + "long_" * 80 + "name",
        file=FILE,
        qualname="very_" + "long_" * 80 + "name",
        first=5,
        last=6,
        fingerprint="fp",
        state=State.PASS,
        passed_at="2026-01-02T03:04:05Z",
        covering_tests=["t"],
    )
    return Ratchet(quests={q.id: q for q in (todo, passed)})


def outside_code(markdown: str) -> str:
    """`markdown` without its code spans (their content is shown literally, HTML too)."""
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", markdown)


def assert_markdown_safe(markdown: str, headings: set[str]) -> None:
    assert "\r" not in markdown and "\x1b" not in markdown
    assert not re.search(r"<[a-zA-Z/!?]", outside_code(markdown))  # no raw HTML
    for line in markdown.splitlines():
        if line.startswith("#"):
            assert line.split(" ", 1)[0] in headings, line
            assert not line.startswith("# injected"), line
        if line.startswith("|") and not line.startswith("|---"):
            assert line.endswith("|"), line


def test_step_summary_of_hostile_regressions_and_tests() -> None:
    ratchet = hostile_ratchet()
    from pytest_quest.core.model import FunctionFacts

    passed = next(q for q in ratchet.quests.values() if q.state is State.PASS)
    measured = FunctionFacts(
        file=FILE, qualname=passed.qualname, ordinal=1, start=5, first=5, last=6,
        fingerprint="fp", statements=2, branches=0, missing_lines=[6],
    )  # fmt: skip
    report = check_ratchet(ratchet, [measured])
    outcome = ci.check_outcome(report, ratchet, False, {f"tests/t.py::a[{DANGER}]": "failed"})
    outcome.data["regressions"][0]["facts"][0]["message"] = DANGER
    summary = ci.step_summary(outcome)
    assert_markdown_safe(summary, {"##", "###"})
    items = [line for line in summary.splitlines() if line.lstrip().startswith("- `")]
    assert len(items) >= 2, summary  # the regression and its fact, each one line
    for line in outcome.lines:
        for physical in terminal_line(line).splitlines():
            assert not runner_would_run(github_line(physical))


def test_markdown_export_of_hostile_facts() -> None:
    ratchet = hostile_ratchet()
    regressions = [
        {"id": f"{FILE}::x", "passed_at": DANGER, "facts": [{"field": DANGER, "actual": DANGER}]}
    ]
    markdown = render_markdown(ratchet, regressions, "now")
    assert_markdown_safe(markdown, {"#", "##", "###"})
    rows = [line for line in markdown.splitlines() if line.startswith("| `")]
    assert rows and all(len(cells(row)) == 5 for row in rows), rows


def test_terminal_text_of_hostile_facts() -> None:
    ratchet = hostile_ratchet()
    quest = ratchet.quests[f"{FILE}::_under_score_"]
    lines = text.quest_text(quest, 3, {}) + text.facts_text(quest.facts)
    lines += text.draw_status(text.status_view(ratchet), 3, markup=False, width=100).splitlines()
    assert (
        sum("::error file=X::Y" in line for line in lines) == 2
    )  # next; status shows no TODO facts
    for line in lines:
        assert "\x1b" not in line and "\r" not in line
        assert not line.lstrip().startswith("::")


def test_encodable_escapes_only_what_the_encoding_lacks() -> None:
    from pytest_quest.report.escape import encodable

    assert encodable("café ✓", "cp1252") == "café \\u2713"
    assert encodable("café ✓", "ascii") == "caf\\xe9 \\u2713"
    assert encodable("café ✓", "utf-8") == "café ✓"
    assert encodable("café", "no-such-codec") == "caf\\xe9"


def test_encodable_escapes_only_what_the_encoding_cannot_write() -> None:
    from pytest_quest.report.escape import encodable

    assert encodable("\u2713 caf\u00e9", "latin-1") == "\\u2713 caf\u00e9"
    assert encodable("\u2713 caf\u00e9", "utf-8") == "\u2713 caf\u00e9"
    assert encodable("\u2713", None) == "\u2713"
    assert encodable("\u2713", "") == "\u2713"
    assert encodable("plain", "no-such-encoding") == "plain"


def test_an_unknown_encoding_gets_ascii_escapes() -> None:
    from pytest_quest.report.escape import encodable

    assert encodable("\u2713 caf\u00e9", "no-such-encoding") == "\\u2713 caf\\xe9"
