"""Seeds: the tests' calls pickled in the mutation child, read back allowing only types."""

from __future__ import annotations

import base64
import collections
import pickle
import threading
from subprocess import Popen
from typing import Any

import pytest

from pytest_quest.engine.seeds import (
    MAX_CALL_BYTES,
    MAX_CALLS,
    SeedRefused,
    _Unpickler,
    decode,
    encode,
)

HERE = __name__


class Point:
    def __init__(self, x: int) -> None:
        self.x = x

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Point) and other.x == self.x

    class Inner:
        pass


def helper() -> None:
    return None


def _ours(module: str) -> bool:
    return module == HERE


def _b64(value: object) -> str:
    return base64.b64encode(pickle.dumps(value, protocol=4)).decode("ascii")


def test_encode_keeps_the_calls_that_pickle_up_to_the_limits() -> None:
    assert encode(None) == []
    assert encode([]) == []
    lock_call: dict[str, Any] = {"lock": threading.Lock()}
    big = {"data": b"x" * MAX_CALL_BYTES}
    assert encode([{"a": 1}, lock_call, big, {"b": (2, "c")}]) == [
        _b64({"a": 1}),
        _b64({"b": (2, "c")}),
    ]
    assert encode([{"n": n} for n in range(MAX_CALLS + 5)]) == [
        _b64({"n": n}) for n in range(MAX_CALLS)
    ]


def test_a_call_just_under_the_byte_limit_is_kept() -> None:
    base = len(pickle.dumps({"d": b""}, protocol=4))
    fits = {"d": b"y" * (MAX_CALL_BYTES - base - 8)}  # the length prefix grows from 1 to 4+ bytes
    size = len(pickle.dumps(fits, protocol=4))
    assert size <= MAX_CALL_BYTES
    assert encode([fits]) == [_b64(fits)]


def _unpickler() -> _Unpickler:
    return _Unpickler(b"", _ours)


def test_find_class_allows_stdlib_value_types_and_the_projects_own_classes() -> None:
    assert _unpickler().find_class("collections", "OrderedDict") is collections.OrderedDict
    assert _unpickler().find_class("builtins", "frozenset") is frozenset
    assert _unpickler().find_class(HERE, "Point") is Point
    assert _unpickler().find_class(HERE, "Point.Inner") is Point.Inner


@pytest.mark.parametrize(
    ("module", "name", "message"),
    [
        ("builtins", "eval", "builtins.eval is not a type the seeds may hold"),
        (
            "os",
            "system",
            "os.system is not a type the seeds may hold",
        ),  # imported, not the project's
        ("no_such_module_5a1", "X", "no_such_module_5a1.X is not a type the seeds may hold"),
        (HERE, "Point.__init__", f"{HERE}.Point.__init__: a private name"),
        (HERE, "__builtins__", f"{HERE}.__builtins__: a private name"),
        (HERE, "helper", f"{HERE}.helper is not a class defined in {HERE}"),
        (HERE, "Popen", f"{HERE}.Popen is not a class defined in {HERE}"),
        (HERE, "Missing", f"{HERE}.Missing is not a class defined in {HERE}"),
    ],
)
def test_find_class_refuses(module: str, name: str, message: str) -> None:
    with pytest.raises(SeedRefused) as caught:
        _unpickler().find_class(module, name)
    assert str(caught.value) == message


def test_popen_is_imported_here_not_defined() -> None:
    assert Popen.__module__ == "subprocess"


def test_decode_keeps_what_reads_back_as_a_dict_of_allowed_types() -> None:
    good = {"self": Point(3), "items": collections.OrderedDict(a=1)}
    encoded = [
        _b64(good),
        7,
        "A" * (2 * MAX_CALL_BYTES + 4),
        "not base64!",
        _b64({"f": helper}),
        _b64([1, 2]),
        _b64({1: "a"}),
        base64.b64encode(pickle.dumps({"a": 1})[:-3]).decode("ascii"),
        _b64({"b": 2}),
    ]
    assert decode(encoded, _ours) == [good, {"b": 2}]
    assert decode("not a list", _ours) == []
    assert decode(None, _ours) == []
    assert decode([_b64({"self": Point(1)})], lambda module: False) == []


def test_decode_reads_at_most_max_calls() -> None:
    encoded = [_b64({"n": n}) for n in range(MAX_CALLS + 3)]
    assert decode(encoded, _ours) == [{"n": n} for n in range(MAX_CALLS)]
