"""A real git repository for the tests of ``--quest-since`` (and anything reading a git ref)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Quest Tester",
    "GIT_AUTHOR_EMAIL": "tester@example.com",
    "GIT_COMMITTER_NAME": "Quest Tester",
    "GIT_COMMITTER_EMAIL": "tester@example.com",
}


def git_environ() -> dict[str, str]:
    """This environment without CI settings, with a fixed identity and no user git config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GIT_"))}
    return {**env, **IDENTITY, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    """``git ARGS`` in `repo`; its stdout (raises on failure, with git's message)."""
    done = subprocess.run(
        ["git", *args], cwd=repo, env=git_environ(), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def commit_all(repo: Path, message: str) -> str:
    """Stage everything in `repo` and commit it; the commit's hash."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def init_repo(repo: Path, branch: str = "main") -> str:
    """`repo` made a git repository holding its current files in one commit on `branch`."""
    git(repo, "init", "-q", "-b", branch)
    return commit_all(repo, "base")


__all__ = ["commit_all", "git", "git_environ", "init_repo"]
