"""pytest-cov in the same run: its tracer is borrowed, or the run stops saying which flag to drop."""

from __future__ import annotations

import re
import subprocess
from typing import Any

import coverage
import pytest

from tests.support import projects
from tests.support.projects import Project
from tests.support.quests import ratchet_view
from tests.support.runner import child_environ, pytest_command

pytest.importorskip("pytest_cov")
pytestmark = pytest.mark.all_plugins

CALC = "\n" + projects.CALC

TESTS = """
from pkg.calc import double, sign

def test_double():
    assert double(3) == 6

def test_sign_negative():
    assert sign(-5) == -1
"""

NO_BRANCH_PYPROJECT = projects.PYPROJECT_NO_COVERAGE


def quests(project: Project, name: str) -> dict[str, dict[str, Any]]:
    data = ratchet_view((project.path / name).read_bytes())
    return {
        qid: {k: v for k, v in entry.items() if k not in ("issued_at", "passed_at", "extra")}
        for qid, entry in data["quests"].items()
    }


@pytest.fixture
def calc(project: Project) -> Project:
    project.source("calc", CALC)
    project.test("test_calc", TESTS)
    return project


def test_cov_is_reused_and_gives_the_same_quests(calc: Project) -> None:
    result, data = calc.run_json("--quest", "scan", "--quest-file", "plain.json")
    assert result.ret == 0
    result, data = calc.run_json(
        "--quest", "scan", "--quest-file", "with-cov.json", "--cov", "--cov-report=term"
    )
    assert result.ret == 0, result.stderr.str()
    assert "INTERNALERROR" not in result.stderr.str()
    # pytest-cov still reports (to stderr in JSON mode), and nothing else is on stdout.
    assert "TOTAL" in result.stderr.str()
    assert quests(calc, "with-cov.json") == quests(calc, "plain.json")
    sign = quests(calc, "with-cov.json")["src/pkg/calc.py::sign"]
    assert sign["state"] == "TODO"
    assert sign["missing_lines"] == [9]
    assert sign["covering_tests"] == ["tests/test_calc.py::test_sign_negative"]
    # The check runs on the borrowed measurement as well.
    calc.test("test_calc", TESTS.replace("def test_double", "def _not_a_test"))
    result, data = calc.run_json("--quest", "check", "--quest-file", "with-cov.json", "--cov")
    assert result.ret == 1
    assert [r["id"] for r in data["regressions"]] == ["src/pkg/calc.py::double"]
    assert [f["field"] for f in data["regressions"][0]["facts"]] == ["src/pkg/calc.py:3"]


@pytest.mark.children_measured
def test_no_cov_switches_pytest_cov_off_and_quest_measures(calc: Project) -> None:
    result, data = calc.run_json("--quest", "scan", "--cov", "--no-cov")
    assert result.ret == 0, result.stderr.str()
    assert data["counts"]["PASS"] == 1 and data["counts"]["TODO"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--cov", "--cov-context=test"),
            (
                "--cov-context=test cannot be combined with a measuring quest command: "
                "pytest-quest switches one context per test itself; drop --cov-context"
            ),
        ),
    ],
)
def test_unsupported_combinations_stop_with_the_flag_to_drop(
    calc: Project, args: tuple[str, ...], message: str
) -> None:
    result = calc.run("--quest", "scan", *args)
    assert result.ret == 4
    assert message in result.stderr.str()
    assert not (calc.path / "quest.json").exists()


# Three tests run `double`: a measurement that keeps only the first test that ran a line
# (sys.monitoring, or worker data combined without its contexts) names one of them.
SHARED_TESTS = (
    TESTS
    + """
def test_double_again():
    assert double(-1) == -2

def test_double_zero():
    assert double(0) == 0
"""
)


def test_cov_with_xdist_gives_the_quests_of_a_serial_run(calc: Project) -> None:
    calc.test("test_calc", SHARED_TESTS)
    result, _ = calc.run_json("--quest", "scan", "--quest-file", "serial.json")
    assert result.ret == 0, result.stderr.str()
    result, _ = calc.run_json(
        "--quest",
        "scan",
        "--quest-file",
        "xdist.json",
        "--cov=src/pkg",
        "--cov-report=term",
        "-n",
        "2",
    )
    assert result.ret == 0, result.stderr.str()
    assert "TOTAL" in result.stderr.str()  # pytest-cov still reports
    assert quests(calc, "xdist.json") == quests(calc, "serial.json")
    double = quests(calc, "xdist.json")["src/pkg/calc.py::double"]
    assert len(double["covering_tests"]) == 3
    result, data = calc.run_json(
        "--quest", "check", "--quest-file", "xdist.json", "--cov=src/pkg", "-n", "2"
    )
    assert result.ret == 0, result.stderr.str()
    assert data["ok"] is True
    # No worker ran the command itself: one ratchet file each, no other.
    assert sorted(p.name for p in calc.path.glob("*.json")) == ["serial.json", "xdist.json"]


def test_a_project_configured_for_the_sysmon_core_is_measured_per_test_with_cov(
    calc: Project,
) -> None:
    """`[run] core = "sysmon"` (on Python 3.11 coverage.py falls back to its default core,
    on 3.12 and 3.13 when it measures branches): the command runs with a tracing core."""
    calc.test("test_calc", SHARED_TESTS)
    pyproject = projects.PYPROJECT.replace("branch = true\n", 'branch = true\ncore = "sysmon"\n')
    (calc.path / "pyproject.toml").write_text(
        pyproject.replace(
            "[tool.pytest.ini_options]\n", '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'
        )
    )
    result, _ = calc.run_json("--quest", "scan", "--quest-file", "serial.json")
    assert result.ret == 0, result.stderr.str()
    for name, extra in (("cov.json", ()), ("xdist.json", ("-n", "2"))):
        result, _ = calc.run_json("--quest", "scan", "--quest-file", name, "--cov=src/pkg", *extra)
        assert result.ret == 0, result.stderr.str()
        assert quests(calc, name) == quests(calc, "serial.json"), name


def test_cov_without_branches_asks_for_cov_branch(calc: Project) -> None:
    (calc.path / "pyproject.toml").write_text(NO_BRANCH_PYPROJECT)
    result = calc.run("--quest", "scan", "--cov=src/pkg")
    assert result.ret == 4
    assert (
        "--cov measures lines only, and pytest-quest needs branches: add --cov-branch"
        in result.stderr.str()
    )
    assert not (calc.path / "quest.json").exists()
    result, data = calc.run_json("--quest", "scan", "--cov=src/pkg", "--cov-branch")
    assert result.ret == 0, result.stderr.str()
    assert data["counts"]["PASS"] == 1 and data["counts"]["TODO"] == 1


CHILD_TESTS = """
import os
import subprocess
import sys


def run_sign(value):
    code = f"from pkg.calc import sign; print(sign({value}))"
    env = dict(os.environ, PYTHONPATH="src")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)


def test_sign_negative_in_a_child():
    assert run_sign(-5).stdout == "-1\\n"


def test_sign_positive_in_a_child_failing():
    assert run_sign(5).stdout == "99\\n"  # wrong on purpose: counts for nothing
"""


@pytest.mark.children_measured
def test_cov_measures_and_attributes_the_tests_processes_as_without_it(calc: Project) -> None:
    # With --cov, the processes the tests start are still measured
    # for the test that started them (a failing test's for nothing), and the
    # user's `patch = subprocess` neither doubles nor steals their data.
    (calc.path / "pyproject.toml").write_text(
        projects.PYPROJECT + 'patch = ["subprocess"]\nparallel = true\n'
    )
    calc.test("test_calc", TESTS.replace("def test_sign_negative", "def _unused"))
    calc.test("test_child", CHILD_TESTS)
    result, data = calc.run_json("--quest", "scan", "--quest-file", "plain.json")
    assert result.ret == 1, result.stderr.str()  # one test fails on purpose
    result, data = calc.run_json(
        "--quest", "scan", "--quest-file", "with-cov.json", "--cov", "--cov-report=term"
    )
    assert result.ret == 1, result.stderr.str()
    assert "INTERNALERROR" not in result.stderr.str()
    sign = quests(calc, "with-cov.json")["src/pkg/calc.py::sign"]
    assert sign["missing_lines"] == [9]
    assert sign["covering_tests"] == ["tests/test_child.py::test_sign_negative_in_a_child"]
    assert quests(calc, "with-cov.json") == quests(calc, "plain.json")
    # pytest-cov's own report counts the children's lines too, as it would alone
    # (every test, failing ones included): nothing of calc.py is missing there.
    assert re.search(r"src/pkg/calc\.py\s+6\s+0\s", result.stderr.str()), result.stderr.str()


def test_a_command_that_runs_no_test_leaves_pytest_cov_out(calc: Project) -> None:
    # A project whose addopts hold --cov: a command that runs no test prints only its own
    # lines, not pytest-cov's empty measurement and its report of an old data file.
    assert calc.run("--quest", "scan").ret == 0
    (calc.path / ".coverage").unlink(missing_ok=True)
    result = calc.run(
        "--quest",
        "export",
        "--quest-export-to",
        "report.md",
        "--cov",
        "--cov-branch",
        "--cov-report=term",
        "--cov-append",
    )
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 0, output
    assert "tests coverage" not in output
    assert "No data was collected" not in output
    assert not (calc.path / ".coverage").exists()
    assert (calc.path / "report.md").read_text().startswith("#")


def test_a_data_file_named_outside_the_project_is_saved_there(
    calc: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # COVERAGE_FILE outside the project: the suite runs in the sandbox, whose
    # temporary folders are a throwaway layer and the rest read-only; pytest-cov's
    # data is still saved where the user named it, as in a plain pytest run.
    assert calc.run("--quest", "scan").ret == 0
    elsewhere = tmp_path_factory.mktemp("coverage-data")
    for command in ("scan", "check"):
        data_file = elsewhere / f".coverage-{command}"
        completed = subprocess.run(
            pytest_command("--quest", command, "--cov", "--cov-report=", autoload=True),
            cwd=calc.path,
            env={**child_environ(autoload=True), "COVERAGE_FILE": str(data_file)},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
        assert "Traceback" not in completed.stderr, completed.stderr
        data = coverage.CoverageData(str(data_file))
        data.read()
        assert any(name.endswith("calc.py") for name in data.measured_files())
