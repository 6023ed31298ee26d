"""Person actions: ``--quest-reopen ID`` and ``--quest-accept ID``, recorded with who and when."""

from __future__ import annotations

import getpass
import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_person_powers import TtyRun, run_in_tty
from tests.support import projects
from tests.support.projects import SIGN, TEST_DOUBLE, TEST_SIGN, Project, built_template

CALC = "\n" + projects.CALC


@pytest.fixture(autouse=True)
def git_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Quest Tester\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return config


def done_quest(project: Project) -> None:
    """`sign` made DONE: one try allowed, submitted without a test for it."""
    project.source("calc", CALC)
    project.test("test_double", TEST_DOUBLE)
    _result, data = project.run_json("--quest", "scan")
    assert data["added"] == [SIGN]
    _result, data = project.run_json(
        "--quest", "submit", "--quest-id", SIGN, "--quest-max-tries", "1"
    )
    assert data["verdict"] == "FAIL", data
    assert project.ratchet()["quests"][SIGN]["state"] == "DONE"


def review_quest(project: Project) -> None:
    """`sign` made REVIEW: its body changed between issue and submit (gate step 1)."""
    project.source("calc", CALC)
    project.test("test_double", TEST_DOUBLE)
    project.run_json("--quest", "scan", "--quest-mutants", "off")
    project.source("calc", CALC.replace("return -1", "return -2"))
    project.test("test_sign", TEST_SIGN.replace("== -1", "== -2"))
    _result, data = project.run_json(
        "--quest", "submit", "--quest-id", SIGN, "--quest-mutants", "off"
    )
    assert data["verdict"] == "REVIEW", data
    assert project.ratchet()["quests"][SIGN]["state"] == "REVIEW"


def as_person(project: Project, *args: str) -> tuple[int, dict[str, Any], TtyRun]:
    """A person action at a pseudo-terminal, the quest id typed; (exit status, JSON data)."""
    args += ("--quest-reason", "looked", "--quest-format", "json")
    run = run_in_tty(project.path, *args, typed=SIGN)
    return run.ret, json.loads(run.stdout), run


@pytest.fixture(scope="module")
def done_template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A project with `sign` DONE, built once; tests copy it with `project.fill_from`."""
    return built_template(tmp_path_factory, done_quest)


@pytest.fixture(scope="module")
def review_template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A project with `sign` REVIEW, built once."""
    return built_template(tmp_path_factory, review_quest)


def test_reopen_done_quest_resets_tries_and_records_who_and_when(
    project: Project, done_template: Project
) -> None:
    project.fill_from(done_template)
    ret, data, _run = as_person(project, "--quest-reopen", SIGN)
    assert ret == 0, data
    assert data["command"] == "reopen"
    assert data["by"] == "Quest Tester"
    assert data["quest"]["state"] == "TODO" and data["quest"]["tries"] == 0
    entry = project.ratchet()["quests"][SIGN]
    assert entry["state"] == "TODO" and entry["tries"] == 0
    assert entry["history"][-1] == {
        "action": "reopen",
        "at": data["at"],
        "by": "Quest Tester",
        "note": "from DONE",
        "reason": "looked",
        "fingerprint": entry["fingerprint"],
    }
    assert data["remaining"] == 1


def test_who_falls_back_to_the_os_user(
    project: Project, done_template: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    project.fill_from(done_template)
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    ret, data, _ = as_person(project, "--quest-reopen", SIGN)
    assert ret == 0
    assert data["by"] == getpass.getuser()
    assert project.ratchet()["quests"][SIGN]["history"][-1]["by"] == getpass.getuser()


def test_accept_review_quest_then_check_holds_it(
    project: Project, review_template: Project
) -> None:
    project.fill_from(review_template)
    ret, data, _ = as_person(project, "--quest-accept", SIGN)
    assert ret == 0, data
    entry = project.ratchet()["quests"][SIGN]
    assert entry["state"] == "PASS"
    assert entry["passed_at"] == data["at"]
    assert entry["history"][-1]["action"] == "accept"
    assert entry["history"][-1]["by"] == "Quest Tester"
    # Accepted by a person, held by the ratchet like any PASS.
    result, data = project.run_json("--quest", "check")
    assert result.ret == 0, data
    (project.path / "tests" / "test_sign.py").unlink()
    result, data = project.run_json("--quest", "check")
    assert result.ret == 1
    assert [r["id"] for r in data["regressions"]] == [SIGN]


def test_reopen_review_reissues_for_current_code(
    project: Project, review_template: Project
) -> None:
    project.fill_from(review_template)
    ret, data, _ = as_person(project, "--quest-reopen", SIGN)
    assert ret == 0, data
    assert project.ratchet()["quests"][SIGN]["history"][-1]["note"] == "from REVIEW"
    # Re-issued for the changed body: the same tests now PASS the gate.
    _result, data = project.run_json(
        "--quest", "submit", "--quest-id", SIGN, "--quest-mutants", "off"
    )
    assert data["verdict"] == "PASS", data


# One refusal of the use case and one of the options, through a whole pytest. Every
# refusal's message, and that it writes nothing, is tested in-process: the use cases'
# in tests/unit/app/test_app_person.py::test_bad_person_actions_write_nothing, the
# options' in tests/e2e/test_options.py::test_a_person_action_runs_on_its_own.
BAD_INPUT = [
    (("--quest-accept", SIGN), "only a REVIEW quest can be accepted"),
    (("--quest-accept", SIGN, "--quest", "next"), "run on their own"),
]


def test_bad_person_actions_exit_4_and_write_nothing(
    project: Project, done_template: Project
) -> None:
    project.fill_from(done_template)
    before = (project.path / "quest.json").read_bytes()
    for args, message in BAD_INPUT:
        result = project.run(*args)
        assert result.ret == 4, args
        assert message in result.stdout.str() + result.stderr.str(), args
        assert (project.path / "quest.json").read_bytes() == before, args


def test_a_reopened_quest_is_judged_with_tests_added_before_its_reopen(
    project: Project, done_template: Project
) -> None:
    """A test committed (and rescanned) after the quest was settled is in no covering
    list the scan kept for it: the submit after a reopen still runs it."""
    project.fill_from(done_template)
    project.test("test_sign", TEST_SIGN)
    result, _ = project.run_json("--quest", "scan")
    assert result.ret == 0
    ret, data, _ = as_person(project, "--quest-reopen", SIGN)
    assert ret == 0, data
    result, data = project.run_json("--quest", "submit", "--quest-id", SIGN)
    assert data.get("verdict") == "PASS", data
