"""engine/witness_strategies.py: the strategy built for each kind of argument, seen through a
recording stand-in for Hypothesis's ``strategies`` module."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_quest.engine.witness_strategies import _elements, _like, calls_strategy


class S:
    """A strategy as made: the maker's name, its arguments; `|` and `filter` recorded too."""

    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.name, self.args, self.kwargs = name, args, kwargs

    def __or__(self, other: S) -> S:
        return S("|", self, other)

    def filter(self, keep: Any) -> S:
        return S("filter", self, keep)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, S) and (self.name, self.args, self.kwargs) == (
            other.name,
            other.args,
            other.kwargs,
        )

    def __repr__(self) -> str:
        return f"S({self.name!r}, {self.args!r}, {self.kwargs!r})"


class St:
    """The stand-in for ``hypothesis.strategies``: every maker returns the `S` it was asked for."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: S(name, *args, **kwargs)


class Unsampled(St):
    def sampled_from(self, items: Any) -> S:
        raise TypeError("cannot sample these")


st = St()


def ints(near: int) -> S:
    return S("|", S("integers", -near, near), S("integers"))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, S("booleans")),
        (False, S("booleans")),
        (5, ints(10)),
        (-3, ints(8)),
        (0, ints(8)),
        (999_999, ints(1_999_998)),
        (10**6, ints(8)),
        (-(10**6), ints(8)),
        (1.5, S("floats", allow_nan=False)),
        ("abc", S("text", max_size=8)),
        ("abcdefghij", S("text", max_size=20)),
        (b"ab", S("binary", max_size=8)),
        (b"0123456789", S("binary", max_size=20)),
        (None, S("none")),
    ],
)
def test_like_of_a_plain_value(value: object, expected: S) -> None:
    assert _like(value, st, 3) == expected


def test_like_of_a_slice() -> None:
    bound = S("|", S("none"), S("integers", -12, 12))
    step = S("|", S("none"), S("filter", S("integers", -3, 3), bool))
    assert _like(slice(1, 5, 2), st, 3) == S("builds", slice, bound, bound, step)


def test_like_of_another_kind_is_none() -> None:
    assert _like(object(), st, 3) is None
    assert _like(complex(1, 2), st, 3) is None


def test_like_of_a_container_at_depth_zero_is_none() -> None:
    assert _like([1], st, 0) is None
    assert _like({"a": 1}, st, 0) is None
    assert _like(7, st, 0) == ints(14)


def test_like_of_a_tuple() -> None:
    thing = object()
    assert _like((1, "a", thing), st, 3) == S(
        "tuples", ints(8), S("text", max_size=8), S("just", thing)
    )
    assert _like((), st, 3) == S("just", ())


def test_like_of_lists_and_sets() -> None:
    element = S("one_of", [ints(8), S("sampled_from", [1, 2])])
    assert _like([1, 2], st, 3) == S("lists", element, max_size=4)
    assert _like({1, 2}, st, 3) == S("sets", element, max_size=4)
    assert _like(frozenset({1, 2}), st, 3) == S("frozensets", element, max_size=4)
    assert _like([1, 2, 3, 4, 5], st, 3) == S(
        "lists", S("one_of", [ints(8), S("sampled_from", [1, 2, 3, 4, 5])]), max_size=7
    )


def test_like_of_an_empty_list_is_none() -> None:
    assert _like([], st, 3) is None
    assert _like(set(), st, 3) is None


def test_like_of_a_dict() -> None:
    assert _like({"a": 1}, st, 3) == S(
        "dictionaries",
        S("one_of", [S("text", max_size=8), S("sampled_from", ["a"])]),
        S("one_of", [ints(8), S("sampled_from", [1])]),
        max_size=4,
    )
    assert _like({}, st, 3) is None


def test_like_of_nested_lists_stops_at_depth() -> None:
    assert _like([[1]], st, 1) == S("lists", S("one_of", [S("sampled_from", [[1]])]), max_size=4)


def test_elements_of_nothing_is_none() -> None:
    assert _elements([], st, 3) is None


def test_elements_one_strategy_per_kind() -> None:
    assert _elements([1, 2, "x", True], st, 3) == S(
        "one_of",
        [ints(8), S("text", max_size=8), S("booleans"), S("sampled_from", [1, 2, "x", True])],
    )


def test_elements_that_cannot_be_sampled() -> None:
    assert _elements([1, 2], Unsampled(), 3) == S("one_of", [ints(8)])


def test_calls_strategy_of_calls_with_other_names() -> None:
    kept = [{"a": 1}, {"b": 2}]
    assert calls_strategy(kept, st) == S("sampled_from", kept)


def test_calls_strategy_varies_one_argument_or_all() -> None:
    me = object()
    kept: list[dict[str, Any]] = [{"self": me, "n": 1}, {"self": me, "n": 2}]
    n = S("one_of", [S("sampled_from", [1, 2]), ints(8)])
    selves = S("one_of", [S("sampled_from", [me, me])])
    assert calls_strategy(kept, st) == S(
        "one_of",
        S("sampled_from", kept),
        S("fixed_dictionaries", {"self": S("just", me), "n": n}),
        S("fixed_dictionaries", {"self": S("just", me), "n": n}),
        S("fixed_dictionaries", {"self": selves, "n": n}),
    )


def test_calls_strategy_varies_each_kind_and_at_most_eight_calls() -> None:
    kept: list[dict[str, Any]] = [{"x": "a" if k % 2 else k} for k in range(10)]
    values = [call["x"] for call in kept]
    x = S("one_of", [S("sampled_from", values), ints(8), S("text", max_size=8)])
    made = calls_strategy(kept, st)
    assert made.name == "one_of"
    assert made.args == (
        S("sampled_from", kept),
        *[S("fixed_dictionaries", {"x": x})] * 8,
        S("fixed_dictionaries", {"x": x}),
    )


def test_calls_strategy_keeps_cls_as_recorded() -> None:
    kept: list[dict[str, Any]] = [{"cls": int, "v": None}]
    v = S("one_of", [S("sampled_from", [None]), S("none")])
    cls = S("one_of", [S("sampled_from", [int])])
    assert calls_strategy(kept, st) == S(
        "one_of",
        S("sampled_from", kept),
        S("fixed_dictionaries", {"cls": S("just", int), "v": v}),
        S("fixed_dictionaries", {"cls": cls, "v": v}),
    )
