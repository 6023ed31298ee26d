import pytest

from toolz.dicttoolz import get_in


def test_get_in_nested() -> None:
    data = {"a": {"b": [10, 20]}}
    assert get_in(["a", "b", 1], data) == 20
    assert get_in([], data) == data


def test_get_in_default() -> None:
    assert get_in(["x"], {"a": 1}) is None
    assert get_in(["x"], {"a": 1}, default=7) == 7
    assert get_in([0, 5], [[1]], default="d") == "d"
    assert get_in(["a", "b"], {"a": 3}, default="t") == "t"


def test_get_in_no_default_raises() -> None:
    with pytest.raises(KeyError):
        get_in(["x"], {"a": 1}, no_default=True)
    with pytest.raises(IndexError):
        get_in([3], [1], no_default=True)
