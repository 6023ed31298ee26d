from collections import OrderedDict

from toolz.dicttoolz import valmap


def test_valmap_applies_to_values() -> None:
    assert valmap(lambda v: v * 10, {"a": 1, "b": 2}) == {"a": 10, "b": 20}


def test_valmap_keeps_keys_and_factory() -> None:
    out = valmap(str, {2: 3, 1: 4}, factory=OrderedDict)
    assert type(out) is OrderedDict
    assert list(out.items()) == [(2, "3"), (1, "4")]


def test_valmap_leaves_input_alone() -> None:
    d = {"x": 1}
    assert valmap(lambda v: v + 1, d) == {"x": 2}
    assert d == {"x": 1}
