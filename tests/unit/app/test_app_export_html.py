"""`export --quest-export-to report.html` in-process: the app reads the sources, the report renders."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from app_calc import CLAMP, SIGN, CalcProject

from pytest_quest.app.export import _sources, export


class Rows(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.marked: list[tuple[str, str]] = []
        self.details: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        kind = values.get("class")
        if tag == "tr" and kind in ("miss", "partial"):
            assert kind is not None
            self.marked.append((kind, values.get("title") or ""))
        if tag == "details":
            state = values["data-state"]
            assert state is not None
            self.details.append(state)


def test_export_html_shows_the_marked_source(calc: CalcProject) -> None:
    quest_file = calc.root / "quest.json"
    before = quest_file.read_bytes()
    output = export(calc.context("export", export_to="report.html"))
    assert output.exitcode == 0
    assert output.data["format"] == "html"
    assert quest_file.read_bytes() == before
    html = (calc.root / "report.html").read_text(encoding="utf-8")
    page = Rows(html)
    assert page.details == ["PASS", "TODO", "TODO"]
    # sign: line 6 has both branches missing and lines 7 and 8 are not run.
    assert ("miss", "line not covered") in page.marked
    assert any("6->7 not taken" in title for _, title in page.marked)
    assert SIGN in html and CLAMP in html
    assert "def sign(x):" in html


def test_only_files_inside_the_rootdir_are_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "secret.py").write_text("password = 1\n")
    sources = _sources(root, {"src/a.py", "../secret.py", "src/gone.py"})
    assert sources == {"src/a.py": ["x = 1"]}
