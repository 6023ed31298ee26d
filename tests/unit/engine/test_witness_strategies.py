"""The witness search's strategies are built without a warning (a project may make warnings errors)."""

from __future__ import annotations

import warnings

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_quest.engine.witness_strategies import calls_strategy


def test_a_tuple_argument_builds_without_a_warning() -> None:
    # A tuple of ints: each item's strategy is a union; its truth value warns.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        strategy = calls_strategy([{"keys": (1, 2), "d": {"a": 1}}], st)
    assert strategy is not None


def test_a_tuple_item_without_a_strategy_is_kept_as_given() -> None:
    marker = object()
    strategy = calls_strategy([{"pair": (marker, 3)}], st)
    drawn: dict[str, object] = {}

    @settings(max_examples=20, database=None)
    @given(strategy)
    def draw(call: dict[str, object]) -> None:
        drawn["call"] = call
        assert call["pair"][0] is marker  # type: ignore[index]

    draw()
    assert "call" in drawn
