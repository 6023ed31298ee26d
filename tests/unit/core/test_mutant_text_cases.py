"""A changed function put back in its source: the trees that cannot be written or read back."""

from __future__ import annotations

import ast

from pytest_quest.core.mutant_text import _same_function, function_replaced

SOURCE = "x = 1\n\ndef f(a):\n    return a\n\ny = 2\n"


def test_the_prelude_goes_on_the_blank_line_above_the_function() -> None:
    text = function_replaced(SOURCE, 3, ast.parse(SOURCE), "P = 1")
    assert text == "x = 1\nP = 1\ndef f(a):\n    return a\n\ny = 2\n"


def test_without_a_prelude_the_function_is_written_back_in_place() -> None:
    assert function_replaced(SOURCE, 3, ast.parse(SOURCE)) == SOURCE


def test_a_prelude_that_changes_the_function_gives_no_text() -> None:
    assert function_replaced(SOURCE, 3, ast.parse(SOURCE), "@staticmethod") is None


def test_a_tree_that_cannot_be_written_gives_no_text() -> None:
    tree = ast.parse(SOURCE)
    function = tree.body[1]
    assert isinstance(function, ast.FunctionDef)
    function.body[0] = ast.Return(value=ast.JoinedStr(values=[ast.Name(id="a", ctx=ast.Load())]))
    assert function_replaced(SOURCE, 3, tree) is None


def test_a_tree_written_as_text_that_does_not_parse_gives_no_text() -> None:
    tree = ast.parse(SOURCE)
    function = tree.body[1]
    assert isinstance(function, ast.FunctionDef)
    function.body[0] = ast.Return(value=ast.Constant(value=object()))  # type: ignore[arg-type]
    assert function_replaced(SOURCE, 3, tree) is None


def test_the_same_function_is_told_by_its_tree_on_its_line() -> None:
    node = ast.parse(SOURCE).body[1]
    assert _same_function(SOURCE, 3, node) is True
    assert _same_function("def f(a):\n    return a\n", 1, node) is True
    assert _same_function(SOURCE, 1, node) is False
    assert _same_function("def f(b):\n    return b\n", 1, node) is False
    assert _same_function("def f(:\n", 1, node) is False
    assert _same_function("x = '\0'\n", 1, node) is False
