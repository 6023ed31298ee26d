from collections import OrderedDict

from toolz.dicttoolz import keyfilter


def test_keyfilter_keeps_matching_keys() -> None:
    assert keyfilter(lambda k: k % 2 == 0, {1: "a", 2: "b", 3: "c", 4: "d"}) == {2: "b", 4: "d"}


def test_keyfilter_none_match() -> None:
    assert keyfilter(lambda k: k > 10, {1: 2}) == {}


def test_keyfilter_factory() -> None:
    out = keyfilter(lambda k: k != "x", {"x": 1, "y": 2}, factory=OrderedDict)
    assert type(out) is OrderedDict
    assert out == {"y": 2}
