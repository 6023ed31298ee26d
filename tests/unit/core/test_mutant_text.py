"""core/mutant_text.py: a mutant as the module's text, behaving as the tree the swap compiles."""

from __future__ import annotations

import ast
from typing import Any

from pytest_quest.core.mutant_text import function_replaced
from pytest_quest.core.mutants import find_function, mutated_tree, plan_mutants, probe_tree

SOURCE = '''\
import functools  # a comment the text keeps


class Shapes:
    """Shapes."""

    @functools.lru_cache(maxsize=None)
    def area(self, side,
             height=2):
        """The area.

            Indented docstring lines stay as they are.
        """
        total = side * height  # a comment the text loses

        return total


def later():
    return 7
'''


def _run(text: str) -> dict[str, Any]:
    space: dict[str, Any] = {"pytest_quest_reached": lambda value=None: value}
    exec(compile(text, "calc.py", "exec"), space)
    return space


def test_the_function_lines_are_replaced_and_every_other_line_stays() -> None:
    start = 8  # the def's line (its decorator's is the function's first)
    assert find_function(ast.parse(SOURCE), start) is not None
    for mutant in plan_mutants(SOURCE, start):
        tree = mutated_tree(SOURCE, start, mutant.index)
        text = function_replaced(SOURCE, start, tree, "PRELUDE = 1")
        assert text is not None, mutant
        old, new = SOURCE.splitlines(), text.splitlines()
        assert len(new) == len(old)  # the function's own lines make room
        assert new[:5] == old[:5] and new[6] == old[6] and new[-3:] == old[-3:]
        assert new[5] == "    PRELUDE = 1"  # on the blank line above: the function keeps its lines
        # It behaves as the tree compiled: the same answer, the same docstring.
        space = _run(text)
        expected = _run(ast.unparse(tree))
        shapes, other = space["Shapes"](), expected["Shapes"]()
        try:
            want: Any = other.area(3)
        except Exception as exc:  # a mutant may raise: so must the text
            want = type(exc)
        try:
            got: Any = shapes.area(3)
        except Exception as exc:
            got = type(exc)
        assert got == want, mutant
        assert space["Shapes"].area.__doc__ == expected["Shapes"].area.__doc__
        assert space["later"].__code__.co_firstlineno == 19
        assert space["Shapes"].area.__wrapped__.__code__.co_firstlineno == 7


def test_the_probe_text_has_the_reach_mark() -> None:
    text = function_replaced(SOURCE, 8, probe_tree(SOURCE, 8))
    assert text is not None
    reached: list[object] = []
    space = _run(text)
    space["pytest_quest_reached"] = reached.append
    exec(compile(text, "calc.py", "exec"), space)
    assert space["Shapes"]().area(3) == 6
    assert reached == [None]


def test_more_lines_take_the_blank_lines_after_the_function_or_move_what_follows() -> None:
    # The probe of a one-line function: the prelude, the def, the mark, the body.
    source = "def one(x): return -x\n\n\n\ndef two():\n    return 2\n"
    text = function_replaced(source, 1, probe_tree(source, 1), "PRELUDE = 1")
    assert text is not None
    assert text.splitlines()[4:] == ["def two():", "    return 2"]  # in place
    crowded = "def one(x): return -x\ndef two():\n    return 2\n"
    text = function_replaced(crowded, 1, probe_tree(crowded, 1), "PRELUDE = 1")
    assert text is not None and text.splitlines()[4] == "def two():"  # moved: no room


def test_no_text_where_no_function_starts_on_the_line() -> None:
    assert function_replaced(SOURCE, 2, ast.parse(SOURCE)) is None


def test_the_text_of_a_mutant_is_made_from_the_function_alone_as_the_tree_makes_it() -> None:
    from pytest_quest.core.mutant_text import mutant_text

    for index in [None, *(m.index for m in plan_mutants(SOURCE, 8))]:
        tree = probe_tree(SOURCE, 8) if index is None else mutated_tree(SOURCE, 8, index)
        assert mutant_text(SOURCE, 8, index, "P = 1") == function_replaced(SOURCE, 8, tree, "P = 1")
    assert mutant_text(SOURCE, 8, 10_000) is None
    assert mutant_text(SOURCE, 2, None) is None
