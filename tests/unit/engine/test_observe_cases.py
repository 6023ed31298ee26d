"""engine/observe.py's small parts: parameters counted, objects held from a call, their state
after it, the offset of a generator's first yield, and how calls ended."""

from __future__ import annotations

import sys
from typing import Any

from pytest_quest.engine.observe import (
    Call,
    _after,
    _endings,
    _first_yield,
    _held,
    _parameter_count,
    state,
)


def plain(a: int, b: int = 2) -> int:
    return a + b


def starred(a: int, *args: int, key: int = 0, **kwargs: int) -> int:
    return a


def nothing() -> None:
    return None


def gen(n: int) -> Any:
    x = n + 1
    yield x
    yield x + 1


def test_parameter_count() -> None:
    assert _parameter_count(plain.__code__) == 2
    assert _parameter_count(starred.__code__) == 4
    assert _parameter_count(nothing.__code__) == 0


def test_parameter_count_of_only_keywords() -> None:
    def only(**options: int) -> None:
        local = 1
        del local

    assert _parameter_count(only.__code__) == 1


def holder(items: list[int], n: int, *rest: Any, text: str = "x", **more: Any) -> Any:
    found = _held(sys._getframe())  # as the call starts: its parameters only
    return found


def plain_holder(a: int, b: str = "x") -> Any:
    return _held(sys._getframe())


def test_held_keeps_the_mutable_objects_given() -> None:
    given = [1]
    extra = {"k": [2]}
    held = holder(given, 3, [9], text="t", opt=extra)
    assert [name for name, _ in held] == ["items", "rest", "more"]
    assert held[0][1] is given
    assert held[1][1] == ([9],)
    assert held[2][1] == {"opt": extra}


def test_held_of_immutable_arguments_only() -> None:
    assert plain_holder(1, b="y") == []


def test_after_is_the_state_of_each_object_held() -> None:
    items = [1, 2]
    assert _after([("items", items), ("d", {"a": 1})]) == (
        ("items", state(items)),
        ("d", state({"a": 1})),
    )
    assert _after([]) == ()


def test_first_yield_of_a_generator() -> None:
    import dis

    offsets = [i.offset for i in dis.get_instructions(gen.__code__) if i.opname == "YIELD_VALUE"]
    assert len(offsets) == 2
    assert _first_yield(gen.__code__) == offsets[0]


def test_first_yield_of_a_function_without_one() -> None:
    assert _first_yield(plain.__code__) == sys.maxsize


def test_endings_of_calls() -> None:
    calls = [
        Call(args="x=1", ended="returns", value="2", after=(("x", "1"),)),
        Call(args="", ended="raises", value="ValueError('no')"),
    ]
    assert _endings(calls) == [("x=1", "returns", "2"), ("", "raises", "ValueError('no')")]
    assert _endings([]) == []
