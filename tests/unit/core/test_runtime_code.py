"""runtime_lines: the code at module or class level that no def's quest covers."""

from __future__ import annotations

import ast

import pytest

from pytest_quest.core.runtime_code import (
    BUILT,
    LAMBDA,
    PARTIAL,
    _called_name,
    runtime_lines,
    statement_lines,
)

SOURCE = """\
import functools, types
f = lambda x: x + 1
class C:
    g = lambda self: 2
    for n in ("a", "b"):
        exec(f"def {n}(self): return 1")
C.h = lambda self: 3
def k():
    return lambda y: y
p = functools.partial(k)
made = types.FunctionType(k.__code__, {})
source = compile("x = 1", "s", "exec")
twice = lambda x: (
    x * 2
)
"""


def test_lambdas_outside_defs_and_code_built_at_run_time_are_found_by_line() -> None:
    found = {line: kind for line, (kind, _) in runtime_lines(SOURCE).items()}
    assert found == {
        2: LAMBDA,
        4: LAMBDA,
        6: BUILT,
        7: LAMBDA,
        10: PARTIAL,
        11: BUILT,
        12: BUILT,
        13: LAMBDA,
        14: LAMBDA,
        15: LAMBDA,
    }


def test_a_lambda_inside_a_def_is_the_defs_and_a_source_that_does_not_parse_has_none() -> None:
    assert runtime_lines("def k():\n    return lambda y: y\n") == {}
    assert runtime_lines("def (:\n") == {}


def test_a_line_marked_first_keeps_its_kind_unless_it_was_a_partial() -> None:
    assert runtime_lines('f = lambda: exec("x")\n') == {
        1: (LAMBDA, "a lambda bound outside any def")
    }
    assert runtime_lines('x = exec("a") + eval("b")\n') == {
        1: (BUILT, "code built at run time (exec)")
    }
    assert runtime_lines('p = partial(exec("x"))\n') == {
        1: (BUILT, "code built at run time (exec)")
    }
    assert runtime_lines("p = partial(\n    k,\n)\n") == {
        1: (PARTIAL, "a callable bound at run time (partial)"),
        2: (PARTIAL, "a callable bound at run time (partial)"),
        3: (PARTIAL, "a callable bound at run time (partial)"),
    }


def test_a_call_of_neither_a_name_nor_an_attribute_has_no_name() -> None:
    call = ast.parse('table["exec"]("x")').body[0]
    assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
    assert _called_name(call.value) == ""
    assert runtime_lines('table["exec"]("x")\nmake()("y")\n') == {}
    attribute = ast.parse("types.FunctionType(c, {})").body[0]
    assert isinstance(attribute, ast.Expr) and isinstance(attribute.value, ast.Call)
    assert _called_name(attribute.value) == "FunctionType"


def test_statement_lines_are_where_statements_start_docstrings_too() -> None:
    source = '"""doc"""\nx = (\n    1\n)\nif x:\n    y = 2\n'
    assert statement_lines(source) == frozenset({1, 2, 5, 6})


@pytest.mark.parametrize("source", ["def (:\n", "x = 1\0\n"])
def test_a_source_that_does_not_parse_has_no_statement_lines(source: str) -> None:
    assert statement_lines(source) == frozenset()
