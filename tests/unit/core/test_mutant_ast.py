"""Helpers on Python syntax trees used to build mutants."""

from __future__ import annotations

import ast

import pytest

from pytest_quest.core.mutant_ast import (
    call_name,
    own_nodes,
    replace_in,
    same_ast,
    spliced,
    statement_lines,
    walk_scope,
)


def _call(source: str) -> ast.Call:
    node = ast.parse(source, mode="eval").body
    assert isinstance(node, ast.Call)
    return node


def test_a_call_is_named_by_its_attribute_or_its_name_else_empty() -> None:
    assert call_name(_call("obj.method(1)")) == "method"
    assert call_name(_call("a.b.c()")) == "c"
    assert call_name(_call("open(p)")) == "open"
    assert call_name(_call("make()()")) == ""
    assert call_name(_call("table['k'](1)")) == ""


def test_replace_in_puts_the_new_node_in_the_field_that_held_the_old() -> None:
    expr = ast.parse("a + b", mode="eval").body
    assert isinstance(expr, ast.BinOp)
    old = expr.right
    new = ast.Name(id="c", ctx=ast.Load())
    replace_in(expr, old, new)
    assert expr.right is new and ast.unparse(expr) == "a + c"


def test_replace_in_puts_the_new_node_in_the_list_item_that_held_the_old() -> None:
    call = _call("f(x, y, z)")
    old = call.args[1]
    new = ast.Constant(value=2)
    replace_in(call, old, new)
    assert call.args[1] is new and ast.unparse(call) == "f(x, 2, z)"


def test_replace_in_refuses_a_node_that_is_not_a_child() -> None:
    call = _call("f(x)")
    with pytest.raises(ValueError) as raised:
        replace_in(call, ast.Name(id="x", ctx=ast.Load()), ast.Constant(value=1))
    assert str(raised.value) == "node not found in its parent"
    assert ast.unparse(call) == "f(x)"


def test_same_ast_compares_nodes_and_statement_lists_by_structure() -> None:
    one = ast.parse("x = 1\ny = 2").body
    same = ast.parse("x = 1\n\n\ny = 2").body
    assert same_ast(one, same) is True
    assert same_ast(one, ast.parse("x = 1\ny = 3").body) is False
    assert same_ast(one, one[:1]) is False
    assert same_ast(one[0], same[0]) is True
    assert same_ast(one[0], one[1]) is False


def test_a_list_is_never_the_same_as_a_single_node() -> None:
    body = ast.parse("x = 1").body
    assert same_ast(body, body[0]) is False
    assert same_ast(body[0], body) is False


NESTED = '''\
def f(xs):
    """doc"""
    y = [x for x in xs if x]
    def inner():
        return 1
    class K:
        pass
    if xs:
        g = lambda: 2
        return y
'''


def _function(source: str) -> ast.FunctionDef:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def _kinds(nodes: object) -> list[str]:
    return [type(node).__name__ for node in nodes]  # type: ignore[attr-defined]


def test_walk_scope_does_not_enter_nested_scopes_and_comprehensions_when_told() -> None:
    statement = _function(NESTED).body[1]  # y = [x for x in xs if x]
    assert _kinds(walk_scope(statement, skip_comprehensions=True)) == ["Assign", "Name", "Store"]
    assert _kinds(walk_scope(statement, skip_comprehensions=False)) == [
        "Assign",
        "Name",
        "Store",
        "ListComp",
        "Name",
        "Load",
        "comprehension",
        "Name",
        "Store",
        "Name",
        "Load",
        "Name",
        "Load",
    ]
    lam = _function(NESTED).body[4]  # if xs: g = lambda: 2; return y
    assert _kinds(walk_scope(lam, skip_comprehensions=False)) == [
        "If",
        "Name",
        "Load",
        "Assign",
        "Name",
        "Store",
        "Return",
        "Name",
        "Load",
    ]


def test_own_nodes_are_the_functions_own_body_with_parents_in_source_order() -> None:
    function = _function(NESTED)
    pairs = list(own_nodes(function))
    assert [(type(node).__name__, type(parent).__name__) for node, parent in pairs] == [
        ("Expr", "FunctionDef"),
        ("Constant", "Expr"),
        ("Assign", "FunctionDef"),
        ("Name", "Assign"),
        ("Store", "Name"),
        ("If", "FunctionDef"),
        ("Name", "If"),
        ("Load", "Name"),
        ("Assign", "If"),
        ("Name", "Assign"),
        ("Store", "Name"),
        ("Return", "If"),
        ("Name", "Return"),
        ("Load", "Name"),
    ]
    assert pairs[0][1] is function
    assert pairs[1][1] is pairs[0][0]


def test_spliced_replaces_the_node_on_its_line() -> None:
    lines = ["def f(a):", "    return a + 1  # one"]
    node = _function("\n".join(lines)).body[0]
    assert isinstance(node, ast.Return) and node.value is not None
    assert spliced(lines, node.value, "a - 1") == ("return a + 1  # one", "return a - 1  # one")


def test_spliced_counts_columns_in_utf8_bytes() -> None:
    lines = ["x = 'é' + y"]
    node = ast.parse(lines[0]).body[0]
    assert isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp)
    assert spliced(lines, node.value.right, "z") == ("x = 'é' + y", "x = 'é' + z")


def test_spliced_shows_the_node_alone_when_it_spans_lines_or_has_no_place() -> None:
    source = "x = f(\n    1)"
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.Assign)
    assert spliced(source.split("\n"), node.value, "None") == ("f(1)", "None")
    one = ast.parse("x = a").body[0]
    assert isinstance(one, ast.Assign)
    assert spliced([], one.value, "b") == ("a", "b")  # the line is not in `lines`
    no_end = ast.Name(id="q", lineno=1, col_offset=0, end_lineno=1)  # no end column
    assert spliced(["x = a"], no_end, "r") == ("q", "r")
    zero = ast.parse("x = a").body[0]
    assert isinstance(zero, ast.Assign)
    zero.value.lineno = zero.value.end_lineno = 0
    assert spliced(["x = a"], zero.value, "b") == ("a", "b")


STATEMENTS = """\
def f(xs):
    total = (1 +
             2)
    for x in xs:
        if x:
            total += x
    with open(p) as h:
        pass
    def inner():
        return 0
    return total
"""


def test_statement_lines_of_a_change_on_each_kind_of_line() -> None:
    function = _function(STATEMENTS)
    assert statement_lines(function, 2) == range(2, 4)  # a simple statement, all of it
    assert statement_lines(function, 3) == range(2, 4)
    assert statement_lines(function, 4) == range(4, 5)  # a for: its header
    assert statement_lines(function, 5) == range(5, 6)  # the innermost: the if
    assert statement_lines(function, 6) == range(6, 7)
    assert statement_lines(function, 7) == range(7, 8)
    assert statement_lines(function, 9) == range(0)  # a nested scope is not its own code
    assert statement_lines(function, 10) == range(0)
    assert statement_lines(function, 11) == range(11, 12)
    assert statement_lines(function, 1) == range(0)
    assert statement_lines(function, 40) == range(0)


def test_statement_lines_of_a_header_on_one_line_with_its_body() -> None:
    function = _function("def f(x):\n    if x: return 1\n    return 2\n")
    assert statement_lines(function, 2) == range(2, 3)


def test_statement_lines_keeps_the_statement_starting_last_whatever_the_walk_order() -> None:
    # Two statements hold line 2; the one walked second starts earlier (a tree
    # built by hand, as a code generator may make): the later start still wins.
    function = _function("def f():\n    a = 1\n    b = 2\n")
    second = function.body[1]
    second.lineno, second.end_lineno = 1, 3
    assert statement_lines(function, 2) == range(2, 3)
    assert statement_lines(function, 3) == range(1, 4)
