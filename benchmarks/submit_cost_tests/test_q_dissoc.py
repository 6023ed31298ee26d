from collections import OrderedDict

import pytest

from toolz.dicttoolz import dissoc


def test_dissoc_few_keys() -> None:
    d = {"a": 1, "b": 2, "c": 3, "d": 4}
    assert dissoc(d, "a") == {"b": 2, "c": 3, "d": 4}
    assert dissoc(d, "zz") == d
    assert d == {"a": 1, "b": 2, "c": 3, "d": 4}


def test_dissoc_many_keys() -> None:
    d = {"a": 1, "b": 2, "c": 3}
    assert dissoc(d, "a", "b") == {"c": 3}
    assert dissoc(d, "a", "b", "c", "q") == {}


def test_dissoc_boundary() -> None:
    # 3 keys of 5: 3 < 3.0 is false, the second way
    d = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5}
    assert dissoc(d, 1, 2, 3) == {4: 4, 5: 5}
    # 2 keys of 5: 2 < 3.0, the first way
    assert dissoc(d, 1, 2) == {3: 3, 4: 4, 5: 5}


def test_dissoc_factory_and_bad_kwarg() -> None:
    out = dissoc({"a": 1, "b": 2, "c": 3, "d": 4}, "a", factory=OrderedDict)
    assert type(out) is OrderedDict
    with pytest.raises(TypeError, match="dissoc\\(\\) got an unexpected keyword argument 'bad'"):
        dissoc({"a": 1}, "a", bad=1)
