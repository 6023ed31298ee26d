"""Shared fixtures: small projects for end-to-end runs of the plugin.

End-to-end tests run pytest in a subprocess (``runpytest_subprocess``):
the plugin starts coverage.py, and two tracers must never share a process
with the coverage measuring this suite.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Derandomized: the same examples every run, so the project's own ratchet
# check (`pytest --quest check` on this suite) sees the same coverage each time.
settings.register_profile("pytest-quest", derandomize=True, database=None, deadline=None)
settings.load_profile("pytest-quest")

PYPROJECT = """\
[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
quest_source = ["src/pkg"]

[tool.coverage.run]
branch = true
source = ["src/pkg"]
"""


class Project:
    """A throwaway project in a pytester folder: ``src/pkg`` and ``tests``."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.path = Path(pytester.path)
        (self.path / "src" / "pkg").mkdir(parents=True)
        (self.path / "src" / "pkg" / "__init__.py").write_text("")
        (self.path / "tests").mkdir()
        (self.path / "pyproject.toml").write_text(PYPROJECT)

    def source(self, name: str, text: str) -> Path:
        path = self.path / "src" / "pkg" / f"{name}.py"
        path.write_text(textwrap.dedent(text))
        return path

    def test(self, name: str, text: str) -> Path:
        path = self.path / "tests" / f"{name}.py"
        path.write_text(textwrap.dedent(text))
        return path

    def run(self, *args: str) -> pytest.RunResult:
        return self.pytester.runpytest_subprocess(*args)

    def run_json(self, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
        result = self.run(*args, "--quest-format", "json")
        text = result.stdout.str()
        try:
            data = json.loads(text)
        except ValueError:
            raise AssertionError(f"stdout is not one JSON object:\n{text}\n{result.stderr.str()}")
        return result, data

    def ratchet(self) -> dict[str, Any]:
        return json.loads((self.path / "quest.json").read_text())


@pytest.fixture
def project(pytester: pytest.Pytester) -> Project:
    return Project(pytester)
