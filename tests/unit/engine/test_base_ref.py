"""The base a pull request is checked against: GitHub's base branch, when git knows it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_quest.engine.base import default_ref, ref_exists


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q", "-b", "work")
    (tmp_path / "f.txt").write_text("x\n", encoding="utf-8")
    _git(tmp_path, "add", "f.txt")
    _git(tmp_path, "commit", "-q", "-m", "one")
    _git(tmp_path, "update-ref", "refs/remotes/origin/main", "HEAD")
    return tmp_path


def test_ref_exists_for_commits_only(repo: Path) -> None:
    assert ref_exists("HEAD", repo) is True
    assert ref_exists("origin/main", repo) is True
    assert ref_exists("origin/nothing", repo) is False
    assert ref_exists("HEAD~1", repo) is False


def test_default_ref_on_a_github_pull_request(repo: Path) -> None:
    on_pr = {"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": " main "}
    assert default_ref(on_pr, repo) == "origin/main"
    assert default_ref({"GITHUB_ACTIONS": "TRUE", "GITHUB_BASE_REF": "main"}, repo) == "origin/main"
    assert default_ref({"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "gone"}, repo) is None


def test_no_default_ref_outside_a_github_pull_request(repo: Path) -> None:
    assert default_ref({}, repo) is None
    assert default_ref({"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "  "}, repo) is None
    assert default_ref({"GITHUB_ACTIONS": "false", "GITHUB_BASE_REF": "main"}, repo) is None
    assert default_ref({"GITHUB_BASE_REF": "main"}, repo) is None
