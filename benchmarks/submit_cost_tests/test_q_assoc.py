from collections import OrderedDict

from toolz.dicttoolz import assoc


def test_assoc_adds_and_replaces() -> None:
    d = {"x": 1}
    assert assoc(d, "y", 3) == {"x": 1, "y": 3}
    assert assoc(d, "x", 2) == {"x": 2}
    assert d == {"x": 1}


def test_assoc_factory() -> None:
    out = assoc({"a": 1}, "b", 2, factory=OrderedDict)
    assert type(out) is OrderedDict
    assert list(out.items()) == [("a", 1), ("b", 2)]
