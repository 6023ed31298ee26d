"""Lines of the ratchet file's write journal: an entry round-trips, anything else is None."""

from __future__ import annotations

import json

import pytest

from pytest_quest.core.journal import Entry, parse


def test_an_entry_round_trips_through_its_line() -> None:
    entry = Entry(read="sha:a", wrote="sha:b", inode=12, pid=345, time=1.5)
    assert parse(entry.line()) == entry


def test_a_whole_number_time_is_read_as_a_float() -> None:
    entry = parse('{"read": "a", "wrote": "b", "inode": 1, "pid": 2, "time": 3}')
    assert entry == Entry(read="a", wrote="b", inode=1, pid=2, time=3.0)
    assert entry is not None and type(entry.time) is float


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "[1, 2]",
        '{"read": "a", "wrote": "b", "inode": 1, "pid": 2}',
        '{"read": "a", "wrote": "b", "inode": 1, "pid": 2, "time": "soon"}',
        '{"read": "a", "wrote": "b", "inode": 1, "pid": 2, "time": null}',
    ],
)
def test_a_line_that_is_not_an_entry_is_none(line: str) -> None:
    assert parse(line) is None


@pytest.mark.parametrize(
    "fields",
    [
        {"read": 1},
        {"wrote": None},
        {"inode": "12"},
        {"inode": True},
        {"pid": 2.0},
        {"pid": False},
    ],
)
def test_an_entry_with_a_field_of_the_wrong_type_is_none(fields: dict[str, object]) -> None:
    data = {"read": "a", "wrote": "b", "inode": 1, "pid": 2, "time": 3.0, **fields}
    assert parse(json.dumps(data)) is None
