"""A command that runs the suite checks its inputs first, and says when it ran no test.

Each project has a test that leaves a file behind when it runs: a usage error
found before the suite leaves no such file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.support.gitrepo import init_repo
from tests.support.projects import DOUBLE, Project, calc_project, scanned_template

pytestmark = pytest.mark.slow

MARKING = """\
from pathlib import Path


def test_marks():
    (Path(__file__).parent.parent / "a-test-ran").write_text("")
"""


def marked_project(project: Project) -> None:
    calc_project(project)
    project.test("test_marks", MARKING)
    (project.path / ".gitignore").write_text("__pycache__/\n*.lock\na-test-ran\n")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    template, data = scanned_template(tmp_path_factory, marked_project)
    assert data["added_pass"] == [DOUBLE], data
    (template.path / "a-test-ran").unlink()
    init_repo(template.path)
    return template


@pytest.fixture
def scanned(project: Project, template: Project) -> Project:
    return project.fill_from(template)


def refused_before_the_suite(project: Project, *args: str) -> str:
    result, data = project.run_json(*args)
    assert result.ret == 4, data
    assert not (project.path / "a-test-ran").exists(), "the suite ran before the error"
    error: str = data["error"]
    return error


def test_a_bad_since_ref_is_refused_before_any_test_runs(scanned: Project) -> None:
    error = refused_before_the_suite(scanned, "--quest", "check", "--quest-since", "no-such-ref")
    assert "--quest-since no-such-ref: no such commit" in error


def test_a_bad_base_ref_is_refused_before_any_test_runs(scanned: Project) -> None:
    error = refused_before_the_suite(scanned, "--quest", "check", "--quest-base", "no-such-ref")
    assert "no-such-ref" in error


def test_a_bad_audit_since_is_refused_before_any_test_runs(scanned: Project) -> None:
    error = refused_before_the_suite(scanned, "--quest", "audit", "--quest-since", "no-such-ref")
    assert "--quest-since 'no-such-ref'" in error


@pytest.mark.parametrize("command", ["check", "scan", "audit"])
def test_a_damaged_ratchet_file_is_refused_before_any_test_runs(
    scanned: Project, command: str
) -> None:
    path = scanned.path / "quest.json"
    path.write_bytes(path.read_bytes()[:40])
    before = path.read_bytes()
    error = refused_before_the_suite(scanned, "--quest", command)
    assert "quest.json" in error and "not valid JSON" in error
    assert path.read_bytes() == before


def test_a_read_only_ratchet_file_is_refused_before_the_scan_runs(scanned: Project) -> None:
    path = scanned.path / "quest.json"
    before = path.read_bytes()
    os.chmod(path, stat.S_IRUSR | stat.S_IRGRP)
    try:
        error = refused_before_the_suite(scanned, "--quest", "scan")
    finally:
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    assert "is read-only" in error and path.read_bytes() == before


def test_an_export_target_that_cannot_be_written_is_refused_before_the_check(
    scanned: Project,
) -> None:
    error = refused_before_the_suite(scanned, "--quest", "check", "--quest-export-to", "quest.json")
    assert "quest.json" in error


@pytest.mark.parametrize("command", ["check", "scan"])
def test_a_run_that_ran_no_test_says_so_and_records_nothing(scanned: Project, command: str) -> None:
    before = (scanned.path / "quest.json").read_bytes()
    result, data = scanned.run_json("--quest", command, "-k", "no_test_has_this_name")
    assert result.ret == 5, data
    assert data["error"].startswith("no tests ran") and data["tests"] == 0
    assert "regressions" not in data
    assert (scanned.path / "quest.json").read_bytes() == before
    text = scanned.run("--quest", command, "-k", "no_test_has_this_name")
    assert text.ret == 5
    assert any(line.startswith("no tests ran: the") for line in text.stdout.lines)
    assert not any("regressed" in line for line in text.stdout.lines)


def test_the_checks_of_the_inputs_pass_an_honest_run(scanned: Project, tmp_path: Path) -> None:
    # A full run: an incremental one would keep every test's recorded result (nothing changed).
    result, data = scanned.run_json(
        "--quest", "check", "--quest-full", "--quest-since", "main", "--quest-base", "main"
    )
    assert result.ret == 0 and data["ok"] is True, data
    assert (scanned.path / "a-test-ran").exists()
