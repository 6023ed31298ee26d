"""The mutation operators on the shapes they leave alone: constant tests, identities, odd raises."""

from __future__ import annotations

import ast
import textwrap

from pytest_quest.core.operators import candidates


def _candidates(source: str) -> list[tuple[str, int, str, str]]:
    source = textwrap.dedent(source).lstrip("\n")
    function = ast.parse(source).body[0]
    return [
        (c.operator, c.line, c.original, c.mutated)
        for c in candidates(function, source.splitlines())
    ]


def test_a_constant_test_is_never_forced() -> None:
    assert _candidates(
        """
        def f(x):
            if True:
                x = 1
            y = 1 if False else 2
            return x
        """
    ) == [
        ("body.return_none", 2, "if True:", "return None"),
        ("constant.number", 3, "x = 1", "x = 2"),
        ("constant.number", 4, "y = 1 if False else 2", "y = 2 if False else 2"),
        ("constant.number", 4, "y = 1 if False else 2", "y = 1 if False else 3"),
        ("return.changed", 5, "return x", "return pytest_quest_changed(x)"),
    ]


def test_a_modulo_of_a_number_or_an_f_string_is_arithmetic_but_of_a_string_is_formatting() -> None:
    assert _candidates(
        """
        def f(x):
            a = 10 % x
            b = f"{x}" % x
            c = "%s" % x
            return a, b, c
        """
    ) == [
        ("body.return_none", 2, "a = 10 % x", "return None"),
        ("arith.replace", 2, "a = 10 % x", "a = 10 // x"),
        ("constant.number", 2, "a = 10 % x", "a = 11 % x"),
        ("arith.replace", 3, 'b = f"{x}" % x', "b = f'{x}' // x"),
        ("constant.string", 4, 'c = "%s" % x', "c = 'XX%sXX' % x"),
        ("return.changed", 5, "return a, b, c", "return pytest_quest_changed((a, b, c))"),
    ]


def test_an_augmented_identity_or_an_unknown_operator_is_not_replaced() -> None:
    assert _candidates(
        """
        def f(x):
            x += 0
            x @= x
            x -= 3
            return x
        """
    ) == [
        ("body.return_none", 2, "x += 0", "return None"),
        ("constant.number", 2, "x += 0", "x += 1"),
        ("arith.replace", 4, "x -= 3", "x += 3"),
        ("constant.number", 4, "x -= 3", "x -= 4"),
        ("return.changed", 5, "return x", "return pytest_quest_changed(x)"),
    ]


def test_an_augmented_replacement_changes_the_code_as_shown() -> None:
    source = "def f(x):\n    x *= 3\n    return x\n"
    function = ast.parse(source).body[0]
    found = [c for c in candidates(function, source.splitlines()) if c.operator == "arith.replace"]
    assert [(c.line, c.original, c.mutated) for c in found] == [(2, "x *= 3", "x += 3")]
    found[0].apply(False)
    assert ast.unparse(function) == "def f(x):\n    x += 3\n    return x"


def test_a_complex_number_is_not_a_constant_to_change() -> None:
    assert _candidates(
        """
        def f(x):
            y = 2j
            z = "s"
            return y, z
        """
    ) == [
        ("body.return_none", 2, "y = 2j", "return None"),
        ("constant.string", 3, 'z = "s"', "z = 'XXsXX'"),
        ("return.changed", 4, "return y, z", "return pytest_quest_changed((y, z))"),
    ]


def test_a_raise_of_a_call_result_or_of_exception_itself_keeps_its_type() -> None:
    assert _candidates(
        """
        def f(x):
            if x:
                raise make()()
            if x > 1:
                raise Exception("boom")
            raise ValueError
        """
    ) == [
        ("body.skip", 2, "if x:", "return None"),
        ("condition.true", 2, "if x:", "if True:"),
        ("condition.true", 4, "if x > 1:", "if True:"),
        ("compare.boundary", 4, "if x > 1:", "if x >= 1:"),
        ("raise.message", 5, 'raise Exception("boom")', "raise Exception('XXboomXX')"),
        ("raise.type", 6, "raise ValueError", "raise Exception"),
    ]


def test_a_raise_of_base_exception_keeps_its_type_too() -> None:
    assert _candidates("def f():\n    raise BaseException\n") == [
        ("body.skip", 2, "raise BaseException", "return None"),
    ]


def test_a_raise_type_change_applies_to_a_bare_raise_and_to_a_raised_call() -> None:
    source = "def f(x):\n    if x:\n        raise ValueError\n    raise KeyError('k')\n"
    function = ast.parse(source).body[0]
    found = [c for c in candidates(function, source.splitlines()) if c.operator == "raise.type"]
    assert [(c.line, c.original, c.mutated) for c in found] == [
        (3, "raise ValueError", "raise Exception"),
        (4, "raise KeyError('k')", "raise Exception('k')"),
    ]
    for candidate in found:
        candidate.apply(False)
    assert ast.unparse(function) == (
        "def f(x):\n    if x:\n        raise Exception\n    raise Exception('k')"
    )


def test_a_not_is_dropped_unless_it_is_a_whole_test_and_a_minus_only_before_a_name() -> None:
    assert _candidates(
        """
        def f(x, y):
            a = not x
            if not y:
                return -x
            b = (not x) if y else -1
            return a, b
        """
    ) == [
        ("body.return_none", 2, "a = not x", "return None"),
        ("compare.negate", 2, "a = not x", "a = x"),
        ("condition.true", 3, "if not y:", "if True:"),
        ("return.changed", 4, "return -x", "return pytest_quest_changed(-x)"),
        ("arith.replace", 4, "return -x", "return x"),
        ("condition.true", 5, "not x if y else -1", "not x if True else -1"),
        ("condition.false", 5, "not x if y else -1", "not x if False else -1"),
        ("compare.negate", 5, "b = (not x) if y else -1", "b = (x) if y else -1"),
        ("constant.number", 5, "b = (not x) if y else -1", "b = (not x) if y else -2"),
        ("return.changed", 6, "return a, b", "return pytest_quest_changed((a, b))"),
    ]


def test_forcing_a_condition_replaces_its_test_in_the_tree() -> None:
    source = "def f(x):\n    if x > 1:\n        x = 0\n    else:\n        x = 2\n    return 1 if x else 2\n"
    function = ast.parse(source).body[0]
    forced = [
        c for c in candidates(function, source.splitlines()) if c.operator.startswith("condition.")
    ]
    assert [(c.operator, c.line, c.mutated) for c in forced] == [
        ("condition.true", 2, "if True:"),
        ("condition.false", 2, "if False:"),
        ("condition.true", 6, "1 if True else 2"),
        ("condition.false", 6, "1 if False else 2"),
    ]
    forced[0].apply(False)
    forced[3].apply(False)
    assert ast.unparse(function) == (
        "def f(x):\n    if True:\n        x = 0\n    else:\n        x = 2\n    return 1 if False else 2"
    )
