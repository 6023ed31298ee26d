"""The base ratchet `check` re-judges against: the file at a git ref, or a file given."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Ratchet
from pytest_quest.engine.codec import loads
from pytest_quest.engine.store import read_regular


@dataclass(frozen=True)
class Base:
    """The base ratchet and where it came from (shown in the output)."""

    ratchet: Ratchet
    source: str
    # False when the ratchet file did not exist at the ref: every PASS is new.
    found: bool = True


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise QuestUsageError(f"--quest-base: could not run git ({exc})") from None


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


__all__ = ["Base", "base_from_file", "base_from_ref", "default_ref", "ref_exists"]
