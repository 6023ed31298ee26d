"""The project's test files and their digests, to find new and changed tests.

A submit runs the tests that executed the quest's function at scan plus
every test file that is new or changed since the scan; this module finds
those files the way pytest would collect them (``python_files`` patterns
under ``testpaths`` or the command-line arguments), without importing them.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import pytest

_SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "build", "dist"}


def digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:32]


def _search_roots(config: pytest.Config) -> list[Path]:
    rootdir = Path(str(config.rootpath))
    invocation = Path(str(config.invocation_params.dir))
    # The positional arguments only: an option's value (``--quest-id
    # src/pkg/mod.py::f``) names a source file, not tests to search.
    args = [str(a) for a in (config.getoption("file_or_dir", default=None) or [])]
    roots = []
    for arg in args:
        candidate = (invocation / str(arg).split("::")[0]).resolve()
        if candidate.exists():
            roots.append(candidate)
    if roots:
        return roots
    testpaths = config.getini("testpaths")
    if testpaths:
        return [(rootdir / str(p)).resolve() for p in testpaths if (rootdir / str(p)).exists()]
    return [rootdir]


def find_test_files(config: pytest.Config, exclude: Iterable[Path] = ()) -> list[Path]:
    """Test files pytest would collect for this invocation, by name pattern."""
    patterns = list(config.getini("python_files")) or ["test_*.py", "*_test.py"]
    norecurse = list(config.getini("norecursedirs"))
    excluded = {p.resolve() for p in exclude}
    found: set[Path] = set()
    for root in _search_roots(config):
        if root.is_file():
            found.add(root)
            continue
        for folder, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not d.startswith(".")
                and d not in _SKIP_DIRS
                and not any(fnmatch.fnmatch(d, pattern) for pattern in norecurse)
                and Path(folder, d).resolve() not in excluded
            )
            for name in filenames:
                if name.endswith(".py") and any(fnmatch.fnmatch(name, p) for p in patterns):
                    found.add(Path(folder, name).resolve())
    return sorted(found)


def digest_test_files(
    config: pytest.Config, rootdir: Path, exclude: Iterable[Path] = ()
) -> dict[str, str]:
    """Relative path -> digest of every test file pytest would collect."""
    result = {}
    for path in find_test_files(config, exclude):
        try:
            rel = Path(os.path.relpath(path, rootdir)).as_posix()
            result[rel] = digest(path)
        except (OSError, ValueError):
            continue
    return result


def changed_files(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """Files that are new, or whose digest differs, since `before`."""
    return sorted(name for name, value in now.items() if before.get(name) != value)
