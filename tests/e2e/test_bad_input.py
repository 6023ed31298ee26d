"""Bad input, end to end: each mistake is one clear line naming what is wrong,
exit status 4 (pytest's usage error), and the ratchet file untouched.

The project is scanned once per module (a subprocess in a template folder);
every test works on its own copy of it, so the cases cost one pytest
process each.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.projects import CALC, PYPROJECT_NO_COVERAGE, SIGN, TEST_DOUBLE, Project
from tests.support.quests import ratchet_view
from tests.support.runner import run_pytest as run

PYPROJECT = PYPROJECT_NO_COVERAGE


def make_project(folder: Path, pyproject: str = PYPROJECT) -> Path:
    project = Project(folder, pyproject)
    project.source("calc", CALC)
    project.test("test_calc", TEST_DOUBLE)
    return folder


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = make_project(tmp_path_factory.mktemp("scanned"))
    result = run(folder, "--quest", "scan")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    return folder


@pytest.fixture
def scanned(template: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(template, folder)
    return folder


def assert_usage_error(result: pytest.RunResult, expected: str) -> None:
    output = result.stdout.str() + "\n" + result.stderr.str()
    assert result.ret == 4, output
    # The whole message sits on one line.
    assert any(expected in line for line in output.splitlines()), output
    assert "Traceback (most recent call last)" not in output
    assert "INTERNALERROR" not in output


# One refusal of each layer through a whole pytest (exit 4, one line, no traceback,
# the file untouched): the options, next, scan's source. The other refusals are
# tested in-process: the options' in tests/e2e/test_options.py
# (test_bad_command_line_values_name_the_option_and_the_range), next's and submit's
# on app/ (tests/unit/app/test_app_next.py, test_app_submit.py).
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--quest", "frobnicate"],
            "argument --quest: unknown quest command 'frobnicate' (choose from scan, next,",
        ),
        (
            ["--quest", "next", "--quest-id", "src/pkg/calc.py::nope"],
            (
                "unknown quest id 'src/pkg/calc.py::nope'; "
                "`pytest --quest-status --quest-format json` lists them"
            ),
        ),
        (
            ["--quest", "scan", "--quest-source", "nope"],
            "source nope does not exist (under ",
        ),
        (
            ["--quest", "scan", "--quest-source", "src/pkg/calc.py"],
            "source src/pkg/calc.py is a file; --quest-source and quest_source take a folder",
        ),
    ],
)
@pytest.mark.children_measured
def test_bad_option_is_a_usage_error_and_the_file_is_untouched(
    scanned: Path, args: list[str], expected: str
) -> None:
    before = (scanned / "quest.json").read_bytes()
    result = run(scanned, *args)
    assert_usage_error(result, expected)
    assert (scanned / "quest.json").read_bytes() == before


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ('quest_max_tries = "0"', "ini option quest_max_tries: 0 must be 1 or more"),
        ('quest_format = "yaml"', "ini option quest_format: unknown format 'yaml'"),
    ],
)
def test_bad_ini_value_is_a_usage_error(scanned: Path, setting: str, expected: str) -> None:
    pyproject = scanned / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + setting + "\n")
    before = (scanned / "quest.json").read_bytes()
    assert_usage_error(run(scanned, "--quest", "next"), expected)
    assert (scanned / "quest.json").read_bytes() == before


def test_json_mode_reports_the_error_as_one_object(scanned: Path) -> None:
    before = (scanned / "quest.json").read_bytes()
    result = run(scanned, "--quest", "next", "--quest-id", "nope", "--quest-format", "json")
    assert result.ret == 4
    data = json.loads(result.stdout.str())
    assert data == {
        "schema": "pytest-quest/1",
        "command": "next",
        "error": "unknown quest id 'nope'; `pytest --quest-status --quest-format json` lists them",
    }
    assert (scanned / "quest.json").read_bytes() == before


def test_syntax_error_in_code_no_test_imports(scanned: Path) -> None:
    (scanned / "src" / "pkg" / "broken.py").write_text("x = 1\n\ndef broken(:\n    pass\n")
    before = (scanned / "quest.json").read_bytes()
    result = run(scanned, "--quest", "scan")
    assert_usage_error(
        result, "src/pkg/broken.py:3: syntax error in the code under test: invalid syntax"
    )
    assert (scanned / "quest.json").read_bytes() == before


def test_syntax_error_in_code_a_test_imports_names_the_source_file(scanned: Path) -> None:
    (scanned / "src" / "pkg" / "calc.py").write_text(CALC + "\n\ndef oops(:\n    pass\n")
    before = (scanned / "quest.json").read_bytes()
    result = run(scanned, "--quest", "scan")
    assert_usage_error(result, "src/pkg/calc.py:11: syntax error in the code under test")
    assert (scanned / "quest.json").read_bytes() == before


def test_collection_error_in_the_tests(scanned: Path) -> None:
    (scanned / "tests" / "test_broken.py").write_text("import os\nimport no_such_module_here\n")
    before = (scanned / "quest.json").read_bytes()
    result = run(scanned, "--quest", "scan")
    assert_usage_error(
        result,
        "collection error in the tests (tests/test_broken.py:2: ModuleNotFoundError: "
        "No module named 'no_such_module_here'): fix it, then run the command again",
    )
    assert (scanned / "quest.json").read_bytes() == before


@pytest.mark.children_measured
def test_no_source_configured(tmp_path: Path) -> None:
    folder = make_project(tmp_path, PYPROJECT.replace('quest_source = ["src/pkg"]\n', ""))
    result = run(folder, "--quest", "scan")
    assert_usage_error(
        result,
        "no source configured: pass --quest-source PATH, set quest_source in the "
        "[tool.pytest] or [tool.pytest.ini_options] table of pyproject.toml, or set source in "
        "coverage.py's [run] section",
    )
    assert not (folder / "quest.json").exists()


def test_next_before_any_scan(tmp_path: Path) -> None:
    folder = make_project(tmp_path)
    result = run(folder, "--quest", "next")
    assert_usage_error(result, "quest.json: run `pytest --quest scan` first")
    assert not (folder / "quest.json").exists()


def test_hand_edited_ratchet_file_is_refused_and_kept(scanned: Path) -> None:
    path = scanned / "quest.json"
    data = ratchet_view(path.read_bytes())
    data["quests"][SIGN]["state"] = "WON"
    path.write_text(json.dumps(data, indent=2))
    before = path.read_bytes()
    result = run(scanned, "--quest", "submit", "--quest-id", SIGN)
    assert_usage_error(result, "quests['src/pkg/calc.py::sign'].state: unknown state 'WON'")
    assert path.read_bytes() == before


def test_submit_on_code_with_a_syntax_error(scanned: Path) -> None:
    (scanned / "src" / "pkg" / "calc.py").write_text(CALC.replace("if x < 0:", "if x < 0"))
    before = (scanned / "quest.json").read_bytes()
    result = run(scanned, "--quest", "submit", "--quest-id", SIGN)
    assert_usage_error(result, "src/pkg/calc.py:6: syntax error in the code under test")
    assert (scanned / "quest.json").read_bytes() == before


@pytest.mark.parametrize(
    "args",
    [
        ["--quest", "export", "--quest-export-to", "{outside}"],
        ["--quest", "next", "--quest-id", "{outside}::f"],
    ],
)
@pytest.mark.children_measured
def test_an_option_value_pytest_reads_as_a_test_path_is_refused_with_the_spelling_that_works(
    scanned: Path, tmp_path: Path, args: list[str]
) -> None:
    # pytest chooses the rootdir before it loads the plugin: an existing path
    # after --quest-x would root the run in its folder and miss the ini file.
    outside = tmp_path / "elsewhere" / "report.md"
    outside.parent.mkdir()
    outside.write_text("")
    before = (scanned / "quest.json").read_bytes()
    argv = [arg.format(outside=outside) for arg in args]
    result = run(scanned, *argv)
    flag, value = argv[2], argv[3]
    assert_usage_error(result, f"pytest read the value of {flag} ({value}) as a test path")
    assert f"write {flag}={value}" in result.stderr.str()
    assert (scanned / "quest.json").read_bytes() == before
    # The `=` spelling is read as the option's value only.
    joined = run(scanned, *argv[:2], f"{flag}={value}")
    assert "as a test path" not in joined.stdout.str() + joined.stderr.str()


def test_a_toml_list_in_an_ini_file_is_named_with_the_ini_files_form(tmp_path: Path) -> None:
    folder = make_project(tmp_path, "")
    (folder / "pyproject.toml").unlink()
    (folder / "setup.cfg").write_text(
        '[tool:pytest]\npythonpath = src\nquest_source = ["src/pkg"]\n'
    )
    result = run(folder, "--quest", "scan")
    assert_usage_error(
        result,
        "(setup.cfg, pytest.ini and tox.ini take the folders space-separated, with no "
        "brackets or quotes: `quest_source = src/pkg`)",
    )
    # The ini file's own form scans.
    (folder / "setup.cfg").write_text("[tool:pytest]\npythonpath = src\nquest_source = src/pkg\n")
    assert run(folder, "--quest", "scan").ret == 0
