"""What a submit judges: digests of the test, conftest and configuration files and of the code."""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from pytest_quest.engine.testfiles import FileSearch, find_test_files

CONFIG_FILES = (
    "pyproject.toml",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    "setup.cfg",
    "tox.ini",
)


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


def _relative(path: Path, rootdir: Path) -> str | None:
    try:
        return Path(os.path.relpath(path, rootdir)).as_posix()
    except ValueError:
        return None
