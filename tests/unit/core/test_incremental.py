"""The selection rule of incremental runs: which tests a change can affect, and where lines moved."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_quest.core.incremental import (
    Changes,
    Full,
    LineMap,
    RecordedTest,
    arc_lines,
    classify,
    line_map,
    move_arcs,
    select,
)

SOURCE = """\
import os

RATE = 2


def double(x):
    return x * RATE


class Box:
    size = 3

    @property
    def v(self):
        return self._v

    def grow(self, n):
        for _ in range(n):
            self._v += 1
"""


def lines_of(source: str, text: str) -> int:
    return source.splitlines().index(text) + 1


# -- line_map -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "module_changed"),
    [
        ("RATE = 2", "RATE = 3", True),  # a module constant
        ("    size = 3", "    size = 4", True),  # a class body
        ("    @property", "    @staticmethod", True),  # a decorator runs at import
        ("import os", "import sys", True),
        ("import os", "import os  # the OS", False),  # a comment
        ("import os\n", "import os\n\n\n# why\n", False),  # blank lines and comments
        ("    return x * RATE", "    return x * RATE * 1", False),  # one function's body
        ("def double(x):", "def double(x, y=1):", False),  # its signature is its own
    ],
)
def test_module_level_changes_are_told_from_function_changes(
    old: str, new: str, module_changed: bool
) -> None:
    assert old in SOURCE
    assert line_map(SOURCE, SOURCE.replace(old, new, 1)).module_changed is module_changed


def test_a_changed_function_has_no_lines_and_the_others_move() -> None:
    new = SOURCE.replace("    return x * RATE\n", "    y = x * RATE\n\n    return y\n")
    found = line_map(SOURCE, new)
    assert not found.module_changed
    assert lines_of(SOURCE, "    return x * RATE") not in found.lines
    assert lines_of(SOURCE, "def double(x):") not in found.lines
    old_grow = lines_of(SOURCE, "            self._v += 1")
    assert found.lines[old_grow] == lines_of(new, "            self._v += 1")
    assert found.lines[lines_of(SOURCE, "RATE = 2")] == lines_of(new, "RATE = 2")


def test_a_comment_inside_a_function_keeps_it_mapped() -> None:
    new = SOURCE.replace(
        "        for _ in range(n):\n", "        # one at a time\n        for _ in range(n):\n"
    )
    found = line_map(SOURCE, new)
    old_line = lines_of(SOURCE, "            self._v += 1")
    assert found.lines[old_line] == old_line + 1


def test_a_multi_line_strings_blank_line_is_code() -> None:
    old = 'TEXT = """a\nb"""\n'
    assert line_map(old, 'TEXT = """a\n\nb"""\n').module_changed


def test_functions_added_or_removed_are_no_module_change_but_reordered_are() -> None:
    added = SOURCE + "\n\ndef extra():\n    return 1\n"
    assert not line_map(SOURCE, added).module_changed
    assert not line_map(added, SOURCE).module_changed
    two = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    swapped = "def b():\n    return 2\n\n\ndef a():\n    return 1\n"
    assert line_map(two, swapped).module_changed


def test_a_file_that_does_not_parse_is_a_module_change() -> None:
    assert line_map(SOURCE, "def broken(:\n").module_changed


def test_arcs_move_with_their_lines_and_exits_keep_their_sign() -> None:
    moved = LineMap(lines={3: 5, 4: 6})
    assert move_arcs([(3, 4), (4, -3)], moved) == [(5, 6), (6, -5)]
    assert move_arcs([(3, 7)], moved) is None
    assert arc_lines([(3, 4), (4, -3), (-1, 3)]) == {1, 3, 4}


# -- classify ---------------------------------------------------------------------


def test_classify_sorts_changes_and_refuses_what_no_test_traces_to() -> None:
    previous = {
        "src/a.py": "1",
        "src/gone.py": "2",
        "tests/test_a.py": "3",
        "tests/conftest.py": "4",
        "README.md": "5",
    }
    now = {
        "src/a.py": "9",
        "tests/test_a.py": "9",
        "tests/conftest.py": "9",
        "README.md": "5",
        "src/new.py": "1",
    }
    found = classify(
        previous,
        now,
        sources={"src/a.py", "src/gone.py", "src/new.py"},
        test_files={"tests/test_a.py"},
    )
    assert not isinstance(found, Full)
    to_map, changes = found
    assert to_map == ["src/a.py", "src/new.py"]
    assert changes.removed_sources == {"src/gone.py"}
    assert changes.test_files == {"tests/test_a.py"}
    assert changes.conftest_dirs == {"tests"}
    for path, what in (("README.md", "changed"), ("data.json", "new")):
        changed = {**now, path: "other"}
        refused = classify(previous, changed, sources=set(), test_files=set())
        assert refused == Full(f"{path} is {what}, and no test can be traced to it")


# -- select -----------------------------------------------------------------------

PASSED = RecordedTest("passed", {"src/a.py": frozenset({3, 4})})
RECORDED = {
    "tests/test_a.py::test_runs_changed": RecordedTest("passed", {"src/a.py": frozenset({3, 10})}),
    "tests/test_a.py::test_kept": PASSED,
    "tests/test_b.py::test_failed_before": RecordedTest("failed", {}),
    "tests/test_b.py::test_children": RecordedTest("passed", {}, children=True),
    "tests/sub/test_c.py::test_under_conftest": PASSED,
    "tests/test_d.py::test_in_changed_file": PASSED,
    "tests/test_e.py::test_ran_removed": RecordedTest("passed", {"src/gone.py": frozenset({1})}),
    "tests/test_e.py::test_kept_too": PASSED,
}


@pytest.mark.parametrize(
    ("nodeid", "chosen"),
    [
        ("tests/test_a.py::test_runs_changed", True),  # executed line 10, which changed
        ("tests/test_a.py::test_kept", False),
        ("tests/test_b.py::test_failed_before", True),
        ("tests/test_b.py::test_children", True),
        ("tests/sub/test_c.py::test_under_conftest", True),
        ("tests/test_d.py::test_in_changed_file", True),
        ("tests/test_e.py::test_ran_removed", True),
        ("tests/test_e.py::test_kept_too", False),
        ("tests/test_e.py::test_new", True),  # never recorded
    ],
)
def test_select(nodeid: str, chosen: bool) -> None:
    changes = Changes(
        source_maps={"src/a.py": LineMap(lines={3: 3, 4: 5})},
        removed_sources=frozenset({"src/gone.py"}),
        test_files=frozenset({"tests/test_d.py"}),
        conftest_dirs=frozenset({"tests/sub"}),
    )
    file = nodeid.split("::", maxsplit=1)[0]
    assert (nodeid in select([(nodeid, file)], RECORDED, changes)) is chosen


def test_a_root_conftest_reaches_every_test() -> None:
    changes = Changes(conftest_dirs=frozenset({""}))
    assert select([("tests/test_a.py::test_kept", "tests/test_a.py")], RECORDED, changes) == {
        "tests/test_a.py::test_kept"
    }


# -- the rule as a property ---------------------------------------------------------

BODY = st.lists(
    st.sampled_from(["x = 1", "y = x", "x += 2", "pass", "# note", ""]), min_size=1, max_size=4
)


def module(bodies: list[list[str]]) -> str:
    parts = []
    for number, body in enumerate(bodies):
        lines = [f"def f{number}(x):"] + [f"    {line}" if line else "" for line in body]
        parts.append("\n".join(lines) + "\n    return x\n")
    return "VALUE = 1\n\n\n" + "\n\n".join(parts)


@given(
    bodies=st.lists(BODY, min_size=2, max_size=5),
    target=st.integers(min_value=0, max_value=4),
    inserted=BODY,
    runs=st.lists(st.sets(st.integers(min_value=0, max_value=4), max_size=3), max_size=6),
)
def test_tests_of_a_changed_function_run_and_the_others_replay_on_the_same_code(
    bodies: list[list[str]], target: int, inserted: list[str], runs: list[set[int]]
) -> None:
    target %= len(bodies)
    old = module(bodies)
    changed = [list(body) for body in bodies]
    changed[target] = [*inserted, "x = x * 3", *changed[target]]
    new = module(changed)
    found = line_map(old, new)
    assert not found.module_changed
    old_lines, new_lines = old.splitlines(), new.splitlines()

    def body_lines(number: int) -> set[int]:
        start = old_lines.index(f"def f{number}(x):") + 1
        end = start + len(bodies[number]) + 1
        return {n for n in range(start, end + 1) if old_lines[n - 1].strip() not in ("", "# note")}

    recorded = {
        f"t.py::test_{i}": RecordedTest(
            "passed", {"m.py": frozenset(set().union(*(body_lines(f % len(bodies)) for f in run)))}
        )
        for i, run in enumerate(runs)
    }
    chosen = select(
        [(nodeid, "t.py") for nodeid in recorded], recorded, Changes(source_maps={"m.py": found})
    )
    for nodeid, test in recorded.items():
        ran_target = bool(test.lines["m.py"] & body_lines(target))
        assert (nodeid in chosen) is ran_target
        if not ran_target:
            for line in test.lines["m.py"]:
                assert new_lines[found.lines[line] - 1] == old_lines[line - 1]
