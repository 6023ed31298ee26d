"""``--quest-since REF``: a pull request's check on a real git repository made here.

The base (main) holds the project scanned: double and sign PASS, untested TODO.
Each test copies it, works on a branch as a pull request would, and runs
``pytest --quest check --quest-require-pass`` the way CI does.
"""

from __future__ import annotations

import pytest

from tests.support import projects
from tests.support.gitrepo import commit_all, git, init_repo
from tests.support.projects import DOUBLE, SIGN, TEST_DOUBLE, TEST_SIGN, Project, scanned_template

pytestmark = pytest.mark.slow

UNTESTED = "src/pkg/calc.py::untested"
FRESH = "src/pkg/calc.py::fresh"
CALC = projects.CALC + "\n\ndef untested(x):\n    return x + 1\n"


def calc_project(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_double", TEST_DOUBLE)
    project.test("test_sign", TEST_SIGN)
    (project.path / ".gitignore").write_text("__pycache__/\n*.lock\n")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    template, data = scanned_template(tmp_path_factory, calc_project)
    assert data["counts"]["PASS"] == 2 and data["counts"]["TODO"] == 1, data
    init_repo(template.path)
    return template


@pytest.fixture
def branch(project: Project, template: Project) -> Project:
    """A copy of the base repository, on a new branch `feature`."""
    project.fill_from(template)
    git(project.path, "checkout", "-q", "-b", "feature")
    return project


def test_a_pull_request_whose_changed_functions_are_pass_passes(branch: Project) -> None:
    # sign's body changes (test_sign still covers it); untested (TODO) gains
    # only a comment and moves below a blank line: not a change of its code.
    source = CALC.replace("if x < 0:", "if x <= -1:").replace(
        "def untested(x):\n", "\ndef untested(x):  # not tested yet\n"
    )
    branch.source("calc", source)
    commit_all(branch.path, "feature: sign")
    result, data = branch.run_json(
        "--quest", "check", "--quest-since", "main", "--quest-require-pass"
    )
    assert result.ret == 0, data
    since = data["since"]
    assert since["ref"] == "main" and since["changed"] == [SIGN]
    assert since["not_pass"] == [] and since["require_pass"] is True
    assert data["ok"] is True and data["regressions"] == []


def test_a_pull_request_with_a_changed_function_not_pass_fails_with_facts(
    branch: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = CALC.replace("return x + 1", "return x + 2") + "\n\ndef fresh(x):\n    return -x\n"
    branch.source("calc", source)
    commit_all(branch.path, "feature: untested and fresh")
    # In GitHub Actions on a pull request the base is the default: origin/<base branch>.
    git(branch.path, "update-ref", "refs/remotes/origin/main", "main")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    result, data = branch.run_json("--quest", "check", "--quest-require-pass")
    assert result.ret == 1, data
    since = data["since"]
    assert since["ref"] == "origin/main" and since["changed"] == [FRESH, UNTESTED]
    assert since["new"] == [FRESH]
    failing = {item["id"]: item for item in since["not_pass"]}
    assert sorted(failing) == [FRESH, UNTESTED]
    assert (failing[UNTESTED]["state"], failing[FRESH]["state"]) == ("TODO", "untracked")
    (fact,) = failing[UNTESTED]["facts"]
    assert fact["check"] == "since.require_pass" and fact["field"] == "src/pkg/calc.py:11"
    assert fact["expected"] == "PASS (changed since origin/main)"
    assert fact["actual"].startswith("TODO (1 line or branch not covered, 0 tries)")
    (fact,) = failing[FRESH]["facts"]
    assert fact["expected"] == "PASS (new since origin/main)"
    # The ratchet itself is whole: every PASS was re-measured, and none regressed.
    assert data["checked"] == 2 and data["regressions"] == []
    stderr = result.stderr.str()
    assert (
        "::error file=src/pkg/calc.py,line=11,title=pytest-quest%3A src/pkg/calc.py%3A%3Auntested::"
        in stderr
    )

    # next and status over the same change: only its functions.
    result, data = branch.run_json("--quest", "next", "--quest-since", "main")
    assert result.ret == 0 and data["quest"]["id"] == UNTESTED, data
    result, data = branch.run_json("--quest-status", "--quest-since", "main")
    assert [q["id"] for q in data["quests"]] == [UNTESTED] and data["since"]["untracked"] == [FRESH]
    assert DOUBLE not in {q["id"] for q in data["quests"]}


def test_the_options_are_usage_errors_where_they_do_not_fit(branch: Project) -> None:
    result, data = branch.run_json("--quest", "check", "--quest-require-pass")
    assert result.ret == 4 and "--quest-require-pass needs --quest-since REF" in data["error"]
    result, data = branch.run_json("--quest", "submit", "--quest-since", "main")
    assert result.ret == 4 and "--quest-since is an option of next" in data["error"]
    result, data = branch.run_json("--quest-status", "--quest-since", "no-such-ref")
    assert result.ret == 4 and "--quest-since no-such-ref: no such commit" in data["error"]
