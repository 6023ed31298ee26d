"""The HTML report (``report/html.py``, ``report/chart.py``): structure, escaping, no network.

Parsed with the standard library's ``html.parser``; the page is checked as a
tree of tags, not as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from html.parser import HTMLParser
from typing import Any

import pytest

from pytest_quest.core.model import Event, Fact, Ratchet, State
from pytest_quest.report import chart
from pytest_quest.report.html import CSP, render_html
from tests.support.quests import make_quest

EVIL = '<script>alert("x")</script>&"\''
VOID = {"meta", "br", "img", "input", "link", "hr", "line", "polyline", "col", "wbr"}


class Page(HTMLParser):
    """Every tag with its attributes and parents, the text under each, and nesting errors."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str], tuple[str, ...]]] = []
        self.stack: list[str] = []
        self.texts: list[tuple[tuple[str, ...], str]] = []
        self.errors: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}, tuple(self.stack)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}, tuple(self.stack)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.texts.append((tuple(self.stack), data))

    def find(self, tag: str, **attrs: str) -> list[tuple[dict[str, str], tuple[str, ...]]]:
        return [
            (a, parents)
            for t, a, parents in self.tags
            if t == tag and all(a.get(k.rstrip("_")) == v for k, v in attrs.items())
        ]

    def text(self) -> str:
        return "".join(data for _, data in self.texts)


def ratchet() -> Ratchet:
    done = make_quest(
        State.DONE,
        tries=3,
        id="src/pkg/m.py::g",
        qualname="g",
        first=8,
        last=9,
        missing_lines=[9],
        missing_branches=[],
        history=[Event(at="2026-01-03T00:00:00Z", action="submit", verdict="FAIL")],
        facts=[Fact("coverage.line", "src/pkg/m.py:9", "run", "not run", "line 9 not covered")],
    )
    todo = make_quest(
        id="src/pkg/m.py::f",
        facts=[Fact("coverage.line", "src/pkg/m.py:5", "run", "not run", "line 5 not covered")],
    )
    passed = make_quest(
        State.PASS,
        id="src/pkg/n.py::h",
        file="src/pkg/n.py",
        qualname="h",
        first=1,
        last=2,
        missing_lines=[],
        missing_branches=[],
        passed_at="2026-01-01T00:00:00Z",
        covering_tests=["tests/test_n.py::test_h"],
    )
    return Ratchet(quests={q.id: q for q in (todo, done, passed)})


M_LINES = ["import os", "", "def f(x):", "    if x:", "        return 1", "    return 2", ""]
SOURCES = {
    "src/pkg/m.py": [*M_LINES, "def g():", "    return 3"],
    "src/pkg/n.py": ["def h():", "    return 4"],
}


def render(
    r: Ratchet | None = None,
    sources: Mapping[str, Sequence[str]] = SOURCES,
    regressions: list[dict[str, Any]] | None = None,
    quests: Iterable[Mapping[str, Any]] = (),
) -> str:
    return render_html(
        r or ratchet(), list(quests), regressions, sources, "2026-01-04T00:00:00Z", "9.9"
    )


def test_the_page_is_well_formed_with_totals_chart_files_and_quests() -> None:
    page = Page(render())
    assert page.errors == [] and page.stack == []
    assert len(page.find("table", id="totals")) == 1
    # The chart is inline SVG inside the progress figure.
    ((svg, parents),) = page.find("svg")
    assert "figure" in parents
    assert len(page.find("polyline")) == 2
    # The files table links to one section per file.
    links = [a["href"] for a, parents in page.find("a") if "table" in parents]
    assert links == ["#file-0", "#file-1"]
    assert {a["id"] for a, _ in page.find("section")} == {"file-0", "file-1"}
    # One <details> per quest; open unless PASS.
    quests = page.find("details")
    assert [(a["data-state"], "open" in a) for a, _ in quests] == [
        ("TODO", True),
        ("DONE", True),
        ("PASS", False),
    ]


def test_covering_tests_are_counted_in_words() -> None:
    # The PASS quest has one covering test; the TODO quest two.
    r = ratchet()
    r.quests["src/pkg/m.py::f"].covering_tests = ["tests/test_m.py::a", "tests/test_m.py::b"]
    text = Page(render(r)).text()
    assert "1 covering test" in text and "1 covering tests" not in text
    assert "2 covering tests" in text


def test_the_counts_are_in_the_totals_table() -> None:
    html = render()
    start = html.index('<table class="counts" id="totals">')
    page = Page(html[start : html.index("</table>", start) + len("</table>")])
    cells = [data for _, data in page.texts]
    assert cells[:2] == ["state", "quests"]
    assert dict(zip(cells[2::2], cells[3::2])) == {
        "TODO": "1",
        "PASS": "1",
        "REVIEW": "0",
        "DONE": "1",
        "EXCLUDED": "0",
        "total": "3",
        "remaining (TODO)": "1",
    }


def test_source_lines_are_marked() -> None:
    page = Page(render())
    rows = page.find("tr", class_="miss")
    assert [a["title"] for a, _ in rows] == ["line not covered", "line not covered"]
    (partial,) = page.find("tr", class_="partial")
    assert partial[0]["title"] == "branch 4->5 not taken"
    text = page.text()
    assert "line 5 not covered" in text and "line 9 not covered" in text
    assert "    if x:" in text


def test_a_missing_source_file_says_so() -> None:
    page = Page(render(sources={}))
    assert page.text().count("source not available") == 3


def test_the_page_loads_nothing() -> None:
    html = render()
    page = Page(html)
    (meta,) = [a for a, _ in page.find("meta") if a.get("http-equiv") == "Content-Security-Policy"]
    assert meta["content"] == CSP and "default-src 'none'" in CSP
    assert not page.find("script") and not page.find("link") and not page.find("img")
    for tag, attrs, _ in page.tags:
        for name in ("src", "href", "action", "srcset"):
            value = attrs.get(name, "")
            assert not value or value.startswith("#"), (tag, name, value)
    assert "url(" not in html and "@import" not in html


def test_every_string_is_escaped() -> None:
    evil = ratchet()
    quest = evil.quests["src/pkg/m.py::f"]
    quest.qualname = EVIL
    quest.facts = [Fact("x", EVIL, EVIL, EVIL, EVIL)]
    quest.history = [Event(at=EVIL, action="exclude", by=EVIL, reason=EVIL)]
    quest.state = State.EXCLUDED
    sources = {"src/pkg/m.py": [EVIL] * 9, "src/pkg/n.py": SOURCES["src/pkg/n.py"]}
    regressions = [{"id": EVIL, "passed_at": EVIL, "facts": [{"field": EVIL, "message": EVIL}]}]
    html = render(evil, sources, regressions, quests=[{"id": quest.id, "weaker_policy": EVIL}])
    page = Page(html)
    assert page.errors == []
    assert not page.find("script")
    assert "<script>" not in html
    assert EVIL in page.text()  # shown as text, after unescaping
    assert f"excluded by {EVIL}" in page.text()
    assert "weaker policy" in page.text()


def test_regressions_are_listed_after_a_check() -> None:
    page = Page(render(regressions=[]))
    assert page.find("section", id="regressions")
    assert "every PASS function is still fully covered" in page.text()
    assert not Page(render()).find("section", id="regressions")


# -- the chart -------------------------------------------------------------------


def test_progress_counts_settled_quests_by_date() -> None:
    points, undated = chart.progress(ratchet())
    assert undated == 0
    assert [(p.at.day, p.passed, p.settled) for p in points] == [(1, 1, 1), (3, 1, 2)]


def test_settled_quests_without_a_date_are_counted_apart() -> None:
    r = ratchet()
    r.quests["src/pkg/m.py::g"].history = []
    r.quests["src/pkg/n.py::h"].passed_at = "not a date"
    points, undated = chart.progress(r)
    assert (points, undated) == ([], 2)
    page = Page(render(r))
    assert "no settled quest with a recorded date yet" in page.text()
    assert "2 settled quests have no recorded date" in page.text()


def test_quests_settled_at_one_moment_make_one_point() -> None:
    r = ratchet()
    r.quests["src/pkg/m.py::g"].history[-1].at = "2026-01-01T00:00:00+00:00"
    points, _ = chart.progress(r)
    assert [(p.passed, p.settled) for p in points] == [(1, 2)]
    page = Page(chart.svg(points, 3))
    # One moment: the start label only, the steps flat to the right edge.
    assert [d for _, d in page.texts].count("2026-01-01 00:00") == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T06:55:01Z", datetime(2026, 11, 30, 6, 55, 1, tzinfo=timezone.utc)),
        ("2026-11-30T07:55:01+01:00", datetime(2026, 11, 30, 6, 55, 1, tzinfo=timezone.utc)),
        ("2026-11-30T06:55:01", datetime(2026, 11, 30, 6, 55, 1, tzinfo=timezone.utc)),
        ("", None),
        ("yesterday", None),
    ],
)
def test_parse_time(text: str, expected: datetime | None) -> None:
    assert chart.parse_time(text) == expected


def test_the_step_lines_rise_with_each_settled_quest() -> None:
    points, _ = chart.progress(ratchet())
    page = Page(chart.svg(points, 3))
    lines = {a["class"]: a["points"] for a, _ in page.find("polyline")}
    ys = sorted({float(pair.split(",")[1]) for pair in lines["settled"].split()}, reverse=True)
    assert len(ys) == 3  # 0, 1, 2 settled
    assert lines["passed"].split()[-1].startswith("704.0,")  # flat to the right edge
    assert chart.svg([], 0).count("<text") == 1


def test_excluded_lines_and_a_missing_line_with_a_branch() -> None:
    r = ratchet()
    quest = r.quests["src/pkg/m.py::f"]
    quest.missing_lines = [4]
    quest.missing_branches = [(4, 5)]
    quest.excluded_lines = [6]
    page = Page(render(r))
    (miss,) = [a for a, _ in page.find("tr", class_="miss") if "4->5" in a["title"]]
    assert miss["title"] == "line not covered; branch 4->5 not taken"
    (excluded,) = page.find("tr", class_="excluded")
    assert excluded[0]["title"] == "excluded from coverage"


def test_a_todo_quest_is_not_settled() -> None:
    assert chart.settled_at(ratchet().quests["src/pkg/m.py::f"]) is None


def test_control_and_bidirectional_characters_are_shown_not_obeyed() -> None:
    """A name or fact with ESC or U+202E (Trojan Source) shows its bytes on the page."""
    hidden = "f\x1b[2Jx\u202eevil"
    quest = ratchet().quests["src/pkg/m.py::f"]
    page_ratchet = ratchet()
    page_ratchet.quests[quest.id].facts = [Fact("x", hidden, hidden, hidden, hidden)]
    sources = {
        "src/pkg/m.py": [f"    return '{hidden}'"] * 9,
        "src/pkg/n.py": SOURCES["src/pkg/n.py"],
    }
    html = render(page_ratchet, sources, [], quests=[])
    assert "\x1b" not in html and "\u202e" not in html
    assert "\\x1b[2Jx\\u202eevil" in Page(html).text()
