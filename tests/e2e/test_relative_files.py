"""coverage.py's ``relative_files``: one source file is one file, whoever measured it.

With ``relative_files = true`` the measuring process stores a file by its
name relative to the folder it started in; a process a test starts elsewhere
stores it by its absolute name.  Read as two files, each with part of the
arcs, every function both reached was a TODO with nothing missing and a PASS
baseline could be "regressed" in a first scan (seen on python-dotenv 1.0.1,
whose setup.cfg sets it: 43 TODO where coverage.py finds 26 functions not
fully covered).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import projects
from tests.support.projects import Project
from tests.support.quests import ratchet_view

TESTS = """
import os
import subprocess
import sys
from pathlib import Path

from pkg.calc import double, sign

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_double():
    assert double(3) == 6


def test_sign_negative():
    assert sign(-5) == -1


def test_sign_positive_in_a_child_started_elsewhere(tmp_path):
    code = "from pkg.calc import sign; print(sign(5))"
    env = dict(os.environ, PYTHONPATH=SRC)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.stdout == "1\\n", done.stderr
"""


def quests(project: Project, name: str) -> dict[str, dict[str, Any]]:
    data = ratchet_view((project.path / name).read_bytes())
    return {
        qid: {k: v for k, v in entry.items() if k not in ("issued_at", "passed_at", "extra")}
        for qid, entry in data["quests"].items()
    }


@pytest.mark.children_measured
def test_relative_files_gives_the_quests_of_absolute_names(project: Project) -> None:
    project.source("calc", projects.CALC)
    project.test("test_calc", TESTS)
    result, plain = project.run_json("--quest", "scan", "--quest-file", "plain.json")
    assert result.ret == 0, result.stderr.str()
    (project.path / "pyproject.toml").write_text(projects.PYPROJECT + "relative_files = true\n")
    result, relative = project.run_json("--quest", "scan", "--quest-file", "relative.json")
    assert result.ret == 0, result.stderr.str()
    assert relative["regressed"] == [] and relative["counts"]["PASS"] == 2
    assert plain["counts"] == relative["counts"]
    assert quests(project, "relative.json") == quests(project, "plain.json")
    assert quests(project, "relative.json")[projects.SIGN]["covering_tests"] == [
        "tests/test_calc.py::test_sign_negative",
        "tests/test_calc.py::test_sign_positive_in_a_child_started_elsewhere",
    ]
