from collections import OrderedDict

from toolz.dicttoolz import itemmap


def test_itemmap_swaps() -> None:
    assert itemmap(lambda kv: (kv[1], kv[0]), {"a": 1, "b": 2}) == {1: "a", 2: "b"}


def test_itemmap_factory() -> None:
    out = itemmap(lambda kv: (kv[0] + 1, kv[1] * 3), {1: 2}, factory=OrderedDict)
    assert type(out) is OrderedDict
    assert out == OrderedDict([(2, 6)])
