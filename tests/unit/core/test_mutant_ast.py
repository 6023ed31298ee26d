"""Helpers on Python syntax trees used to build mutants."""

from __future__ import annotations

import ast

import pytest

from pytest_quest.core.mutant_ast import call_name, replace_in, same_ast


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
