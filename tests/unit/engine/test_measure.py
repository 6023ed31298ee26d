"""Unit tests of the static half of ``measure.py``: which functions a source has,
their ids, spans and fingerprints.  No coverage run, no subprocess.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

import pytest

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import FunctionFacts, make_quest_id
from pytest_quest.engine.source import (
    FunctionInfo,
    fingerprint_node,
    new_exclusions,
    source_functions,
)
from tests.support import projects

SHAPES = "import functools\n\n\n" + projects.SHAPES

# qualname, ordinal, first, last: `first` is the def line, `last` the end of
# the body including nested functions.
EXPECTED = [
    ("plain", 1, 4, 5),
    ("outer", 1, 8, 12),
    ("outer.inner", 1, 9, 10),
    ("fetch", 1, 15, 16),
    ("gen", 1, 19, 21),
    ("one", 1, 24, 24),
    ("skipped", 1, 27, 28),
    ("C.method", 1, 32, 33),
    ("C.stat", 1, 36, 37),
    ("C.klass", 1, 40, 41),
    ("C.x", 1, 44, 45),
    ("C.x", 2, 48, 49),
]


def ids(functions: Iterable[FunctionInfo]) -> list[str]:
    return [make_quest_id(f.file, f.qualname, f.ordinal) for f in functions]


def test_every_shape_is_one_function_in_source_order() -> None:
    functions = source_functions("src/pkg/shapes.py", SHAPES)
    assert [(f.qualname, f.ordinal, f.first, f.last) for f in functions] == EXPECTED
    assert all(f.file == "src/pkg/shapes.py" for f in functions)
    assert all(f.start == f.first for f in functions)


def test_property_twins_get_ordinal_ids() -> None:
    functions = source_functions("src/pkg/shapes.py", SHAPES)
    assert [i for i in ids(functions) if "C.x" in i] == [
        "src/pkg/shapes.py::C.x",
        "src/pkg/shapes.py::C.x@2",
    ]
    getter, setter = (f for f in functions if f.qualname == "C.x")
    assert getter.fingerprint != setter.fingerprint


def test_twin_ids_survive_lines_added_above() -> None:
    moved = "import os\nimport sys\n\nCONSTANT = 3\n" + SHAPES
    before = source_functions("src/pkg/shapes.py", SHAPES)
    after = source_functions("src/pkg/shapes.py", moved)
    assert ids(after) == ids(before)
    assert [f.first for f in after] == [f.first + 4 for f in before]
    assert [f.fingerprint for f in after] == [f.fingerprint for f in before]


def test_twins_under_if_else_are_numbered_in_source_order() -> None:
    source = textwrap.dedent(
        """\
        import sys

        if sys.platform == "win32":
            def where():
                return "C:"
        else:
            def where():
                return "/"
        """
    )
    functions = source_functions("src/pkg/w.py", source)
    assert ids(functions) == ["src/pkg/w.py::where", "src/pkg/w.py::where@2"]
    assert [f.first for f in functions] == [4, 7]


def test_region_lines_are_the_body_and_nested_functions_are_carved_out() -> None:
    functions = {f.qualname: f for f in source_functions("src/pkg/shapes.py", SHAPES)}
    assert functions["plain"].lines == {5}
    # `def inner` is a statement of outer; inner's body is not outer's.
    assert functions["outer"].lines == {9, 11, 12}
    assert functions["outer.inner"].lines == {10}
    assert functions["gen"].lines == {20, 21}
    assert functions["one"].lines == {24}


def test_a_module_without_functions_has_none() -> None:
    assert source_functions("src/pkg/consts.py", "A = 1\nB = [A, 2]\n") == []
    assert source_functions("src/pkg/empty.py", "") == []


def test_lambdas_and_comprehensions_belong_to_their_function() -> None:
    source = "def f(xs):\n    key = lambda x: -x\n    return sorted([x for x in xs], key=key)\n"
    [function] = source_functions("src/pkg/f.py", source)
    assert (function.qualname, function.lines) == ("f", {2, 3})


def test_syntax_error_is_a_usage_error_naming_file_and_line() -> None:
    with pytest.raises(QuestUsageError) as info:
        source_functions("src/pkg/bad.py", "def f():\n    return 1\n\ndef g(:\n    pass\n")
    message = str(info.value)
    assert message.startswith("src/pkg/bad.py:4: syntax error in the code under test")
    assert "fix it" in message


# -- fingerprints ---------------------------------------------------------------------


def fingerprint_of(source: str, qualname: str = "f", ordinal: int = 1) -> str:
    for function in source_functions("src/pkg/f.py", textwrap.dedent(source)):
        if (function.qualname, function.ordinal) == (qualname, ordinal):
            return function.fingerprint
    raise AssertionError(f"{qualname} not found")


BASE = """\
def f(x):
    if x > 0:
        return x
    return -x
"""


def test_fingerprint_is_blind_to_comments_blank_lines_and_moving() -> None:
    original = fingerprint_of(BASE)
    assert original.startswith("sha256:") and len(original) == len("sha256:") + 32
    commented = (
        "# a comment above\n\n\n"
        "def f(x):  # pragma: no cover\n"
        "    # why we branch\n"
        "    if x > 0:\n\n"
        "        return x  # positive\n"
        "    return -x\n"
    )
    assert fingerprint_of(commented) == original
    assert fingerprint_of("import os\n\n\n" + BASE) == original


def test_fingerprint_is_blind_to_unrelated_functions() -> None:
    assert fingerprint_of(BASE + "\n\ndef g():\n    return 2\n") == fingerprint_of(BASE)


@pytest.mark.parametrize(
    "edited",
    [
        BASE.replace("x > 0", "x >= 0"),
        BASE.replace("return -x", "return x"),
        BASE.replace("    return -x\n", "    return -x\n    print(x)\n"),
        BASE.replace("def f(x)", "def f(x, y=1)"),
        "@staticmethod\n" + BASE,
    ],
)
def test_fingerprint_changes_with_any_body_edit(edited: str) -> None:
    assert fingerprint_of(edited) != fingerprint_of(BASE)


def test_fingerprint_of_a_parent_sees_its_nested_function() -> None:
    source = "def outer():\n    def inner():\n        return 1\n    return inner\n"
    changed = source.replace("return 1", "return 2")
    assert fingerprint_of(source, "outer") != fingerprint_of(changed, "outer")
    assert fingerprint_of(source, "outer.inner") != fingerprint_of(changed, "outer.inner")


def test_fingerprint_node_is_deterministic() -> None:
    import ast

    node = ast.parse(BASE).body[0]
    assert fingerprint_node(node) == fingerprint_node(ast.parse(BASE).body[0])


# -- new exclusions ---------------------------------------------------------------------


def test_new_exclusions_compare_offsets_and_name_the_pattern() -> None:
    lines = ["def f(x):", "    if x:  # pragma: no cover", "        return 1", "    return 2"]
    facts = FunctionFacts(
        file="src/pkg/f.py",
        qualname="f",
        ordinal=1,
        start=1,
        first=1,
        last=4,
        fingerprint="x",
        statements=2,
        branches=0,
        excluded_lines=[2, 3],
    )
    # Line 3 (offset 2) was excluded at issue; line 2 (offset 1) is new.
    patterns = [r"#\s*pragma: no cover", "nothing"]
    assert new_exclusions(facts, {2}, source_lines=lines, patterns=patterns) == [
        (2, r"#\s*pragma: no cover")
    ]
    assert new_exclusions(facts, {1, 2}, source_lines=lines, patterns=[]) == []
    assert new_exclusions(facts, set(), source_lines=lines, patterns=[]) == [(2, ""), (3, "")]
