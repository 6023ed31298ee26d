"""A key twice in one JSON object is refused, naming the key (engine/strict_json.py)."""

from __future__ import annotations

import pytest

from pytest_quest.engine.strict_json import DuplicateKey, _reject_duplicates, parse


def test_a_duplicate_key_error_carries_the_key() -> None:
    error = DuplicateKey("tries")
    assert error.key == "tries"
    assert error.args == ("tries",)
    assert str(error) == "tries"
    assert isinstance(error, ValueError)


def test_reject_duplicates_keeps_distinct_keys_in_order() -> None:
    assert list(_reject_duplicates([("b", 1), ("a", 2)]).items()) == [("b", 1), ("a", 2)]
    assert _reject_duplicates([]) == {}


def test_reject_duplicates_names_the_first_key_seen_twice() -> None:
    with pytest.raises(DuplicateKey) as caught:
        _reject_duplicates([("a", 1), ("b", 2), ("c", 3), ("b", 4), ("a", 5)])
    assert caught.value.key == "b"


def test_parse_refuses_a_key_twice_in_a_nested_object() -> None:
    with pytest.raises(DuplicateKey) as caught:
        parse('{"quests": {"q": {"tries": 1, "tries": 2}}}')
    assert caught.value.key == "tries"
    assert parse('{"a": {"b": 1}, "b": {"a": 2}}') == {"a": {"b": 1}, "b": {"a": 2}}
