"""What test code names: literal text, `__import__` with a fromlist, assignment pairs."""

from __future__ import annotations

import ast

from pytest_quest.core.tamper_names import _has_fromlist, assigned_pairs, literal_text


def _expr(source: str) -> ast.expr:
    return ast.parse(source, mode="eval").body


def _call(source: str) -> ast.Call:
    node = _expr(source)
    assert isinstance(node, ast.Call)
    return node


def test_literal_text_reads_strings_bytes_and_their_sums() -> None:
    assert literal_text(_expr('"quest.json"')) == "quest.json"
    assert literal_text(_expr(r'b"\xffq"')) == "\u00ffq"
    assert literal_text(_expr('"quest" + ".json"')) == "quest.json"
    assert literal_text(_expr('"a" + b"c" + "d"')) == "acd"


def test_literal_text_is_none_for_anything_else() -> None:
    assert literal_text(None) is None
    assert literal_text(_expr("1")) is None
    assert literal_text(_expr("name")) is None
    assert literal_text(_expr('"a" + name')) is None
    assert literal_text(_expr('name + "a"')) is None
    assert literal_text(_expr('"a" * 2')) is None
    assert literal_text(_expr('"a" - "b"')) is None


def test_an_import_call_has_a_fromlist_as_fourth_argument_or_keyword() -> None:
    assert _has_fromlist(_call('__import__("m", g, l, ["x"])')) is True
    assert _has_fromlist(_call('__import__("m", g, l, ["x"], 0)')) is True
    assert _has_fromlist(_call('__import__("m", fromlist=["x"])')) is True
    assert _has_fromlist(_call('__import__("m", g, l)')) is False
    assert _has_fromlist(_call('__import__("m", level=0)')) is False


def _pairs(node: ast.AST) -> list[tuple[str, str]]:
    return [(ast.unparse(target), ast.unparse(value)) for target, value in assigned_pairs(node)]


def test_assigned_pairs_of_every_kind_of_binding() -> None:
    module = ast.parse(
        "a = b = 1\nx: int = 2\ny: int\nz += 3\nwith f() as g, h():\n    pass\n(w := 4)\nfor i in r:\n    pass\n"
    )
    assign, annotated, declared, augmented, with_, walrus, loop = module.body
    assert _pairs(assign) == [("a", "1"), ("b", "1")]
    assert _pairs(annotated) == [("x", "2")]
    assert _pairs(declared) == []
    assert _pairs(augmented) == [("z", "3")]
    assert isinstance(with_, ast.With)
    assert _pairs(with_.items[0]) == [("g", "f()")]
    assert _pairs(with_.items[1]) == []
    assert _pairs(with_) == []
    assert isinstance(walrus, ast.Expr)
    assert _pairs(walrus.value) == [("w", "4")]
    assert _pairs(loop) == []
