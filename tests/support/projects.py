"""Throwaway projects for end-to-end runs: the layout, the sources they share, a builder."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.runner import parse_json, run_pytest, run_quest

PYPROJECT = """\
[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
quest_source = ["src/pkg"]

[tool.coverage.run]
branch = true
source = ["src/pkg"]
"""

# The same project without a coverage section (coverage.py's defaults: no branches).
PYPROJECT_NO_COVERAGE = PYPROJECT.split("\n\n", maxsplit=1)[0] + "\n"

# `double` (lines 1-2) is tested by TEST_DOUBLE, `sign` (lines 5-8) by nothing.
CALC = """\
def double(x):
    return x * 2


def sign(x):
    if x < 0:
        return -1
    return 1
"""

TEST_DOUBLE = """\
from pkg.calc import double


def test_double():
    assert double(3) == 6
"""

TEST_SIGN = """\
from pkg.calc import sign


def test_sign():
    assert sign(-5) == -1
    assert sign(5) == 1
"""

# One function of every shape the scan tells apart: nested, async, generator,
# one-line, excluded, methods, static and class methods, a property's twins.
SHAPES = """\
def plain(x):
    return x + 1


def outer(n):
    def inner(m):
        return m * 2

    return inner(n)


async def fetch(x):
    return x


def gen(n):
    for i in range(n):
        yield i


def one(): return 1


def skipped():  # pragma: no cover
    return 2


class C:
    def method(self):
        return 1

    @staticmethod
    def stat(a):
        return a

    @classmethod
    def klass(cls):
        return cls.__name__

    @property
    def x(self):
        return self._x

    @x.setter
    def x(self, value):
        self._x = value
"""

SIGN = "src/pkg/calc.py::sign"
DOUBLE = "src/pkg/calc.py::double"


def qid(module: str, name: str) -> str:
    return f"src/pkg/{module}.py::{name}"


class Project:
    """A throwaway project: ``src/pkg`` and ``tests`` under `path`, run in a child pytest."""

    def __init__(self, path: Path, pyproject: str = PYPROJECT, *, autoload: bool = False) -> None:
        self.path = path
        self.autoload = autoload
        (path / "src" / "pkg").mkdir(parents=True)
        (path / "src" / "pkg" / "__init__.py").write_text("")
        (path / "tests").mkdir()
        (path / "pyproject.toml").write_text(pyproject)

    def source(self, name: str, text: str) -> Path:
        path = self.path / "src" / "pkg" / f"{name}.py"
        path.write_text(textwrap.dedent(text))
        return path

    def test(self, name: str, text: str) -> Path:
        path = self.path / "tests" / f"{name}.py"
        path.write_text(textwrap.dedent(text))
        return path

    def run(self, *args: str) -> pytest.RunResult:
        return run_pytest(self.path, *args, autoload=self.autoload)

    def run_json(self, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
        result = self.run(*args, "--quest-format", "json")
        return result, parse_json(result)

    def ratchet(self) -> dict[str, Any]:
        # Version 1's layout (every field, test names), whatever version the file is.
        from tests.support.quests import ratchet_view

        return ratchet_view((self.path / "quest.json").read_bytes())

    def fill_from(self, template: Project) -> Project:
        """This project made a copy of `template` (its ratchet file too)."""
        shutil.copytree(template.path, self.path, symlinks=True, dirs_exist_ok=True)
        return self


def quest_files(project: Project) -> list[str]:
    """The names in `project`'s folder that have "quest" in them (the ratchet file and its kin),
    the lock folder's files as ``.quest/NAME``."""
    names = [p.name for p in project.path.iterdir() if "quest" in p.name and p.name != ".quest"]
    locks = project.path / ".quest"
    if locks.is_dir():
        names += [f".quest/{p.name}" for p in locks.iterdir() if p.name != ".gitignore"]
    return sorted(names)


def calc_project(project: Project) -> None:
    """The calc module and its one test of `double`: the usual project to scan."""
    project.source("calc", CALC)
    project.test("test_double", TEST_DOUBLE)


def built_template(factory: pytest.TempPathFactory, build: Callable[[Project], object]) -> Project:
    """A project brought to some state by `build` once, for module-scoped fixtures to copy
    into each test's project with `Project.fill_from`."""
    project = Project(factory.mktemp("template") / "project")
    build(project)
    return project


def scanned_template(
    factory: pytest.TempPathFactory, build: Callable[[Project], object]
) -> tuple[Project, dict[str, Any]]:
    """A project built by `build` and scanned once; the scan's JSON output with it."""
    project = built_template(factory, build)
    result, data = project.run_json("--quest", "scan")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    return project, data


def scanned_unsandboxed(project: Project) -> Project:
    """`project` scanned again where no sandbox may start (a test marked `unsandboxed`).

    A module's template is scanned once, with the sandbox the machine has, and its
    policy records `sandbox=required`; a test of the judge's own detection (what a
    test leaves in the project, its pid seen from outside) needs `sandbox=off`.
    """
    rescanned_unsandboxed(project.path)
    return project


def rescanned_unsandboxed(root: Path) -> Path:
    """The project at `root` scanned again, its policy now the one where no sandbox starts."""
    (root / "quest.json").unlink()
    code, _, stderr = run_quest(root, "--quest", "scan")
    assert code == 0, stderr
    return root
