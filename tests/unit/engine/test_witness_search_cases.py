"""engine/witness_search.py's `_drain`: a generator drained up to the limit."""

from __future__ import annotations

from collections.abc import Iterator

from pytest_quest.engine.witness_search import MAX_ITEMS, _drain


def test_drain_takes_every_item_of_a_short_generator() -> None:
    assert _drain(iter([1, 2, 3])) == [1, 2, 3]
    assert _drain(iter([])) == []


def test_drain_stops_at_the_limit() -> None:
    pulled: list[int] = []

    def endless() -> Iterator[int]:
        n = 0
        while True:
            pulled.append(n)
            yield n
            n += 1

    found = _drain(endless())
    assert found == list(range(MAX_ITEMS))
    assert len(pulled) == MAX_ITEMS


def test_drain_of_exactly_the_limit() -> None:
    assert _drain(iter(range(MAX_ITEMS))) == list(range(MAX_ITEMS))
    assert _drain(iter(range(MAX_ITEMS + 1))) == list(range(MAX_ITEMS))
