"""The example test shown with a quest (issue 14, item 4): its own covering test, else a test of
the nearest function in the same class or module, else a skeleton; never a test written since
the scan for another quest while something else exists."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.core.model import Quest, Ratchet, State
from pytest_quest.engine.examples import example_for
from pytest_quest.engine.testfiles import digest

SOURCE = "src/pkg/lri.py"

TESTS = """\
from pkg.lri import LRI, helper


def test_init():
    assert LRI().items == []


def test_get():
    assert LRI().get(1) is None


def test_helper():
    assert helper() == 1
"""

NEW_TESTS = """\
from pkg.lri import LRI


def test_pop_new():
    assert LRI().pop() is None
"""


def quest(qualname: str, first: int, covering: list[str], state: State = State.TODO) -> Quest:
    return Quest(
        id=f"{SOURCE}::{qualname}",
        file=SOURCE,
        qualname=qualname,
        first=first,
        last=first + 2,
        fingerprint="x",
        state=state,
        covering_tests=covering,
    )


def setup(tmp_path: Path, *quests: Quest, new: bool = True) -> Ratchet:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / SOURCE).write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_lri.py").write_text(TESTS)
    scanned = {"tests/test_lri.py": digest(tmp_path / "tests" / "test_lri.py")}
    if new:  # written after the scan, for another quest
        (tmp_path / "tests" / "test_new.py").write_text(NEW_TESTS)
    return Ratchet(quests={q.id: q for q in quests}, test_files=scanned)


def test_own_covering_test_first(tmp_path: Path) -> None:
    eq = quest("LRI.__eq__", 10, ["tests/test_lri.py::test_get"])
    helper = quest("helper", 11, ["tests/test_lri.py::test_helper"], State.PASS)
    ratchet = setup(tmp_path, eq, helper)
    example = example_for(eq, ratchet, tmp_path)
    assert (example["kind"], example["test"]) == ("own", "tests/test_lri.py::test_get")
    assert example["function"] == eq.id


def test_same_class_before_a_nearer_function_of_the_module(tmp_path: Path) -> None:
    eq = quest("LRI.__eq__", 10, [])
    helper = quest("helper", 14, ["tests/test_lri.py::test_helper"], State.PASS)
    init = quest("LRI.__init__", 2, ["tests/test_lri.py::test_init"], State.PASS)
    ratchet = setup(tmp_path, eq, helper, init)
    example = example_for(eq, ratchet, tmp_path)
    assert (example["kind"], example["test"]) == ("neighbour", "tests/test_lri.py::test_init")


def test_a_test_written_since_the_scan_for_another_quest_is_not_shown(tmp_path: Path) -> None:
    eq = quest("LRI.__eq__", 10, [])
    pop = quest("LRI.pop", 13, ["tests/test_new.py::test_pop_new"], State.PASS)
    helper = quest("helper", 40, ["tests/test_lri.py::test_helper"], State.PASS)
    ratchet = setup(tmp_path, eq, pop, helper)
    example = example_for(eq, ratchet, tmp_path)
    assert (example["kind"], example["test"]) == ("neighbour", "tests/test_lri.py::test_helper")


def test_a_changed_test_file_counts_as_written_since_the_scan(tmp_path: Path) -> None:
    eq = quest("LRI.__eq__", 10, [])
    init = quest("LRI.__init__", 2, ["tests/test_lri.py::test_init"], State.PASS)
    ratchet = setup(tmp_path, eq, init)
    path = tmp_path / "tests" / "test_lri.py"
    path.write_text(path.read_text() + "\n\ndef test_more():\n    pass\n")
    example = example_for(eq, ratchet, tmp_path)
    assert example["kind"] == "skeleton"
    assert example["source"].startswith("from pkg.lri import LRI\n")


def test_only_new_tests_exist_then_skeleton(tmp_path: Path) -> None:
    eq = quest("LRI.__eq__", 10, [])
    pop = quest("LRI.pop", 13, ["tests/test_new.py::test_pop_new"], State.PASS)
    ratchet = setup(tmp_path, eq, pop)
    assert example_for(eq, ratchet, tmp_path)["kind"] == "skeleton"


def test_own_new_test_is_still_its_own(tmp_path: Path) -> None:
    eq = quest("LRI.__eq__", 10, ["tests/test_new.py::test_pop_new"])
    ratchet = setup(tmp_path, eq)
    assert example_for(eq, ratchet, tmp_path)["kind"] == "own"


def test_a_changed_file_keeps_the_tests_the_scan_saw(tmp_path: Path) -> None:
    eq = quest("LRI.__eq__", 10, [])
    init = quest("LRI.__init__", 2, ["tests/test_lri.py::test_init"], State.PASS)
    init.baseline = True  # PASS at the scan: its covering tests existed then
    ratchet = setup(tmp_path, eq, init)
    path = tmp_path / "tests" / "test_lri.py"
    path.write_text(path.read_text() + "\n\ndef test_more():\n    pass\n")
    example = example_for(eq, ratchet, tmp_path)
    assert (example["kind"], example["test"]) == ("neighbour", "tests/test_lri.py::test_init")
