"""Incremental scan and check: after a change, the facts of running only the affected tests
are those of running them all.

Each case starts from one recorded full run of the same project, makes one
change, then scans twice into fresh ratchet files: once incrementally (the
record of the full run beside it), once with ``--quest-full``.  Every quest
must come out the same (lines, branches, covering tests, states), and the run
must say what it did: how many tests ran, or why it ran them all.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.projects import Project
from tests.support.quests import ratchet_view

CALC = """\
RATE = 2


def double(x):
    return x * RATE


def sign(x):
    if x > 0:
        return 1
    return -1


def halve(x):
    if x % 2:
        raise ValueError(x)
    return x // 2


class Box:
    def __init__(self, v):
        self.v = v

    def grow(self, n):
        for _ in range(n):
            self.v += 1
        return self.v


def untested(x):
    return x
"""

LAZY = """\
COUNT = 0


def bump():
    global COUNT
    COUNT += 1
    return COUNT
"""

TEST_CALC = """\
from pkg.calc import Box, double, sign


def test_double():
    assert double(2) == 4


def test_sign():
    assert sign(3) == 1


def test_box():
    assert Box(1).grow(2) == 3
"""

TEST_HALVE = """\
import pytest

from helpers import EVEN
from pkg.calc import halve


def test_halve():
    assert halve(EVEN) == EVEN // 2


def test_halve_odd():
    with pytest.raises(ValueError):
        halve(3)


def test_lazy_import():
    from pkg import lazy

    assert lazy.bump() >= 1
"""

CONFTEST = """\
import pytest


@pytest.fixture
def start():
    return 5
"""

TEST_SUB = """\
import json
from pathlib import Path

from pkg.calc import Box, sign


def test_grow(start):
    assert Box(start).grow(1) == start + 1


def test_data():
    value = json.loads((Path(__file__).parent / "data.json").read_text())["value"]
    assert sign(value) in (1, -1)
"""


def base_project(path: Path) -> Project:
    project = Project(path)
    project.source("calc", CALC)
    project.source("lazy", LAZY)
    project.test("test_calc", TEST_CALC)
    project.test("test_halve", TEST_HALVE)
    (project.path / "tests" / "helpers.py").write_text("EVEN = 4\n")
    sub = project.path / "tests" / "sub"
    sub.mkdir()
    (sub / "conftest.py").write_text(CONFTEST)
    (sub / "test_sub.py").write_text(TEST_SUB)
    (sub / "data.json").write_text('{"value": 1}\n')
    # The test run's own leavings are not the project's inputs.
    (project.path / ".gitignore").write_text("__pycache__/\n")
    return project


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def change_function(p: Path) -> None:
    # `sign` grows by two lines: `halve` and the rest move down, and are replayed there.
    edit(
        p / "src/pkg/calc.py",
        "    if x > 0:\n        return 1\n",
        "    if x > 0:\n        y = 1\n\n        return y\n",
    )


def change_method(p: Path) -> None:
    edit(p / "src/pkg/calc.py", "            self.v += 1\n", "            self.v += 2\n")


def change_module_level(p: Path) -> None:
    edit(p / "src/pkg/calc.py", "RATE = 2", "RATE = 3")


def change_lazy_module(p: Path) -> None:
    # A module a test imports itself: its module-level lines ran in the test.
    edit(p / "src/pkg/lazy.py", "    COUNT += 1\n", "    COUNT += 2\n")


def change_conftest_fixture(p: Path) -> None:
    edit(p / "tests/sub/conftest.py", "return 5", "return -5")


def change_helper(p: Path) -> None:
    (p / "tests" / "helpers.py").write_text("EVEN = 3\n")


def change_data_file(p: Path) -> None:
    (p / "tests" / "sub" / "data.json").write_text('{"value": -1}\n')


def delete_test(p: Path) -> None:
    # The only test of Box.grow goes: its coverage must go with it.
    edit(p / "tests/test_calc.py", "def test_box():\n    assert Box(1).grow(2) == 3\n", "")
    edit(
        p / "tests/sub/test_sub.py",
        "def test_grow(start):\n    assert Box(start).grow(1) == start + 1\n",
        "",
    )


def change_test(p: Path) -> None:
    # The test now reaches the other branch of `sign`: only running it again shows that.
    edit(p / "tests/test_calc.py", "assert sign(3) == 1", "assert sign(-3) == -1")


def add_test(p: Path) -> None:
    (p / "tests" / "test_more.py").write_text(
        "from pkg.calc import untested\n\n\ndef test_untested():\n    assert untested(1) == 1\n"
    )


def add_function(p: Path) -> None:
    # A new function called by a changed one: the tests of the changed one cover it.
    edit(
        p / "src/pkg/calc.py",
        "def untested(x):\n    return x\n",
        "def untested(x):\n    return x\n\n\ndef helper(x):\n    return -x\n",
    )
    edit(p / "src/pkg/calc.py", "    return -1\n", "    return helper(1)\n")


def delete_test_file(p: Path) -> None:
    (p / "tests" / "test_calc.py").unlink()


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    # change -> what the run says ("incremental: N of M" or the start of its full-run reason)
    "function": (change_function, "incremental: 2 of 8 tests ran"),
    "method": (change_method, "incremental: 2 of 8 tests ran"),
    "module-level code": (change_module_level, "full run: module-level code of src/pkg/calc.py"),
    "lazily imported module": (change_lazy_module, "incremental: 1 of 8 tests ran"),
    "conftest fixture": (change_conftest_fixture, "incremental: 2 of 8 tests ran"),
    "helper module": (change_helper, "full run: tests/helpers.py is changed"),
    "data file": (change_data_file, "full run: tests/sub/data.json is changed"),
    "deleted tests": (delete_test, "incremental: 3 of 6 tests ran"),
    "deleted test file": (delete_test_file, "incremental: 0 of 5 tests ran"),
    "changed test": (change_test, "incremental: 3 of 8 tests ran"),
    "new test file": (add_test, "incremental: 1 of 9 tests ran"),
    "new function": (add_function, "incremental: 2 of 8 tests ran"),
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project after one full scan: its run record beside it (outside the project)."""
    root = tmp_path_factory.mktemp("recorded")
    project = base_project(root / "project")
    result = project.run(
        "--quest",
        "scan",
        f"--quest-file={root / 'first.json'}",
        f"--quest-run-data={root / 'run.gz'}",
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert (root / "run.gz").exists()
    return root


def quests(path: Path) -> dict[str, dict[str, Any]]:
    data = ratchet_view(path.read_bytes())
    return {
        qid: {k: v for k, v in entry.items() if k not in ("issued_at", "passed_at", "extra")}
        for qid, entry in data["quests"].items()
    }


def scan(project: Project, quest_file: Path, *args: str) -> tuple[dict[str, Any], str]:
    result, data = project.run_json("--quest", "scan", f"--quest-file={quest_file}", *args)
    assert result.ret in (0, 1), result.stdout.str() + result.stderr.str()
    run = data.pop("run")
    said = (
        f"full run: {run['full']}"
        if run["full"]
        else f"incremental: {run['ran']} of {run['ran'] + run['kept']} tests ran"
    )
    return data, said


@pytest.mark.parametrize("case", sorted(CASES))
def test_incremental_facts_are_a_full_runs(recorded: Path, tmp_path: Path, case: str) -> None:
    change, expected = CASES[case]
    project = Project.__new__(Project)
    project.path, project.autoload = tmp_path / "project", False
    shutil.copytree(recorded / "project", project.path)
    run_data = tmp_path / "run.gz"
    shutil.copy(recorded / "run.gz", run_data)
    change(project.path)

    incremental, said = scan(project, tmp_path / "incremental.json", f"--quest-run-data={run_data}")
    full, _ = scan(
        project, tmp_path / "full.json", "--quest-full", f"--quest-run-data={tmp_path / 'other.gz'}"
    )

    assert quests(tmp_path / "incremental.json") == quests(tmp_path / "full.json")
    assert incremental == full
    assert said.startswith(expected), said


def checkout(template: Path, path: Path) -> Project:
    project = Project.__new__(Project)
    project.path, project.autoload = path, False
    shutil.copytree(template, path)
    return project


def shard_scan(job: Project, paths: list[str]) -> dict[str, Any]:
    """One CI job's part of the scan, in its own checkout with its own run record."""
    result, data = job.run_json("--quest", "scan", "--quest-shard-out=shard", *paths)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    return data


def test_each_shard_runs_again_only_its_tests_the_change_can_affect(tmp_path: Path) -> None:
    template = base_project(tmp_path / "template").path
    split = [["tests/test_calc.py"], ["tests/test_halve.py", "tests/sub"]]
    jobs = [checkout(template, tmp_path / f"job{n}") for n in range(2)]
    first = [shard_scan(job, paths) for job, paths in zip(jobs, split)]
    assert [data["run"]["full"].startswith("no previous run recorded") for data in first] == [
        True,
        True,
    ]
    final = checkout(template, tmp_path / "final")
    for job in [*jobs, final]:
        change_function(job.path)
    # The shard written into the checkout last time is no input of this run.
    again = [shard_scan(job, paths) for job, paths in zip(jobs, split)]
    # `sign` is run by test_sign (first shard, 3 tests) and test_data (second, 5 tests).
    assert [(data["run"]["ran"], data["run"]["kept"], data["run"]["full"]) for data in again] == [
        (1, 2, None),
        (1, 4, None),
    ]
    for n, job in enumerate(jobs):
        shutil.copytree(job.path / "shard", final.path / f"shards/{n}")
    result, _ = final.run_json(
        "--quest", "combine", "--quest-file=combined.json", "shards/0", "shards/1"
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    scan(final, tmp_path / "full.json", "--quest-full", f"--quest-run-data={tmp_path / 'full.gz'}")
    assert quests(final.path / "combined.json") == quests(tmp_path / "full.json")
