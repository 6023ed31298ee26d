"""Names and messages from strangers through every command and format.

The ratchet file refuses hostile ids (tests/e2e/test_store_corruption.py),
so what still reaches the output is what passes the grammar but is dangerous
in a medium (``_under_score_`` and ``*`` for Markdown, a 400-character name)
and what tests say: parametrize ids such as ``[::error file=X::Y]`` and
exception messages holding ``\\n::error``, ``\\r``, ANSI escapes, backticks and
``<img onerror=...>``.  One project is taken through submit (FAIL with those
facts), next, status, export (JSON, CSV, Markdown, SARIF) and check under
GitHub Actions (annotations and step summary), text and JSON; each output is
checked against what its medium's reader would do with it.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.app.export import export
from tests.support.contexts import app_context
from tests.support.projects import Project
from tests.support.runner import parse_json, run_pytest

LONG = "very_" + "long_" * 80 + "name"
CALC = f"""\
def _under_score_(x):
    if x > 0:
        return 1
    return 0


def {LONG}(x):
    return x
"""
# pytest keeps the last line of an import error: the attack is on that line.
MESSAGE = "x\\n::error file=A::B\\r::error file=X::Y\\x1b[31mred`<img src=x onerror=alert(1)>`| ##[error]z"
HOSTILE_TEST = f"""\
import pytest

from pkg.calc import _under_score_


@pytest.mark.parametrize(
    "v", [1, -1], ids=["::error file=X::Y", "`<img src=x onerror=alert(1)>`|##[error]"]
)
def test_hostile(v):
    assert _under_score_(v) in (0, 1)
    raise AssertionError("{MESSAGE}")
"""
TEST_LONG = f"""\
from pkg.calc import {LONG}


def test_long():
    assert {LONG}(2) == 2
"""
# A test module that cannot be imported: its error message becomes a fact of the submit.
BROKEN_TEST = f"""\
from pkg.calc import _under_score_

raise ImportError("{MESSAGE}")
"""
UNDER = "src/pkg/calc.py::_under_score_"
LONG_ID = f"src/pkg/calc.py::{LONG}"


def runner_would_run(line: str) -> bool:
    """Whether the GitHub runner would read `line` as a workflow command."""
    return line.lstrip().startswith("::") or "##[" in line


def is_our_command(line: str) -> bool:
    return bool(re.fullmatch(r"::(error|warning|notice) [^:\r\n]*::[^\r\n]*", line))


def assert_log_safe(text: str) -> None:
    for line in text.split("\n"):
        assert "\r" not in line and "\x1b" not in line, repr(line)
        assert not runner_would_run(line) or is_our_command(line), repr(line)


def outside_code(markdown: str) -> str:
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", markdown)


def assert_markdown_safe(markdown: str, headings: tuple[str, ...]) -> None:
    assert "\r" not in markdown and "\x1b" not in markdown
    assert not re.search(r"<[a-zA-Z/!?]", outside_code(markdown)), markdown
    for line in markdown.splitlines():
        if line.startswith("#"):
            assert line.startswith(headings), line
        if line.startswith("|"):
            assert line.endswith("|"), line


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """Scanned (the long name PASS at once), ``_under_score_`` refused a hostile import error,
    then FAILed by tests that fail with the same hostile message."""
    project = Project(tmp_path_factory.mktemp("hostile") / "project")
    project.source("calc", CALC)
    project.test("test_long", TEST_LONG)
    result = project.run("--quest", "scan")
    assert result.ret == 0, result.stdout.str()
    project.test("test_hostile", BROKEN_TEST)
    result = project.run("--quest", "submit", f"--quest-id={UNDER}")
    # A collection error of the submission: shown, nothing judged, no try spent.
    assert result.ret == 4, result.stdout.str()
    out = result.stdout.str() + result.stderr.str()
    assert "collection error" in out and "::error file=X::Y" in out
    assert "\x1b" not in out and "\n::error" not in out
    project.test("test_hostile", HOSTILE_TEST)  # from now on: failing tests with hostile ids
    result = project.run("--quest", "submit", f"--quest-id={UNDER}")
    assert result.ret == 1, result.stdout.str()  # FAIL: the hostile tests fail with MESSAGE
    return project


def test_submit_and_next_text_are_plain_lines(
    judged: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = judged.run("--quest", "next", f"--quest-id={UNDER}")
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    assert_log_safe(out + "\n" + result.stderr.str())
    assert "::error file=X::Y" in out  # shown, escaped, never a command
    assert "\\x1b[31m" in out  # shown escaped, never obeyed


def test_json_outputs_keep_the_text_and_stay_safe(
    judged: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    outputs: dict[str, dict[str, Any]] = {}
    commands = {"next": ("--quest", "next", f"--quest-id={UNDER}"), "status": ("--quest-status",)}
    for command, args in commands.items():
        result = run_pytest(judged.path, *args, "--quest-format", "json")
        outputs[command] = data = parse_json(result)
        assert_log_safe(result.stdout.str())
        assert "quest" in data or "quests" in data
    facts = outputs["next"]["quest"]["facts"]  # the same next, not run twice
    assert any("Y\x1b[31mred" in (fact.get("message") or "") for fact in facts)  # JSON: exact


def test_status_text(judged: Project) -> None:
    result = judged.run("--quest-status")
    assert result.ret == 0
    assert_log_safe(result.stdout.str())
    assert "src/pkg/calc.py" in result.stdout.str()


def test_exports(judged: Project) -> None:
    folder = Path(judged.path)
    # One export through a whole pytest; the others in-process on app.export (export
    # runs no test), from the same ratchet file.
    result = judged.run("--quest", "export", f"--quest-export-to={folder / 'report.html'}")
    assert result.ret == 0, result.stdout.str()
    for suffix in ("md", "csv", "sarif", "json"):
        target = folder / f"report.{suffix}"
        output = export(app_context(folder, "export", export_to=str(target)))
        assert output.exitcode == 0, output.lines
    page = (folder / "report.html").read_text()
    assert "<img src=x" not in page  # HTML-escaped (report/html.py, another issue's)
    markdown = (folder / "report.md").read_text()
    assert_markdown_safe(markdown, ("# pytest-quest report", "## "))
    assert r"\_under\_score\_" in markdown or "`src/pkg/calc.py::_under_score_`" in markdown
    rows = list(csv.DictReader(io.StringIO((folder / "report.csv").read_text())))
    assert {row["id"] for row in rows} == {UNDER, LONG_ID}
    sarif = json.loads((folder / "report.sarif").read_text())
    texts = [r["message"]["text"] for r in sarif["runs"][0]["results"]]
    assert any(UNDER in text for text in texts)
    exported = json.loads((folder / "report.json").read_text())
    assert {q["id"] for q in exported["quests"]} == {UNDER, LONG_ID}


@pytest.mark.children_measured
def test_check_under_github_actions(
    judged: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    broken = judged.test("test_broken", BROKEN_TEST)
    result = judged.run("--quest", "check", "--tb=no", "-rN")
    assert result.ret == 2, result.stdout.str()  # interrupted by the collection error
    assert_log_safe(result.stdout.str() + "\n" + result.stderr.str())
    assert "::error file=X::Y" in result.stdout.str()
    assert_markdown_safe(summary.read_text(), ("## pytest-quest check", "### "))
    broken.unlink()
    summary.unlink()
    (Path(judged.path) / "tests" / "test_long.py").unlink()  # the long-named PASS regresses
    result = judged.run(  # outside the rootdir: needs force
        "--quest", "check", "--tb=no", "-rN", f"--quest-export-to={tmp_path / 'c.md'}",
        "--quest-export-force",
    )  # fmt: skip
    assert result.ret == 1, result.stdout.str()  # the hostile test fails
    out = result.stdout.str() + "\n" + result.stderr.str()
    assert_log_safe(out)
    assert "test_hostile[::error file=X::Y]" in out  # listed, never at a line's start
    assert f"REGRESSION {LONG_ID}" in out
    assert f"title=pytest-quest regression%3A {LONG}::" in out
    assert f"report written to {(tmp_path / 'c.md').resolve()} (outside the rootdir" in out
    assert_markdown_safe(summary.read_text(), ("## pytest-quest check", "### "))
    assert_markdown_safe((tmp_path / "c.md").read_text(), ("# pytest-quest report", "## ", "### "))
    result = run_pytest(judged.path, "--quest", "check", "--tb=no", "-rN", "--quest-format", "json")
    assert_log_safe(result.stdout.str() + "\n" + result.stderr.str())
    assert parse_json(result)["tests_failed"]
