"""The fast measurement (each test's arcs folded in memory) gives the facts of the straightforward one.

The straightforward measurement is coverage.py's own dynamic context per
test: pytest-quest uses it when it borrows pytest-cov's tracer (``--cov``),
and whenever the tracer's data is not of the shape the fold knows.  Both
runs below measure the same tricky project; every quest must come out the
same (lines, branches, covering tests, states), and the fold must really
have been used for the plain run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.projects import Project
from tests.support.quests import ratchet_view

pytest.importorskip("pytest_cov")
pytestmark = pytest.mark.all_plugins

TRICKY = """
import threading


def plain(x):
    if x > 0:
        return "pos"
    return "neg"


def only_failing(x):
    return x + 1


def only_skipped():
    return "skipped"


def only_xfail(x):
    if x:
        return 1
    return 0


def at_import():
    return 42


VALUE = at_import()


def gen(n):
    for i in range(n):
        if i % 2:
            yield i
        else:
            yield -i


SHARED = gen(4)


def outer(x):
    def inner(y):
        return y * 2

    square = lambda v: v * v  # noqa: E731
    return [inner(v) + square(v) for v in range(x)]


class Box:
    def __init__(self):
        self._v = 0

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, value):
        if value < 0:
            raise ValueError(value)
        self._v = value


def make_closure():
    def later():
        return "late"

    return later


LATE = make_closure()


def in_thread(results):
    results.append(plain(-1))


def one_line(): return 1


def excepts(x):
    try:
        return 10 // x
    except ZeroDivisionError:
        return None
"""

TESTS = """
import threading

import pytest

from pkg import tricky as t


def test_plain():
    assert t.plain(1) == "pos"


def test_fails():
    assert t.only_failing(1) == 0


@pytest.mark.skip(reason="never runs")
def test_skipped():
    t.only_skipped()


@pytest.mark.xfail(reason="expected")
def test_xfail():
    assert t.only_xfail(1) == 0


def test_generator_first():
    assert next(t.SHARED) == 0


def test_generator_resumed():
    assert next(t.SHARED) == 1


def test_nested_lambda_comprehension():
    assert t.outer(2) == [0, 3]


def test_property_twins():
    box = t.Box()
    box.v = 3
    assert box.v == 3


def test_closure_made_at_import():
    assert t.LATE() == "late"


def test_thread():
    out = []
    worker = threading.Thread(target=t.in_thread, args=(out,))
    worker.start()
    worker.join()
    assert out == ["neg"]


@pytest.mark.parametrize("x", [2, 0])
def test_excepts(x):
    assert t.excepts(x) in (5, None)


@pytest.fixture
def broken():
    t.one_line()
    raise RuntimeError("setup fails")


def test_setup_error(broken):
    pass
"""


def quests(project: Project, name: str) -> dict[str, dict[str, Any]]:
    data = ratchet_view((project.path / name).read_bytes())
    return {
        qid: {k: v for k, v in entry.items() if k not in ("issued_at", "passed_at", "extra")}
        for qid, entry in data["quests"].items()
    }


def test_folded_measurement_gives_the_facts_of_per_test_contexts(project: Project) -> None:
    project.source("tricky", TRICKY)
    project.test("test_tricky", TESTS)
    # TESTS has a failing test: scan exits 1 like pytest, quests still recorded.
    result, _ = project.run_json("--quest", "scan", "--quest-file", "fast.json")
    assert result.ret == 1, result.stderr.str()
    result, _ = project.run_json(
        "--quest", "scan", "--quest-file", "contexts.json", "--cov=src/pkg", "--cov-report="
    )
    assert result.ret == 1, result.stderr.str()
    fast = quests(project, "fast.json")
    contexts = quests(project, "contexts.json")
    assert fast == contexts
    # The comparison is not vacuous: tests that did not pass, and import-time
    # execution, were dropped; a resumed generator and a thread were attributed.
    by_name = {qid.split("::")[1]: entry for qid, entry in fast.items()}
    assert by_name["only_failing"]["state"] == "TODO"
    assert by_name["only_failing"]["covering_tests"] == []
    assert by_name["only_xfail"]["covering_tests"] == []
    assert by_name["at_import"]["covering_tests"] == []
    assert by_name["one_line"]["covering_tests"] == []
    assert by_name["gen"]["covering_tests"] == [
        "tests/test_tricky.py::test_generator_first",
        "tests/test_tricky.py::test_generator_resumed",
    ]
    assert by_name["plain"]["covering_tests"] == [
        "tests/test_tricky.py::test_plain",
        "tests/test_tricky.py::test_thread",
    ]
    assert by_name["plain"]["state"] == "PASS"
    assert by_name["excepts"]["state"] == "PASS"
    assert by_name["outer.inner"]["covering_tests"] == [
        "tests/test_tricky.py::test_nested_lambda_comprehension"
    ]


def test_the_fold_is_used_with_coverages_c_tracer(tmp_path: Path) -> None:
    # Run in a child: this test process may itself be measured.
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from pytest_quest.engine.measure import Measurer\n"
        f"root = Path({str(tmp_path)!r})\n"
        "m = Measurer(root, [str(root)], os.path.join(str(root), '.coverage'))\n"
        "m.start()\n"
        "print(type(getattr(m, '_harvest', None)).__name__, m.cov._collector.tracer_name())\n"
        "m.stop()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=None
    )
    assert out.stdout.split() == ["Harvest", "CTracer"]
