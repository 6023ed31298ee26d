"""Write the bytecode caches of the plugin and the installed pytest plugins once, before the suite.

Where ``PYTHONDONTWRITEBYTECODE`` is set (this project's machines set it), every pytest
process the tests start compiles, and assertion-rewrites, about 200 modules anew:
pytest_quest's own and those of the installed plugins (hypothesis, anyio, xdist,
pytest-cov), about 2 s of CPU a start. Python and pytest still *read* caches when
writing is off, so writing them once here makes every later start cheap.

Only this script writes, on a throwaway copy of example_project; the suite's own
runs keep the environment they were given, so the test projects are never cached
(a same-size edit within one second could otherwise run stale bytecode).

    python -m tests.support.warm_bytecode

run-tests.sh calls it; tests/conftest.py calls it too (in the controller, not in xdist
workers), so the fast loop gets it without a step of its own.
"""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_quest"

#: A test that imports every module of the plugin inside pytest, where the
#: assertion-rewriting import hook is installed, so pytest caches its rewritten form.
IMPORT_ALL = """
import importlib
import pkgutil

import hypothesis.stateful  # pulls in most of hypothesis
import hypothesis.strategies

import pytest_quest


def test_import_every_module():
    for module in pkgutil.walk_packages(pytest_quest.__path__, "pytest_quest."):
        try:
            importlib.import_module(module.name)
        except ImportError:  # an optional extra that is not installed
            pass
"""


#: Written after a warm run; the caches are fresh while no source is newer.
STAMP = PACKAGE / "__pycache__" / "quest-warm.stamp"


def is_warm() -> bool:
    """A warm run happened after the last change to any module of the plugin."""
    if not STAMP.exists():
        return False
    warmed = STAMP.stat().st_mtime
    return all(source.stat().st_mtime <= warmed for source in PACKAGE.rglob("*.py"))


def warm(python: str = sys.executable) -> None:
    """Write the caches (about 10 s); nothing the runs write is measured or kept."""
    compileall.compile_dir(str(PACKAGE), quiet=1)
    env = {
        key: value
        for key, value in os.environ.items()
        if key != "PYTHONDONTWRITEBYTECODE"
        and not key.startswith(("COVERAGE_", "PYTEST_QUEST_", "PYTEST_XDIST", "PYTEST_ADDOPTS"))
    }
    with tempfile.TemporaryDirectory(prefix="quest-warm-") as scratch:
        project = Path(scratch) / "example_project"
        shutil.copytree(
            ROOT / "example_project",
            project,
            ignore=shutil.ignore_patterns("__pycache__", "quest.json*", ".pytest_cache"),
        )
        (project / "test_import_all.py").write_text(IMPORT_ALL, encoding="utf-8")
        # A scan, a next and a submit start every kind of process the suite starts.
        runs = (
            ["test_import_all.py"],
            ["--quest", "scan"],
            ["--quest", "next"],
            ["--quest", "submit"],
        )
        for args in runs:
            subprocess.run(
                [python, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                cwd=project,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=600,
                check=False,
            )
    STAMP.parent.mkdir(exist_ok=True)
    STAMP.write_text("the bytecode caches were written after every source here\n")


def warm_if_needed() -> None:
    """Warm when bytecode writing is off and the plugin's caches are missing or old."""
    if sys.dont_write_bytecode and not is_warm():
        warm()


if __name__ == "__main__":
    warm_if_needed()
