"""engine/clean_child.py's small parts: a held search record, operators, code compared, the
parameters a call names, the seeds that fit, and the calls made of the search's own values."""

from __future__ import annotations

from typing import Any

from pytest_quest.engine.clean_child import (
    OWN_VALUES,
    _fitting,
    _operators,
    _own_calls,
    _parameters,
    _problem,
    _same,
)


def plain(a: int, b: int = 2) -> int:
    return a + b


def starred(a: int, *args: int, key: int = 0, **kwargs: int) -> int:
    return a


def kw_only(*, key: int) -> int:
    return key


def nothing() -> None:
    return None


class Box:
    def method(self, x: int) -> int:
        return x

    @classmethod
    def make(cls, **options: int) -> Box:
        return cls()


def test_problem_is_a_search_that_called_nothing() -> None:
    assert _problem("it raised") == {"calls": 0, "escapes": "", "problem": "it raised"}


def test_operators() -> None:
    assert _operators(None) is None
    assert _operators(["a", 1]) == ("a", "1")
    assert _operators(()) == ()


def test_same_code() -> None:
    assert _same(plain.__code__, plain.__code__) is True
    assert _same(plain.__code__, compile("1", "x", "eval")) is False
    assert _same(kw_only.__code__, nothing.__code__) is False


def test_parameters_in_order_with_stars() -> None:
    assert _parameters(plain.__code__) == ["a", "b"]
    assert _parameters(starred.__code__) == ["a", "key", "args", "kwargs"]
    assert _parameters(kw_only.__code__) == ["key"]
    assert _parameters(nothing.__code__) == []
    assert _parameters(Box.method.__code__) == ["self", "x"]
    assert _parameters(Box.make.__code__) == ["cls", "options"]


def test_parameters_with_only_varargs() -> None:
    def only(*rest: int) -> None:
        local = 1
        del local

    assert _parameters(only.__code__) == ["rest"]


def test_fitting_keeps_calls_naming_the_parameters_in_order() -> None:
    calls: list[dict[str, Any]] = [
        {"a": 1, "b": 2},
        {"b": 2, "a": 1},
        {"a": 1},
        {"a": 3, "b": 4},
        {"a": 1, "b": 2, "c": 3},
    ]
    assert _fitting(calls, plain.__code__) == [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    assert _fitting([{}], nothing.__code__) == [{}]
    assert _fitting([], plain.__code__) == []


def test_own_calls_of_a_function_without_parameters() -> None:
    assert _own_calls(nothing.__code__, []) == [{}]


def test_own_calls_give_each_own_value_to_every_parameter() -> None:
    assert _own_calls(plain.__code__, []) == [{"a": value, "b": value} for value in OWN_VALUES]


def test_own_calls_leave_stars_empty() -> None:
    assert _own_calls(starred.__code__, []) == [
        {"a": value, "key": value, "args": (), "kwargs": {}} for value in OWN_VALUES
    ]


def test_own_calls_of_a_method_take_the_object_of_a_seed() -> None:
    box = Box()
    seeds: list[dict[str, Any]] = [{"self": box, "x": 5}, {"self": Box(), "x": 6}]
    found = _own_calls(Box.method.__code__, seeds)
    assert found == [{"self": box, "x": value} for value in OWN_VALUES]
    assert all(call["self"] is box for call in found)


def test_own_calls_of_a_method_without_a_seed() -> None:
    assert _own_calls(Box.method.__code__, []) == []
    assert _own_calls(Box.make.__code__, []) == []


def test_own_calls_of_a_classmethod_with_keywords() -> None:
    found = _own_calls(Box.make.__code__, [{"cls": Box, "options": {}}])
    assert found == [{"cls": Box, "options": {}} for _ in OWN_VALUES]


def test_own_calls_of_a_function_whose_first_parameter_is_named_self_elsewhere() -> None:
    def odd(x: int, self: int) -> int:
        return x

    assert _own_calls(odd.__code__, []) == [{"x": v, "self": v} for v in OWN_VALUES]
