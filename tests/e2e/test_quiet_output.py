"""Quiet, correct output: commands that run no test print no pytest header or summary line.

Also: pytest's exit status for positional paths that do not exist and for a
scan whose tests fail, counted nouns, long error lists summarised, and a
rescan naming the PASS functions that regressed.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from tests.support.projects import CALC, DOUBLE, TEST_DOUBLE, Project, scanned_template
from tests.support.runner import assert_quiet

SIGN = "src/pkg/calc.py::sign"


def build(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_calc", TEST_DOUBLE)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, Any]]:
    project, data = scanned_template(tmp_path_factory, build)
    return project, data


@pytest.fixture
def scanned(template: tuple[Project, dict[str, Any]], project: Project) -> Project:
    return project.fill_from(template[0])


QUIET_COMMANDS = [
    ("--quest", "next"),
    ("--quest", "status"),
    ("--quest-status",),
    ("--quest", "export", "--quest-export-to", "report.json"),
]


SESSION_HOOKS = """
import os

def pytest_configure(config):
    with open(os.path.join(str(config.rootpath), "hooks.log"), "a") as log:
        log.write("configure\\n")

def pytest_sessionstart(session):
    with open(os.path.join(str(session.config.rootpath), "hooks.log"), "a") as log:
        log.write("sessionstart\\n")
"""


def assert_session_only_for_export(scanned: Project, args: tuple[str, ...]) -> None:
    """`status` and `next` answer as ``pytest --version`` does: no plugin is configured and
    no session starts (plugin/sessionless.py); a command that needs a session (export)
    still has one: the conftest is loaded and configured."""
    log = scanned.path / "hooks.log"
    if "export" in args:
        assert log.read_text().splitlines() == ["configure", "sessionstart"]
    else:
        assert not log.exists()


@pytest.mark.parametrize("args", QUIET_COMMANDS)
def test_commands_that_run_no_test_print_no_header_in_text_mode(
    scanned: Project, args: tuple[str, ...]
) -> None:
    (scanned.path / "conftest.py").write_text(SESSION_HOOKS)
    result = scanned.run(*args)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert_quiet(result)
    first = result.stdout.lines[0]
    assert first.startswith(("2 quests: 1 TODO, 1 PASS", "export: 2 quests written")), first
    assert_session_only_for_export(scanned, args)


@pytest.mark.parametrize("args", QUIET_COMMANDS)
def test_commands_that_run_no_test_print_one_json_object_and_no_header(
    scanned: Project, args: tuple[str, ...]
) -> None:
    (scanned.path / "conftest.py").write_text(SESSION_HOOKS)
    result = scanned.run(*args, "--quest-format", "json")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert_quiet(result)
    data = json.loads(result.stdout.str())
    assert isinstance(data, dict)
    if "export" not in args:
        assert data["counts"]["TODO"] == 1
    assert_session_only_for_export(scanned, args)


# A submit prints no header either, after its child ran the tests: asserted on the PASS
# submits of test_loop.py (text) and test_smoke.py (JSON), which run one anyway.


def test_a_person_action_prints_no_header(scanned: Project) -> None:
    # No terminal: the person action is refused, quietly, with a usage error.
    result = scanned.run("--quest-reopen", DOUBLE, "--quest-reason", "why")
    assert result.ret == 4
    assert_quiet(result)


@pytest.mark.parametrize("args", [("--quest", "status"), ("--quest", "next"), ("--quest", "scan")])
@pytest.mark.children_measured
def test_a_positional_path_that_does_not_exist_is_a_usage_error_as_in_pytest(
    scanned: Project, args: tuple[str, ...]
) -> None:
    result = scanned.run(*args, "nonexistent_path")
    assert result.ret == 4
    assert "file or directory not found: nonexistent_path" in result.stderr.str()


def test_a_positional_path_that_does_not_exist_gets_one_json_object(scanned: Project) -> None:
    result = scanned.run("--quest", "status", "no/such/dir", "--quest-format", "json")
    assert result.ret == 4
    data = json.loads(result.stdout.str())
    assert data["error"] == "file or directory not found: no/such/dir"


def test_positional_paths_that_exist_are_fine(scanned: Project) -> None:
    result = scanned.run("--quest", "status", "tests/test_calc.py::test_double", "tests")
    assert result.ret == 0, result.stderr.str()


def test_scan_counts_its_nouns_right(scanned: Project) -> None:
    (scanned.path / "quest.json").unlink()
    result = scanned.run("--quest", "scan")
    assert result.ret == 0
    text = result.stdout.str()
    assert "scan: 1 new quest, 1 function fully covered (PASS baseline), 0 removed" in text


def test_scan_exits_with_pytests_status_when_tests_fail_and_still_records(scanned: Project) -> None:
    (scanned.path / "quest.json").unlink()
    scanned.test("test_broken", "def test_broken():\n    assert False\n")
    result = scanned.run("--quest", "scan")
    assert result.ret == 1, result.stdout.str()
    assert "1 test did not pass; what it executed does not count" in result.stdout.str()
    assert set(scanned.ratchet()["quests"]) == {DOUBLE, "src/pkg/calc.py::sign"}


def test_scan_in_json_mode_exits_with_pytests_status_too(scanned: Project) -> None:
    scanned.test("test_broken", "def test_broken():\n    assert False\n")
    result, data = scanned.run_json("--quest", "scan")
    assert result.ret == 1
    assert data["tests_not_passed"] == ["tests/test_broken.py::test_broken"]


@pytest.mark.children_measured
def test_a_rescan_names_pass_functions_that_regressed_and_keeps_them_pass(scanned: Project) -> None:
    (scanned.path / "tests" / "test_calc.py").write_text("def test_nothing():\n    pass\n")
    result = scanned.run("--quest", "scan")
    assert result.ret == 0, result.stdout.str()
    text = result.stdout.str()
    assert "1 PASS function no longer fully covered" in text
    assert f"  regressed: {DOUBLE}" in text
    assert "pytest --quest check" in text
    assert scanned.ratchet()["quests"][DOUBLE]["state"] == "PASS"
    result, data = scanned.run_json("--quest", "scan")
    assert data["regressed"] == [DOUBLE]


@pytest.mark.children_measured
def test_many_collection_errors_are_summarised(scanned: Project) -> None:
    for number in range(69):
        scanned.test(f"test_broken_{number:02}", f"import missing_module_{number:02}\n")
    shutil.rmtree(scanned.path / "tests" / "__pycache__", ignore_errors=True)
    result = scanned.run("--quest", "scan")
    assert result.ret == 4
    text = result.stdout.str() + result.stderr.str()
    error = next(line for line in text.splitlines() if "collection error" in line)
    assert len(error) < 600, error
    assert error.startswith("ERROR: 69 collection errors in the tests")
    assert "missing_module_00" in error
    assert "and 64 more" in error
    assert "missing_module_68" not in error


@pytest.mark.children_measured
def test_the_old_verifier_ini_name_warns_once_and_still_works(scanned: Project) -> None:
    pyproject = scanned.path / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            'quest_source = ["src/pkg"]\n',
            'quest_source = ["src/pkg"]\nquest_verifier_cmds = ["my-verifier --check"]\n',
        )
    )
    result = scanned.run("--quest", "status")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    text = result.stdout.str()
    assert (
        text.count("the ini option quest_verifier_cmds is deprecated: rename it quest_verifier_cmd")
        == 1
    )
    assert text.count("PytestDeprecationWarning") == 1
    assert "test session starts" not in text


@pytest.mark.parametrize("columns", ["40", "100"])
def test_status_fits_the_terminal_width_in_ascii_when_piped(
    scanned: Project, monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    result = scanned.run("--quest", "status")
    assert result.ret == 0
    text = result.stdout.str()
    assert text.isascii(), text
    assert all(len(line) <= int(columns) for line in result.stdout.lines), text
    assert "src/pkg/calc.py" in text


# `status` and `next` without a pytest session, and export with one: the QUIET_COMMANDS
# tests above (assert_session_only_for_export).


@pytest.mark.children_measured
def test_sessionless_status_keeps_plain_lines_without_pytest_terminal(scanned: Project) -> None:
    result = scanned.run("--quest-status", "-p", "no:terminal")
    assert result.ret == 0, result.stderr.str()
    assert result.stdout.lines[0].startswith("2 quests: 1 TODO, 1 PASS"), result.stdout.str()


def test_sessionless_errors_keep_the_session_s_exit_statuses(scanned: Project) -> None:
    (scanned.path / "quest.json").write_text("{not json")
    result = scanned.run("--quest-status")
    assert result.ret == 4
    assert "quest.json" in result.stdout.str() + result.stderr.str()
    bad = scanned.run("--quest", "next", "--quest-max-tries", "0")
    assert bad.ret == 4
    assert "--quest-max-tries" in bad.stderr.str() + bad.stdout.str()
