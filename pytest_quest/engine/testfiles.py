"""The project's test files and their digests, to find tests new or changed since the scan.

Found as pytest would collect them (``python_files`` under the given folders), never imported.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

_SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "build", "dist"}
DEFAULT_PATTERNS = ("test_*.py", "*_test.py")


@dataclass(frozen=True)
class FileSearch:
    """Where pytest would look for test files, and which names it collects.

    `roots` are absolute folders (or files): the invocation's arguments, else
    ``testpaths``, else the rootdir.
    """

    roots: list[Path]
    patterns: list[str] = field(default_factory=lambda: list(DEFAULT_PATTERNS))
    norecurse: list[str] = field(default_factory=list)
    #: The roots are paths given on the command line (not testpaths or the rootdir).
    given: bool = False


def recorded_paths(search: FileSearch, rootdir: Path) -> list[str]:
    """`search`'s roots relative to `rootdir` (posix), as the ratchet file records them;
    [] when one lies outside it (a later command then searches as pytest does)."""
    root = rootdir.resolve()
    paths: list[str] = []
    for where in search.roots:
        where = where.resolve()
        if where != root and root not in where.parents:
            return []
        paths.append(where.relative_to(root).as_posix())
    return paths


def as_recorded(search: FileSearch, paths: list[str], rootdir: Path) -> FileSearch:
    """`search` with the recorded `paths` for roots, unless its roots were given on the
    command line (a path given wins) or none of `paths` exists any more."""
    if search.given or not paths:
        return search
    roots = [(rootdir / path).resolve() for path in paths if (rootdir / path).exists()]
    return replace(search, roots=roots) if roots else search


def digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:32]


def find_test_files(search: FileSearch, exclude: Iterable[Path] = ()) -> list[Path]:
    """Test files pytest would collect under `search`, by name pattern."""
    patterns = search.patterns or list(DEFAULT_PATTERNS)
    excluded = {p.resolve() for p in exclude}
    found: set[Path] = set()
    for root in search.roots:
        if root.is_file():
            found.add(root)
            continue
        for folder, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not d.startswith(".")
                and d not in _SKIP_DIRS
                and not any(fnmatch.fnmatch(d, pattern) for pattern in search.norecurse)
                and Path(folder, d).resolve() not in excluded
            )
            for name in filenames:
                if name.endswith(".py") and any(fnmatch.fnmatch(name, p) for p in patterns):
                    found.add(Path(folder, name).resolve())
    return sorted(found)


def digest_test_files(
    search: FileSearch, rootdir: Path, exclude: Iterable[Path] = ()
) -> dict[str, str]:
    """Relative path -> digest of every test file pytest would collect."""
    result = {}
    for path in find_test_files(search, exclude):
        try:
            rel = Path(os.path.relpath(path, rootdir)).as_posix()
            result[rel] = digest(path)
        except (OSError, ValueError):
            continue
    return result


def kept_covering_tests(
    covering: Iterable[str], skipped: set[str], test_files: dict[str, str], rootdir: Path
) -> list[str]:
    """The node ids of `covering` to run again, but those in the files of `skipped`.

    A covering test lives in a test file by name (`test_files`), or in a file pytest
    collects for its doctests (``--doctest-modules``: a module of the code under test,
    ``--doctest-glob``: a text file), which no name pattern finds: kept while the file
    is there.
    """
    kept = []
    for nodeid in covering:
        path = nodeid.split("::")[0]
        if path not in skipped and (path in test_files or (rootdir / path).is_file()):
            kept.append(nodeid)
    return kept


def changed_files(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """Files that are new, or whose digest differs, since `before`."""
    return sorted(name for name, value in now.items() if before.get(name) != value)
