"""``pytest --quest export --quest-export-to report.html``: one self-contained page.

The page's structure is checked with ``html.parser`` (always), and the page is
rendered by a real headless browser where one is installed (Chromium from the
system's packages, ``/usr/bin/chromium``), with every host unresolvable: it must
show the chart and the quest's marked source without the network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support.projects import CALC, TEST_DOUBLE, Project, scanned_template

CHROMIUM = Path("/usr/bin/chromium")


def calc_project(project: Project) -> None:
    project.source("calc", "\n" + CALC)
    project.test("test_double", TEST_DOUBLE)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the calc project (double PASS, sign TODO), written by the real command."""
    project, _ = scanned_template(tmp_path_factory, calc_project)
    result, data = project.run_json("--quest", "export", "--quest-export-to", "report.html")
    assert result.ret == 0, data
    assert data["format"] == "html"
    return project.path / "report.html"


class Tags(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    handle_startendtag = handle_starttag

    def all(self, tag: str) -> list[dict[str, str]]:
        return [attrs for name, attrs in self.tags if name == tag]


def test_the_report_is_one_page_with_chart_files_and_marked_source(report: Path) -> None:
    text = report.read_text(encoding="utf-8")
    page = Tags(text)
    assert len(page.all("svg")) == 1 and len(page.all("polyline")) == 2
    assert [a["data-state"] for a in page.all("details")] == ["PASS", "TODO"]
    # sign (lines 6-9) never runs: lines 7-9 missing, line 7's two branches not taken.
    assert [a["title"] for a in page.all("tr") if a.get("class") == "miss"] == [
        "line not covered; branch 7->8 not taken; branch 7->9 not taken",
        "line not covered",
        "line not covered",
    ]
    assert not page.all("script") and not page.all("link") and not page.all("img")
    assert all(not a.get("href") or a["href"].startswith("#") for a in page.all("a"))


@pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="no headless browser: /usr/bin/chromium is not installed "
    "(apt-get install chromium to run this test)",
)
def test_a_headless_browser_renders_it_without_the_network(report: Path, tmp_path: Path) -> None:
    # Chromium puts a socket in TMPDIR: a path over 107 bytes (the per-test TMPDIR of
    # tests/conftest.py) makes it abort ("Socket path too long").
    short = Path(tempfile.mkdtemp(prefix="quest-chromium-", dir="/tmp"))
    try:
        _render(report, tmp_path, dict(os.environ, TMPDIR=str(short)))
    finally:
        shutil.rmtree(short, ignore_errors=True)


def _render(report: Path, tmp_path: Path, env: dict[str, str]) -> None:
    base = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",  # the test may run as root
        "--disable-gpu",
        "--disable-extensions",
        "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # any request to a host fails
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    url = report.resolve().as_uri()
    dom = subprocess.run(
        [*base, "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    rendered = Tags(dom.stdout)
    assert len(rendered.all("svg")) == 1 and len(rendered.all("polyline")) == 2
    assert any(a.get("class") == "miss" for a in rendered.all("tr"))
    assert "def sign(x):" in dom.stdout
    shot = tmp_path / "report.png"
    subprocess.run(
        [*base, f"--screenshot={shot}", "--window-size=1200,1400", url],
        capture_output=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
