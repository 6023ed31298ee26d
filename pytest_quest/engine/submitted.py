"""What a submission added or changed among test files, conftest files and pytest configuration.

Each file with the text it had at the scan when that can be found (git), for core/tamper.py.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import subprocess
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path

from pytest_quest.core.tamper import SubmittedFile
from pytest_quest.engine.testfiles import FileSearch, digest, find_test_files

CONFIG_FILES = (
    "pyproject.toml",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    "setup.cfg",
    "tox.ini",
)


def submitted_files(
    search: FileSearch,
    rootdir: Path,
    *,
    scanned: dict[str, str],
    scanned_at: str,
    inifile: Path | None = None,
) -> list[SubmittedFile]:
    """The test, conftest and configuration files changed since the scan, with their texts then.

    A file counts when its digest differs from `scanned` (the scan's
    digests, `scanned_configs` for conftest and configuration files) or it
    is new: a file as the scan saw it is not the submission's, committed or
    not.  The lines it had at the scan are taken from git (the last commit
    before `scanned_at`).  A conftest or configuration file the scan did not
    record (a ratchet file written before it did) counts when it differs
    from git's text then; a file git does not know counts when it was
    modified after the scan, judged whole.  A changed file whose text at
    the scan is unknown is judged whole too.
    """
    at_scan = _GitAtScan(rootdir, scanned_at)
    found: list[SubmittedFile] = []
    for path in find_test_files(search):
        rel = _relative(path, rootdir)
        if rel is None or scanned.get(rel) == _digest(path):
            continue
        text = _read(path)
        if text is not None:
            found.append(SubmittedFile(rel, text, at_scan.text(rel)))
    for path in _conftests(search, rootdir) + _configs(rootdir, inifile):
        rel = _relative(path, rootdir)
        text = _read(path)
        if rel is None or text is None:
            continue
        if rel in scanned:
            if scanned[rel] == _digest(path):
                continue
            found.append(SubmittedFile(rel, text, at_scan.text(rel)))
            continue
        previous = at_scan.text(rel)
        if (
            previous is None
            and at_scan.tracked_nowhere(rel)
            and not _modified_after(path, scanned_at)
        ):
            continue
        if previous != text:
            found.append(SubmittedFile(rel, text, previous))
    return found


def scanned_configs(search: FileSearch, rootdir: Path, inifile: Path | None = None) -> dict[str, str]:
    """Digests of the conftest and pytest configuration files, as the scan records them."""
    found: dict[str, str] = {}
    for path in _conftests(search, rootdir) + _configs(rootdir, inifile):
        rel, value = _relative(path, rootdir), _digest(path)
        if rel is not None and value is not None:
            found[rel] = value
    return found


def judged_digest(
    search: FileSearch, rootdir: Path, sources: Iterable[str | Path], inifile: Path | None = None
) -> str:
    """A digest of what a submit judges: its tests, the code under test and the configuration.

    Every Python file under the test folders (test modules, helpers,
    conftests) and under `sources`, the conftest files above the tests and
    the pytest configuration files, each by path and bytes.  Two submits
    with the same digest ran the same tests on the same code.
    """
    paths: set[Path] = set()
    roots = [Path(s) if Path(s).is_absolute() else rootdir / s for s in sources]
    for root in [*search.roots, *roots]:
        paths.update(_python_files(root, search.norecurse))
    paths.update(_conftests(search, rootdir) + _configs(rootdir, inifile))
    hasher = hashlib.sha256()
    for path in sorted({p.resolve() for p in paths}):
        rel = _relative(path, rootdir) or str(path)
        try:
            data = path.read_bytes()
        except OSError:
            data = b"\0unreadable"
        hasher.update(f"{rel}\0{len(data)}\0".encode() + data)
    return "sha256:" + hasher.hexdigest()[:32]


def _python_files(root: Path, norecurse: list[str]) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            d
            for d in dirnames
            if not d.startswith(".")
            and d not in ("__pycache__", "node_modules", "site-packages")
            and not any(fnmatch.fnmatch(d, pattern) for pattern in norecurse)
        ]
        yield from (Path(folder, name) for name in filenames if name.endswith(".py"))


def own_packages(sources: Iterable[str | Path], rootdir: Path) -> list[str]:
    """Top-level package names of the code under test (its tests may import them freely)."""
    names = []
    for source in sources:
        path = Path(source)
        path = path if path.is_absolute() else rootdir / path
        names.append(path.stem if path.is_file() else path.name)
    return sorted({name for name in names if name.isidentifier()})


def _conftests(search: FileSearch, rootdir: Path) -> list[Path]:
    """conftest.py under the test folders, and in each folder from them up to the rootdir."""
    found = set(find_test_files(FileSearch(search.roots, ["conftest.py"], search.norecurse)))
    root = rootdir.resolve()
    for start in search.roots:
        folder = start.resolve() if start.is_dir() else start.resolve().parent
        while folder.is_relative_to(root):
            candidate = folder / "conftest.py"
            if candidate.is_file():
                found.add(candidate)
            if folder == root:
                break
            folder = folder.parent
    return sorted(found)


def _configs(rootdir: Path, inifile: Path | None) -> list[Path]:
    paths = {rootdir / name for name in CONFIG_FILES if (rootdir / name).is_file()}
    if inifile is not None and inifile.is_file():
        paths.add(inifile)
    return sorted(paths)


class _GitAtScan:
    """Texts of files in the last commit before the scan (none outside a git work tree)."""

    def __init__(self, rootdir: Path, scanned_at: str) -> None:
        self.rootdir = rootdir
        self.commit = self._commit(scanned_at) if scanned_at else None
        self.prefix = self._git("rev-parse", "--show-prefix") or "" if self.commit else ""
        self.prefix = self.prefix.strip()

    def _git(self, *args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(self.rootdir), *args],
                capture_output=True,
                timeout=20,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        return done.stdout.decode("utf-8", errors="replace")

    def _commit(self, scanned_at: str) -> str | None:
        out = self._git("rev-list", "-1", f"--before={scanned_at}", "HEAD")
        return out.strip() or None if out else None

    def text(self, rel: str) -> str | None:
        if self.commit is None:
            return None
        return self._git("show", f"{self.commit}:{self.prefix}{rel}")

    def tracked_nowhere(self, rel: str) -> bool:
        """True when git cannot say what the file held at the scan (no repository, no commit)."""
        return self.commit is None or self._git("ls-files", "--error-unmatch", rel) is None


def _modified_after(path: Path, scanned_at: str) -> bool:
    try:
        scanned = datetime.fromisoformat(scanned_at.replace("Z", "+00:00")).timestamp()
        # The scan's time is kept to the second: a file written in that second counts as older.
        return path.stat().st_mtime >= scanned + 1
    except (OSError, ValueError):
        return True


def _relative(path: Path, rootdir: Path) -> str | None:
    try:
        return Path(os.path.relpath(path, rootdir)).as_posix()
    except ValueError:
        return None


def _digest(path: Path) -> str | None:
    try:
        return digest(path)
    except OSError:
        return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


__all__ = ["CONFIG_FILES", "judged_digest", "own_packages", "scanned_configs", "submitted_files"]
