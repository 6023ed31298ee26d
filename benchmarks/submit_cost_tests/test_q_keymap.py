from collections import OrderedDict

from toolz.dicttoolz import keymap


def test_keymap_applies_to_keys() -> None:
    assert keymap(str.upper, {"a": 1, "b": 2}) == {"A": 1, "B": 2}


def test_keymap_factory() -> None:
    out = keymap(lambda k: k * 2, {1: "x", 3: "y"}, factory=OrderedDict)
    assert type(out) is OrderedDict
    assert list(out.items()) == [(2, "x"), (6, "y")]
