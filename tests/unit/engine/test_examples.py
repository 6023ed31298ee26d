"""The example test shown with a quest: its own covering test, else a test of
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


CLI_TESTS = """\
import subprocess
import sys

import pytest

from pkg.lri import LRI


def test_a_cli():
    out = subprocess.run([sys.executable, "-m", "pkg.lri", "pop"], capture_output=True)
    assert out.returncode == 0


def test_b_long():
    cache = LRI()
    cache.put(1, 2)
    cache.put(3, 4)
    assert cache.pop() == 4


def test_c_short():
    assert LRI().pop() is None


def test_d_helper_only():
    assert LRI().items == []


def test_f_bench(benchmark):
    benchmark(LRI().pop)


def test_g_raises():
    with pytest.raises(KeyError):
        LRI().pop(strict=True)


@pytest.mark.parametrize(
    "key, value",
    [
        (1, 2),
        (3, 4),
        (5, 6),
        (7, 8),
    ],
)
def test_e_table(key, value):
    assert LRI().pop() is None
"""


def cli_setup(tmp_path: Path, *quests: Quest) -> Ratchet:
    ratchet = setup(tmp_path, *quests, new=False)
    path = tmp_path / "tests" / "test_cli.py"
    path.write_text(CLI_TESTS)
    ratchet.test_files["tests/test_cli.py"] = digest(path)
    return ratchet


def test_the_shortest_own_test_that_calls_the_function_not_one_through_a_subprocess(
    tmp_path: Path,
) -> None:
    tests = ["tests/test_cli.py::test_a_cli", "tests/test_cli.py::test_b_long",
             "tests/test_cli.py::test_c_short"]  # fmt: skip
    pop = quest("LRI.pop", 13, tests)
    example = example_for(pop, cli_setup(tmp_path, pop), tmp_path)
    assert (example["kind"], example["test"]) == ("own", "tests/test_cli.py::test_c_short")


def test_a_function_reached_only_through_a_subprocess_shows_a_neighbour_that_calls_its_own(
    tmp_path: Path,
) -> None:
    pop = quest("LRI.pop", 13, ["tests/test_cli.py::test_a_cli"])
    # The neighbour's only covering test does not call it: the next neighbour's does.
    put = quest("LRI.put", 16, ["tests/test_cli.py::test_d_helper_only"], State.PASS)
    get = quest("LRI.get", 30, ["tests/test_lri.py::test_get"], State.PASS)
    example = example_for(pop, cli_setup(tmp_path, pop, put, get), tmp_path)
    assert (example["kind"], example["test"]) == ("neighbour", "tests/test_lri.py::test_get")
    # None that calls: a skeleton (how to call it), never the misleading test.
    alone = quest("LRI.pop", 13, ["tests/test_cli.py::test_a_cli"])
    example = example_for(alone, cli_setup(tmp_path / "b", alone, put), tmp_path / "b")
    assert example["kind"] == "skeleton"


def test_a_dunder_is_called_through_its_class_and_a_nested_function_through_its_parent(
    tmp_path: Path,
) -> None:
    eq = quest("LRI.__eq__", 10, ["tests/test_cli.py::test_a_cli", "tests/test_lri.py::test_get"])
    example = example_for(eq, cli_setup(tmp_path, eq), tmp_path)
    assert (example["kind"], example["test"]) == ("own", "tests/test_lri.py::test_get")
    nested = tmp_path / "nested"
    inner = quest("helper.inner", 2, ["tests/test_cli.py::test_a_cli",
                                      "tests/test_lri.py::test_helper"])  # fmt: skip
    ratchet = cli_setup(nested, inner)
    (nested / SOURCE).write_text("def helper():\n    def inner():\n        return 1\n")
    example = example_for(inner, ratchet, nested)
    assert (example["kind"], example["test"]) == ("own", "tests/test_lri.py::test_helper")


def test_a_long_parameter_table_counts_in_a_test_s_length(tmp_path: Path) -> None:
    # Its body is one line, its source as shown twelve: the two-line test is shorter.
    tests = ["tests/test_cli.py::test_e_table[1-2]", "tests/test_cli.py::test_b_long"]
    pop = quest("LRI.pop", 13, tests)
    example = example_for(pop, cli_setup(tmp_path, pop), tmp_path)
    assert (example["kind"], example["test"]) == ("own", "tests/test_cli.py::test_b_long")


def test_a_test_that_checks_nothing_is_shown_last(tmp_path: Path) -> None:
    # A benchmark that only runs the code is shorter, and no pattern to follow.
    tests = ["tests/test_cli.py::test_f_bench", "tests/test_cli.py::test_b_long"]
    pop = quest("LRI.pop", 13, tests)
    example = example_for(pop, cli_setup(tmp_path, pop), tmp_path)
    assert example["test"] == "tests/test_cli.py::test_b_long"
    # `pytest.raises` is a check.
    tests = ["tests/test_cli.py::test_f_bench", "tests/test_cli.py::test_g_raises"]
    pop = quest("LRI.pop", 13, tests)
    example = example_for(pop, cli_setup(tmp_path / "b", pop), tmp_path / "b")
    assert example["test"] == "tests/test_cli.py::test_g_raises"
    # With nothing else, it is still shown.
    pop = quest("LRI.pop", 13, ["tests/test_cli.py::test_f_bench"])
    example = example_for(pop, cli_setup(tmp_path / "c", pop), tmp_path / "c")
    assert example["test"] == "tests/test_cli.py::test_f_bench"
