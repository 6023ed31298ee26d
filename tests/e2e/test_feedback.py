"""Feedback an agent can act on: one scanned project, copied per test.

Item 1: a submit whose new test fails names that test and its error before
any coverage fact, and says which lines only failing tests reached.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.test_export import COMMON, documented_keys
from tests.support.projects import Project, scanned_template

LRI = """\
class LRI:
    def __init__(self, items):
        self.items = list(items)

    def __eq__(self, other):
        if not isinstance(other, LRI):
            return NotImplemented
        return self.items == other.items
"""

TEST_INIT = """\
from pkg.lri import LRI


def test_init():
    assert LRI([1]).items == [1]
"""

EQ = "src/pkg/lri.py::LRI.__eq__"

# The agent's new test: it reaches line 8 (the comparison), then fails; the
# passing one reaches only the isinstance guard's early return.
TEST_EQ = """\
from pkg.lri import LRI


def test_eq_cycle():
    def deep(n):
        return deep(n + 1)
    assert LRI([1]) == LRI([1])
    deep(0)


def test_eq_other():
    assert LRI([1]).__eq__(3) is NotImplemented
"""


def _build(project: Project) -> None:
    project.source("lri", LRI)
    project.test("test_init", TEST_INIT)


@pytest.fixture(scope="module")
def lri_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, Any]]:
    return scanned_template(tmp_path_factory, _build)


def test_a_failing_new_test_is_named_with_its_error_before_coverage(
    project: Project, lri_template: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(lri_template[0])
    project.test("test_eq", TEST_EQ)
    result, data = project.run_json("--quest", "submit", "--quest-id", EQ)
    assert data.get("verdict") == "FAIL", data
    # Item 3: every key documented, `remaining` and `done` always there.
    docs = documented_keys()
    assert set(data) - COMMON <= docs["submit"], set(data) - COMMON - docs["submit"]
    assert set(data["quest"]) <= docs["Rules"]
    assert (data["remaining"], data["done"]) == (1, False)
    assert data["next_quest"] is None  # it stays TODO: submit again, the loop is not over
    facts = data["quest"]["facts"]
    assert facts[0]["check"] == "test.failed"
    assert facts[0]["field"] == "tests/test_eq.py::test_eq_cycle"
    assert facts[0]["actual"].startswith("failed: RecursionError: maximum recursion depth exceeded")
    assert all(f["check"].startswith("coverage.") for f in facts[1:]), facts
    by_field = {f["field"]: f for f in facts}
    assert "reached only by failing tests" in by_field["src/pkg/lri.py:8"]["message"]
    assert "(taken only by failing tests)" in by_field["src/pkg/lri.py:6->8"]["message"]
    # The text form says the same, failing test first (a submit judges only what changed).
    project.test("test_eq", TEST_EQ + "# again\n")
    result = project.run("--quest", "submit", "--quest-id", EQ)
    text = result.stdout.str()
    assert (
        "tests/test_eq.py::test_eq_cycle failed: RecursionError: maximum recursion depth exceeded"
        in text
    )
    assert text.index("test_eq_cycle failed") < text.index("line 8 not covered")


# -- item 6: a test is credited only for its own threads, and threads it started ----------

THREADS = """\
import threading

GO = threading.Event()
DONE = threading.Event()


def late():
    return "late"


def joined():
    return "joined"


def leave_behind():
    def run():
        GO.wait(30)
        late()
        DONE.set()

    threading.Thread(target=run, daemon=True).start()


def start_and_join():
    thread = threading.Thread(target=joined)
    thread.start()
    thread.join()
"""

# test_a leaves a thread waiting; test_b lets it run `late` and waits until it did.
TEST_THREADS = """\
from pkg.threads import DONE, GO, leave_behind, start_and_join


def test_a_leaves_a_thread_behind():
    leave_behind()


def test_b_merely_runs_meanwhile():
    GO.set()
    assert DONE.wait(30)


def test_c_joins_its_thread():
    start_and_join()
"""


@pytest.mark.children_measured
def test_arcs_of_a_leftover_thread_are_credited_to_no_test(project: Project) -> None:
    project.source("threads", THREADS)
    project.test("test_threads", TEST_THREADS)
    result, data = project.run_json("--quest", "scan")
    assert result.ret == 0, result.stderr.str()
    quests = project.ratchet()["quests"]
    late = quests["src/pkg/threads.py::late"]
    # `late` ran while test_b ran, in a thread test_a started: nobody's.
    assert late["state"] == "TODO", late
    assert late["covering_tests"] == []
    joined = quests["src/pkg/threads.py::joined"]
    assert joined["state"] == "PASS"
    assert joined["covering_tests"] == ["tests/test_threads.py::test_c_joins_its_thread"]
