"""Reading a git ref: the base ratchet `check` re-judges against, and files as they were there.

`check --quest-base` reads the ratchet file at a ref (or a file given); the
diff-aware commands (``--quest-since``, engine/changes.py) read the source files
at a ref through the same few git calls.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Ratchet
from pytest_quest.engine.codec import loads
from pytest_quest.engine.store_help import read_regular


@dataclass(frozen=True)
class Base:
    """The base ratchet and where it came from (shown in the output)."""

    ratchet: Ratchet
    source: str
    # False when the ratchet file did not exist at the ref: every PASS is new.
    found: bool = True


def _git(
    args: list[str], cwd: Path, what: str = "--quest-base"
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise QuestUsageError(f"{what}: could not run git ({exc})") from None


def git(args: list[str], cwd: Path, what: str) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` in `cwd`; a usage error naming the option `what` when git cannot run."""
    return _git(args, cwd, what)


def user_name() -> str:
    """git's ``user.name`` ("" when none is set or git cannot run)."""
    try:
        out = subprocess.run(
            ["git", "config", "user.name"], check=False, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


def commit_date(ref: str, cwd: Path) -> str | None:
    """The commit date of `ref` (ISO 8601) in the repository at `cwd`; None when there is none.

    `ref` must not start with ``-`` (the caller refuses it: ``--output=FILE`` would
    have git write a file).
    """
    try:
        out = subprocess.run(
            ["git", "show", "-s", "--format=%cI", ref, "--"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = out.stdout.strip()
    return found.splitlines()[0] if out.returncode == 0 and found else None


def commit_of(ref: str, cwd: Path, what: str) -> str:
    """The commit `ref` names; a usage error saying how to fetch it when there is none."""
    out = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd, what)
    if out.returncode != 0:
        raise QuestUsageError(
            f"{what} {ref}: no such commit in this repository; fetch it "
            f"(`git fetch origin <branch>`, or actions/checkout with fetch-depth: 0)"
        )
    return out.stdout.decode().strip()


def toplevel(cwd: Path, what: str) -> Path:
    """The root of the git work tree holding `cwd`; a usage error outside one."""
    top = _git(["rev-parse", "--show-toplevel"], cwd, what)
    if top.returncode != 0:
        raise QuestUsageError(f"{what}: {cwd} is not inside a git repository")
    return Path(top.stdout.decode().strip()).resolve()


def show_at(commit: str, relative: str, top: Path, what: str) -> bytes | None:
    """The bytes of `relative` (from the repository root) at `commit`; None when it was not there."""
    shown = _git(["show", f"{commit}:{relative}"], top, what)
    return shown.stdout if shown.returncode == 0 else None


def refuse_option(ref: str, what: str) -> None:
    """A usage error for a ref git would read as an option (``--output=FILE`` writes a file)."""
    if ref.startswith("-"):
        raise QuestUsageError(f"{what} {ref}: a git ref does not start with '-'")


def ref_exists(ref: str, cwd: Path) -> bool:
    return _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd).returncode == 0


def default_ref(environ: Mapping[str, str], cwd: Path) -> str | None:
    """Under GitHub Actions on a pull request: ``origin/<base branch>``, when that ref exists."""
    branch = environ.get("GITHUB_BASE_REF", "").strip()
    if not branch or environ.get("GITHUB_ACTIONS", "").lower() != "true":
        return None
    ref = f"origin/{branch}"
    return ref if ref_exists(ref, cwd) else None


def base_from_ref(ref: str, quest_file: Path) -> Base:
    """The ratchet file as committed at `ref` (``git show REF:path``, path from the repository root)."""
    folder = quest_file.parent
    refuse_option(ref, "--quest-base")
    if not ref_exists(ref, folder):
        raise QuestUsageError(
            f"--quest-base {ref}: no such commit in this repository; fetch it "
            f"(`git fetch origin <branch>`, or actions/checkout with fetch-depth: 0)"
        )
    top = _git(["rev-parse", "--show-toplevel"], folder)
    if top.returncode != 0:
        raise QuestUsageError(f"--quest-base {ref}: {quest_file} is not inside a git repository")
    root = Path(top.stdout.decode().strip()).resolve()
    relative = quest_file.resolve().relative_to(root).as_posix()
    shown = _git(["show", f"{ref}:{relative}"], root)
    if shown.returncode != 0:
        # No ratchet file at the base: pytest-quest arrives with this change.
        return Base(Ratchet(), f"{ref}:{relative}", found=False)
    return Base(loads(shown.stdout, f"{ref}:{relative}"), f"{ref}:{relative}")


def base_from_file(path: Path) -> Base:
    try:
        data = read_regular(path)
    except OSError as exc:
        raise QuestUsageError(
            f"--quest-base-file {path}: cannot read it ({exc.strerror})"
        ) from None
    return Base(loads(data, str(path)), str(path))
