"""The gate policy in the ratchet file, step 2's sealed copy, partial branches, the remembered source."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_quest.app.status import status
from tests.support.contexts import app_context
from tests.support.projects import Project, built_template

from .test_person_powers import run_in_tty

CLAMP = """
def clamp(x):
    if x < 0:
        x = 0
    return x
"""

CLAMP_ID = "src/pkg/calc.py::clamp"

# Runs clamp on both paths, asserts nothing: only the mutation check can catch it.
TEST_NO_ASSERT = """
from pkg.calc import clamp

def test_clamp():
    clamp(-1)
    clamp(5)
"""

# Kills every mutant, misses the branch 3->5 (x >= 0).
TEST_NEGATIVE = """
from pkg.calc import clamp

def test_clamp():
    assert clamp(-1) == 0
"""

TEST_BOTH = """
from pkg.calc import clamp

def test_clamp():
    assert clamp(-1) == 0
    assert clamp(5) == 5
"""

TEST_OTHER = """
def test_nothing_of_calc():
    assert True
"""


def scanned(project: Project, test: str = TEST_OTHER, *args: str) -> dict[str, Any]:
    project.source("calc", CLAMP)
    project.test("test_calc", test)
    result, data = project.run_json("--quest", "scan", *args)
    assert CLAMP_ID in data["added"], data
    _result, data = project.run_json("--quest", "next")
    assert data["quest"]["id"] == CLAMP_ID
    return data


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """`scanned` (scan, then next) once; each test copies it."""
    return built_template(tmp_path_factory, scanned)


@pytest.fixture
def clamp(project: Project, template: Project) -> Project:
    """A copy of the scanned project, clamp the active quest."""
    return project.fill_from(template)


def test_scan_records_the_policy(clamp: Project) -> None:
    project = clamp
    policy = project.ratchet()["policy"]
    assert policy["mutants"] == "on"
    assert policy["max_tries"] == 3
    assert policy["sources"] == ["src/pkg"]
    assert policy["timeout_floor"] == 600.0
    assert "condition.false" in policy["operators"]
    quest = project.ratchet()["quests"][CLAMP_ID]
    assert quest["extra"]["config_digest"].startswith("cfg:")


def test_submit_with_mutants_off_is_refused(clamp: Project) -> None:
    project = clamp
    project.test("test_calc", TEST_NO_ASSERT)
    result, data = project.run_json("--quest", "submit", "--quest-mutants", "off")
    assert result.ret == 4, data
    assert "mutants=on" in data["error"]
    assert "--quest-policy" in data["error"]
    assert project.ratchet()["quests"][CLAMP_ID]["tries"] == 0


@pytest.mark.children_measured
def test_ini_mutants_off_is_refused(clamp: Project) -> None:
    project = clamp
    project.test("test_calc", TEST_NO_ASSERT)
    pyproject = project.path / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            "[tool.pytest.ini_options]\n", '[tool.pytest.ini_options]\nquest_mutants = "off"\n'
        )
    )
    result, data = project.run_json("--quest", "submit")
    assert result.ret == 4, data
    assert "mutants=on" in data["error"]
    # `-o` overrides the ini: mutants back on, but more tries than recorded.
    result, data = project.run_json(
        "--quest", "submit", "-o", "quest_mutants=on", "-o", "quest_max_tries=10"
    )
    assert result.ret == 4, data
    assert "max_tries=3" in data["error"]


def test_more_tries_are_refused_fewer_accepted(clamp: Project) -> None:
    project = clamp
    result, data = project.run_json("--quest", "submit", "--quest-max-tries", "10")
    assert result.ret == 4, data
    assert "max_tries=3" in data["error"]
    # Tightening applies to this run: one try allowed, the FAIL makes it DONE.
    result, data = project.run_json("--quest", "submit", "--quest-max-tries", "1")
    assert data["verdict"] == "FAIL", data
    assert project.ratchet()["quests"][CLAMP_ID]["state"] == "DONE"
    assert project.ratchet()["policy"]["max_tries"] == 3


def test_timeout_below_the_floor_is_refused(clamp: Project) -> None:
    project = clamp
    result, data = project.run_json("--quest", "submit", "--quest-timeout", "5")
    assert result.ret == 4, data
    assert "timeout_floor=600" in data["error"]


def test_a_different_source_is_refused(clamp: Project) -> None:
    project = clamp
    result, data = project.run_json("--quest", "submit", "--quest-source", "src")
    assert result.ret == 4, data
    assert "sources=src/pkg" in data["error"]


def test_pragma_no_branch_is_a_new_exclusion(clamp: Project) -> None:
    project = clamp
    project.source("calc", CLAMP.replace("if x < 0:", "if x < 0:  # pragma: no branch"))
    project.test("test_calc", TEST_NEGATIVE)
    _result, data = project.run_json("--quest", "submit")
    assert data["verdict"] == "FAIL", data
    checks = {fact["check"] for fact in data["quest"]["facts"]}
    assert "exclusion.new" in checks, data["quest"]["facts"]


def test_config_and_ratchet_copy_edited_together_fail(clamp: Project) -> None:
    project = clamp
    pyproject = project.path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("branch = true", "branch = false"))
    ratchet = project.ratchet()
    ratchet["coverage_config"]["run:branch"] = False
    (project.path / "quest.json").write_text(json.dumps(ratchet, indent=2, sort_keys=True))
    project.test("test_calc", TEST_NEGATIVE)
    _result, data = project.run_json("--quest", "submit")
    assert data["verdict"] == "FAIL", data
    checks = {fact["check"] for fact in data["quest"]["facts"]}
    assert "exclusion.config" in checks, data["quest"]["facts"]


@pytest.mark.children_measured
def test_policy_edited_in_the_file_fails_step_2(clamp: Project) -> None:
    project = clamp
    ratchet = project.ratchet()
    ratchet["policy"]["mutants"] = "off"
    (project.path / "quest.json").write_text(json.dumps(ratchet, indent=2, sort_keys=True))
    project.test("test_calc", TEST_NO_ASSERT)
    _result, data = project.run_json("--quest", "submit")
    assert data["verdict"] == "FAIL", data
    checks = {fact["check"] for fact in data["quest"]["facts"]}
    assert "exclusion.policy" in checks, data["quest"]["facts"]


def test_check_and_next_remember_the_source(project: Project) -> None:
    (project.path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n\n'
        "[tool.coverage.run]\nbranch = true\n"
    )
    project.source("calc", CLAMP)
    project.test("test_calc", TEST_BOTH)
    result, data = project.run_json("--quest", "scan", "--quest-source", "src/pkg")
    assert data["added_pass"] == [CLAMP_ID], data
    result, data = project.run_json("--quest", "check")
    assert result.ret == 0, data
    assert data["checked"] == 1


@pytest.mark.children_measured
def test_audit_covers_a_submitted_pass_and_status_shows_weaker(clamp: Project) -> None:
    project = clamp
    project.test("test_calc", TEST_BOTH)
    result, data = project.run_json("--quest", "submit")
    assert data["verdict"] == "PASS", data
    passed = project.ratchet()["quests"][CLAMP_ID]
    assert passed["extra"]["passed_policy"].startswith("mutants=on;")
    result, data = project.run_json("--quest", "audit")
    assert CLAMP_ID in data["audited"], data
    result, data = project.run_json("--quest", "audit", "--quest-since", "2999-01-01")
    assert data["audited"] == [], data
    # A person tightens the policy: the PASS was obtained under a weaker one.
    run = run_in_tty(
        project.path, "--quest-policy", "max_tries=2", "--quest-reason", "tighter",
        "--quest-format", "json", typed="max_tries=2",
    )  # fmt: skip
    data = run.json()
    assert run.ret == 0, data
    assert data["policy"]["max_tries"] == 2
    history = project.ratchet()["policy_history"]
    assert history[-1]["key"] == "max_tries" and history[-1]["old"] == "3"
    assert history[-1]["new"] == "2"
    data = status(app_context(project.path, "status")).data  # runs no test: in-process
    assert [item["id"] for item in data["weaker_policy_passes"]] == [CLAMP_ID]
    assert data["weaker_policy_passes"][0]["weaker"] == ["max_tries"]


@pytest.mark.children_measured
def test_a_file_without_policy_gets_one_once(clamp: Project) -> None:
    project = clamp
    ratchet = project.ratchet()
    del ratchet["policy"]
    for quest in ratchet["quests"].values():
        quest.get("extra", {}).pop("config_digest", None)
        quest.get("extra", {}).pop("partial_lines", None)
        quest.get("extra", {}).pop("issued_seal", None)
    (project.path / "quest.json").write_text(json.dumps(ratchet, indent=2, sort_keys=True))
    result = project.run("--quest", "scan")
    result.stdout.fnmatch_lines(["*the ratchet file had no gate policy*"])
    assert project.ratchet()["policy"]["sources"] == ["src/pkg"]
    result = project.run("--quest", "scan")
    assert "had no gate policy" not in result.stdout.str()
