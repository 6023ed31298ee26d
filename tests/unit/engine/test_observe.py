"""engine/observe.py: the calls of one function while a test runs, and the first difference."""

from __future__ import annotations

import functools
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from pytest_quest.engine.observe import (
    MAX_CALLS,
    MAX_VALUE,
    Call,
    CallObserver,
    first_difference,
    shown,
    state,
    whole_state,
)

SOURCE = """
def price(amount, qty, *rest, rate=0.1, **kw):
    if qty < 0:
        raise ValueError("negative")
    return amount * (1 - rate)


def guarded(x):
    try:
        return 1 // x
    except ZeroDivisionError:
        return None


def finally_raises(x):
    try:
        raise KeyError(x)
    finally:
        x = 2


def gen(n):
    yield n


class Box:
    def get(self, key):
        return [key]


class Cart:
    def __init__(self):
        self.items = []
        self._seen = 0

    def add(self, item, into):
        self._seen += 1
        into = list(into)  # the name rebound: what counts is the list the caller gave
        self.items.append(item)
        return None
"""


@pytest.fixture(autouse=True)
def no_tracer() -> Iterator[None]:
    """These tests set tracers: the run's own (coverage.py measuring it) is put aside, then back."""
    previous = sys.gettrace()
    sys.settrace(None)
    try:
        yield
    finally:
        sys.settrace(previous)


def load(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(SOURCE))
    namespace: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def observe(
    tmp_path: Path, name: str, line: int, run: Callable[[dict[str, Any]], object]
) -> CallObserver:
    namespace = load(tmp_path)
    with CallObserver(str(tmp_path / "mod.py"), name, line) as observer:
        run(namespace)
    return observer


def test_returns_and_raises_are_recorded_with_their_arguments(tmp_path: Path) -> None:
    def run(ns: dict[str, Any]) -> None:
        ns["price"](1000, 20)
        try:
            ns["price"](5, -1, 7, rate=0.5, extra=1)
        except ValueError:
            pass

    observer = observe(tmp_path, "price", 2, run)
    assert observer.usable
    assert [Call(c.args, c.ended, c.value) for c in observer.calls] == [
        Call("amount=1000, qty=20, rate=0.1, rest=(), kw={}", "returns", "900.0"),
        Call(
            "amount=5, qty=-1, rate=0.5, rest=(7,), kw={'extra': 1}",
            "raises",
            "ValueError('negative')",
        ),
    ]


def test_an_exception_handled_or_a_finally_is_not_guessed(tmp_path: Path) -> None:
    def run(ns: dict[str, Any]) -> None:
        ns["guarded"](0)
        ns["guarded"](2)
        try:
            ns["finally_raises"](1)
        except KeyError:
            pass

    assert observe(tmp_path, "guarded", 8, run).calls == [
        Call("x=0", "", ""),
        Call("x=2", "returns", "0"),
    ]
    assert observe(tmp_path, "finally_raises", 15, run).calls == [Call("x=1", "", "")]


def test_generators_other_functions_and_self_are_left_out(tmp_path: Path) -> None:
    def run(ns: dict[str, Any]) -> None:
        list(ns["gen"](3))
        ns["Box"]().get("k")

    assert observe(tmp_path, "gen", 22, run).calls == []
    (call,) = observe(tmp_path, "get", 27, run).calls
    assert (call.args, call.ended, call.value) == ("key='k'", "returns", "['k']")


def test_at_most_max_calls_and_short_values(tmp_path: Path) -> None:
    def run(ns: dict[str, Any]) -> None:
        for _ in range(MAX_CALLS + 5):
            ns["price"]("x" * 500, 1, rate=0)

    calls = observe(tmp_path, "price", 2, run).calls
    assert len(calls) == MAX_CALLS
    assert all(len(c.value) <= MAX_VALUE for c in calls)


def test_a_tracer_already_set_is_left_alone_and_a_replaced_one_noticed(tmp_path: Path) -> None:
    def other(frame: FrameType, event: str, arg: object) -> None:
        return None

    namespace = load(tmp_path)
    sys.settrace(other)
    try:
        with CallObserver(str(tmp_path / "mod.py"), "price", 2) as observer:
            namespace["price"](1, 1)
        assert sys.gettrace() is other
    finally:
        sys.settrace(None)
    assert not observer.usable and observer.calls == []
    try:
        with CallObserver(str(tmp_path / "mod.py"), "price", 2) as observer:
            sys.settrace(other)
        assert sys.gettrace() is None
    finally:
        sys.settrace(None)
    assert not observer.usable


def test_a_failing_repr_shows_the_type() -> None:
    class Bad:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert shown(Bad()) == "<Bad instance>"  # addresses are never shown: facts repeat


def test_the_first_difference_pairs_calls_in_order() -> None:
    same = Call("a=1", "returns", "2")
    assert first_difference([same], [same]) is None
    assert first_difference(
        [same, Call("a=2", "returns", "50")], [same, Call("a=2", "returns", "900")]
    ) == {"args": "a=2", "mutant": "returns 50", "original": "returns 900"}
    assert first_difference(
        [Call("a=1", "raises", "ValueError()")], [Call("a=1", "returns", "1")]
    ) == {"args": "a=1", "mutant": "raises ValueError()", "original": "returns 1"}
    # the original twice, not alike (the clock, random numbers): nothing said
    assert (
        first_difference(
            [Call("a=1", "returns", "5")],
            [Call("a=1", "returns", "1.25")],
            [Call("a=1", "returns", "1.5")],
        )
        is None
    )
    # different paths (other arguments): nothing said
    assert first_difference([Call("a=3", "returns", "1")], [Call("a=1", "returns", "2")]) is None
    # an unknown ending is skipped, an address is no difference
    assert (
        first_difference(
            [Call("a=1", "", ""), Call("o=<X object at 0x1>", "returns", "<Y at 0xa>")],
            [Call("a=1", "returns", "3"), Call("o=<X object at 0x2>", "returns", "<Y at 0xb>")],
        )
        is None
    )


def test_what_a_call_leaves_in_its_arguments_and_object_is_recorded(tmp_path: Path) -> None:
    given: list[int] = [1]

    def run(ns: dict[str, Any]) -> None:
        ns["Cart"]().add("pen", given)

    (call,) = observe(tmp_path, "add", 36, run).calls
    assert call.args == "item='pen', into=[1]"
    # `self` by its public attributes (no `_seen`), the list the caller gave; no str.
    assert call.after == (("self", "{'items': ['pen']}"), ("into", "[1]"))


def test_the_state_of_a_value_is_its_repr_or_its_public_attributes() -> None:
    class Plain:
        def __init__(self) -> None:
            self.a, self._b = 1, 2

    class Shown(Plain):
        def __repr__(self) -> str:
            return "Shown()"

    class Odd:
        @property
        def __dict__(self) -> dict[str, int]:  # type: ignore[override]
            raise RuntimeError("no")

    assert state(Plain()) == "{'a': 1}"
    assert state(Odd()) == "<Odd>"
    assert state(Shown()) == "Shown()"
    assert state([1, {"k": 2}]) == "[1, {'k': 2}]"


def test_a_call_that_left_its_arguments_otherwise_is_a_difference() -> None:
    done = Call("item='pen'", "returns", "None", (("self", "{'items': ['pen']}"),))
    skipped = Call("item='pen'", "returns", "None", (("self", "{'items': []}"),))
    assert first_difference([skipped], [done], [done]) == {
        "args": "item='pen'",
        "mutant": "leaves self={'items': []}",
        "original": "leaves self={'items': ['pen']}",
    }
    # the original's two runs left it otherwise (a time stamp): nothing said of it
    stamped = Call("item='pen'", "returns", "None", (("self", "{'at': 2}"),))
    assert first_difference([skipped], [done], [stamped]) is None
    # a different result is said first; other names (another path) are not compared
    other = Call("item='pen'", "returns", "None", (("cart", "{'items': []}"),))
    assert first_difference([other], [done], [done]) is None


def test_two_objects_shown_by_type_only_are_no_difference() -> None:
    # dateutil's rrulebase.__iter__ with `if self._cache_complete:` forced False: a
    # generator over the same cache where the original returns `iter(cache)`.
    gen = Call("", "returns", "<generator object rrulebase._iter_cached>")
    it = Call("", "returns", "<list_iterator object>")
    assert first_difference([gen], [it], [it]) is None
    # One of them against a value still is.
    none = Call("", "returns", "None")
    assert first_difference([none], [it], [it]) == {
        "args": "",
        "mutant": "returns None",
        "original": "returns <list_iterator object>",
    }
    node = (("n", "<Node a>"),)
    assert (
        first_difference(
            [Call("", "returns", "1", (("n", "<Node b>"),))], [Call("", "returns", "1", node)]
        )
        is None
    )


def test_kept_arguments_are_copies_as_given_a_generators_once(tmp_path: Path) -> None:
    # The witness search calls the function again with these (engine/witness_search.py).
    namespace = load(tmp_path)
    path = str(tmp_path / "mod.py")
    given = ["pen"]
    cart = namespace["Cart"]()
    with CallObserver(path, "add", 36, keep=True) as observer:
        cart.add("ink", given)
    assert observer.usable and len(observer.kept) == 1
    kept = observer.kept[0]
    assert kept["item"] == "ink" and kept["into"] == ["pen"] and kept["into"] is not given
    assert kept["self"].items == [] and kept["self"] is not cart  # as it was before the call
    with CallObserver(path, "gen", 22, keep=True) as observer:
        list(namespace["gen"](3))
        list(namespace["gen"](4))
    assert observer.kept == [{"n": 3}, {"n": 4}] and observer.calls == []
    with CallObserver(path, "add", 36) as observer:
        cart.add("ink", given)
    assert observer.kept == []


class _Junk:
    """A value whose copy is another value: a test could hand the search junk this way."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __deepcopy__(self, memo: dict[int, Any]) -> _Junk:
        return _Junk(0)


def test_an_argument_that_does_not_copy_as_itself_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import copy

    namespace = load(tmp_path)
    path = str(tmp_path / "mod.py")
    with CallObserver(path, "get", 27, keep=True) as observer:
        namespace["Box"]().get(_Junk(5))
    assert observer.kept == [] and observer.uncopied == 1
    # Patching copy.deepcopy (during the test, as a test could) copies nothing otherwise.
    monkeypatch.setattr(copy, "deepcopy", lambda value, memo=None: {})
    with CallObserver(path, "get", 27, keep=True) as observer:
        namespace["Box"]().get([1])
    assert [call["key"] for call in observer.kept] == [[1]]


def test_whole_state_is_the_same_text_on_every_reading() -> None:
    # The walk marks what it has seen by id; the lists and tuples `__reduce_ex__` makes
    # are freed as it goes, and a later one at the same address was taken for seen
    # (`deque<list>` one time, `deque[[], None]` the next): a mutant equal to the
    # function then looked as if it left the object's private state otherwise.
    import collections

    class Peekable:
        def __init__(self) -> None:
            self._it = iter("abcde")
            self._cache: collections.deque[str] = collections.deque()

    value = Peekable()
    assert len({whole_state(value) for _ in range(50)}) == 1


class _Zone:
    """Two offsets that are one object or two equal ones, as dateutil's `tzlocal` sets them."""

    def __init__(self, shared: bool, offset: Any = None) -> None:
        import datetime

        self.std = datetime.timedelta(seconds=0)
        self.dst = self.std if shared else datetime.timedelta(seconds=0)
        if offset is not None:
            self.dst = offset


def test_one_value_or_two_equal_ones_is_the_same_state() -> None:
    # `self._dst_offset = self._std_offset` against an equal new `timedelta`: nothing tells
    # them apart but `is`, yet the second one met was shown as `<timedelta>`, and the
    # mutant was held as leaving the private state of self otherwise.
    import datetime

    assert whole_state(_Zone(shared=True)) == whole_state(_Zone(shared=False))
    assert whole_state((1, 2)) == whole_state(tuple([1, 2]))
    assert whole_state(_Zone(True)) != whole_state(_Zone(True, datetime.timedelta(hours=1)))


def test_a_mutable_object_held_twice_is_not_two_equal_ones() -> None:
    # Sharing a list is state (a change through one name shows through the other); and a
    # cycle still ends.
    shared: list[int] = [1]
    two = {"a": shared, "b": shared}
    assert whole_state(two) != whole_state({"a": [1], "b": [1]})
    ring: list[Any] = [1]
    ring.append(ring)
    ring.append((2, ring))
    assert whole_state(ring) == whole_state(ring)


class _Span:
    """Its attributes set in an order that depends on how it was built; its copy builds it
    the other way (as a class whose `__reduce__` calls it with every argument does)."""

    def __init__(self, *args: int) -> None:
        if len(args) == 1:
            (self.stop,) = args
            self.start = 0
        else:
            self.start, self.stop = args

    def __reduce__(self) -> tuple[type[_Span], tuple[int, int]]:
        return (_Span, (self.start, self.stop))

    def width(self) -> int:
        return self.stop - self.start


def test_the_order_attributes_were_set_in_is_not_state(tmp_path: Path) -> None:
    # A copy made through `__reduce__` has the same attributes in another order: it is
    # the value as given, and the call is kept for the witness search (it was not, and
    # its survivors were held for want of a call).
    assert whole_state(_Span(5)) == whole_state(_Span(0, 5))
    assert whole_state(_Span(5)) != whole_state(_Span(1, 5))
    with CallObserver(__file__, "width", _Span.width.__code__.co_firstlineno, keep=True) as seen:
        _Span(5).width()
    assert seen.uncopied == 0 and [call["self"].stop for call in seen.kept] == [5]


class _Sized:
    """A `functools.cached_property` fills the object's `__dict__` on its first read."""

    def __init__(self, n: int) -> None:
        self.n = n

    @functools.cached_property
    def size(self) -> int:
        return self.n * 2


def test_a_cached_property_read_or_not_is_the_same_state() -> None:
    # A mutant that reads the cached value where the function did not (or the other way)
    # left the object "otherwise", and was held on its private state.
    read = _Sized(3)
    assert read.size == 6
    assert whole_state(read) == whole_state(_Sized(3))
    assert whole_state(_Sized(3)) != whole_state(_Sized(4))
