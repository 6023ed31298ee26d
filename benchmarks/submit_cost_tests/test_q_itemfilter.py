from collections import OrderedDict

from toolz.dicttoolz import itemfilter


def test_itemfilter_uses_key_and_value() -> None:
    d = {1: 2, 2: 3, 3: 4, 4: 5}
    assert itemfilter(lambda kv: kv[0] % 2 == 0 and kv[1] < 4, d) == {2: 3}


def test_itemfilter_factory() -> None:
    out = itemfilter(lambda kv: kv[1] == "b", {"a": "a", "b": "b"}, factory=OrderedDict)
    assert type(out) is OrderedDict
    assert out == {"b": "b"}
