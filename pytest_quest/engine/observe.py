"""What a function returned or raised, call by call, while one test ran (the mutation child).

The child runs the test that reached a survivor once with the mutant and
once with the original under a `CallObserver`; `first_difference` pairs the
calls for the fact.  Only what is certain is kept: generators, coroutines,
calls left by an exception after a handler ran, or a tracer already set say
nothing (docs/gate.md, "What the mutant did").
"""

from __future__ import annotations

import dis
import functools
import inspect
import os
import re
import reprlib
import sys
from copy import deepcopy  # bound here: a test that patches copy.deepcopy changes nothing
from dataclasses import dataclass
from types import BuiltinFunctionType, CodeType, FrameType, FunctionType, ModuleType
from typing import Any

#: Calls recorded per run, and characters per shown value.
MAX_CALLS = 20
MAX_VALUE = 80

_NOT_PLAIN = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async gen
_GENERATOR = 0x20
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")

_repr = reprlib.Repr()
_repr.maxstring = MAX_VALUE
_repr.maxother = MAX_VALUE
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 6
_repr.maxlevel = 3


def shown(value: Any) -> str:
    """A short repr of `value` (never raises: a failing `__repr__` shows the type)."""
    try:
        text = _repr.repr(value)
    except Exception:  # a project's __repr__ may raise anything
        text = f"<{type(value).__name__}>"
    # Object addresses differ on every run: shown without, so facts repeat.
    text = _ADDRESS.sub("", text)
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 3] + "..."


@dataclass(frozen=True)
class Call:
    """One call of the observed function: its arguments (shown) and how it ended."""

    args: str
    ended: str  # "returns" or "raises"
    value: str
    # What the call left in its arguments and its object (`self`), shown by
    # name, public state only (below); empty when it ended otherwise.
    after: tuple[tuple[str, str], ...] = ()


def state(value: Any) -> str:
    """`value` as a test of public behaviour sees it after a call.

    Its repr when it has one of its own; else, for an object with the
    default repr (`<Cart object>`), its public attributes (no leading
    underscore: a cache or a private index is the object's own business,
    and a mutant that changes only those is not "seen" doing otherwise).
    """
    try:
        if getattr(type(value), "__repr__", None) is object.__repr__:
            attributes = getattr(value, "__dict__", None)
            if isinstance(attributes, dict):
                public = {k: v for k, v in attributes.items() if not str(k).startswith("_")}
                return shown(public)
    except Exception:  # a `__dict__` property of the project's may raise anything
        return f"<{type(value).__name__}>"
    return shown(value)


class CallObserver:
    """Records the calls of one function (by file, name, first line) in this thread."""

    def __init__(self, path: str, name: str, firstline: int, keep: bool = False) -> None:
        self.path = os.path.realpath(path)
        self.name = name
        self.firstline = firstline
        self.calls: list[Call] = []
        # With `keep`, a deep copy of each call's arguments as given, by
        # parameter name (`self` included), for the witness search to call
        # the function with again (engine/witness.py); a call whose
        # arguments cannot be copied is not kept.
        self.keep = keep
        self.kept: list[dict[str, Any]] = []
        #: Calls whose arguments could not be copied (not kept).
        self.uncopied = 0
        self.usable = True
        self._previous: Any = None
        self._tracer = self._global  # one bound method: compared by identity on exit
        self._files: dict[str, bool] = {}

    def __enter__(self) -> CallObserver:
        self._previous = sys.gettrace()
        if self._previous is not None:
            # coverage.py measuring the child, a debugger: not taken away nor
            # chained (coverage's tracer puts itself back when called from
            # Python), so nothing is observed.
            self.usable = False
        else:
            sys.settrace(self._tracer)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.usable:
            if sys.gettrace() is not self._tracer:
                self.usable = False  # the test replaced the tracer: calls may be missing
            sys.settrace(None)

    def _matches(self, code: CodeType) -> bool:
        if code.co_name != self.name or code.co_firstlineno != self.firstline:
            return False
        same = self._files.get(code.co_filename)
        if same is None:  # a realpath per call was a third of the observer's time
            same = self._files[code.co_filename] = os.path.realpath(code.co_filename) == self.path
        return same

    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event != "call" or frame.f_code.co_name != self.name:
            return None
        code = frame.f_code
        if not self._matches(code):
            return None
        if code.co_flags & _NOT_PLAIN:
            # A generator's frame is "called" again at every resume: kept at its first,
            # before any `yield` was reached.
            if (
                self.keep
                and code.co_flags & _NOT_PLAIN == _GENERATOR
                and len(self.kept) < MAX_CALLS
                and frame.f_lasti < _first_yield(code)
            ):
                self._keep(frame)  # the witness search drains what it yields
            return None
        if len(self.calls) >= MAX_CALLS:
            return None
        args = _arguments(frame)
        if self.keep:
            self._keep(frame)
        held = _held(frame)
        state: dict[str, Any] = {"exception": None, "handled": False, "held": held}

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "exception":
                state["exception"] = arg[1]
            elif event == "line" and state["exception"] is not None:
                state["handled"] = True  # a handler or `finally` runs: unsure how it ends
            elif event == "return":
                self._ended(args, arg, state)
            return local

        return local

    def _keep(self, frame: FrameType) -> None:
        code = frame.f_code
        local = frame.f_locals
        names = code.co_varnames[: _parameter_count(code)]
        given = {name: local[name] for name in names if name in local}
        try:
            copied = deepcopy(given)
            # A copy must be the value as given, private state too: a `__deepcopy__`
            # that hands back something else would have the search call junk.
            faithful = all(whole_state(copied[name]) == whole_state(given[name]) for name in given)
        except Exception:  # a generator, a lock, a file, a project's __deepcopy__: not kept
            faithful = False
        if faithful:
            self.kept.append(copied)
        else:
            self.uncopied += 1

    def _ended(self, args: str, value: Any, state: dict[str, Any]) -> None:
        exception = state["exception"]
        if exception is None:
            self.calls.append(Call(args, "returns", shown(value), _after(state["held"])))
        elif value is None and not state["handled"]:
            self.calls.append(Call(args, "raises", shown(exception), _after(state["held"])))
        else:
            self.calls.append(Call(args, "", ""))  # cannot tell how it ended


@functools.lru_cache(maxsize=256)
def _first_yield(code: CodeType) -> int:
    """The offset of the first `yield` in `code` (a resume past it is not the first)."""
    for instruction in dis.get_instructions(code):
        if instruction.opname == "YIELD_VALUE":
            return instruction.offset
    return sys.maxsize


def whole_state(value: Any, depth: int = 4) -> str:
    """`value`'s whole state as text: private attributes too (by name), an iterator's
    position (``__reduce_ex__``), containers item by item; bounded in depth and items."""
    seen: set[int] = set()
    path: set[int] = set()  # the objects being walked: a cycle stops at them
    # Everything walked stays alive until the end: the lists and tuples made here
    # (`__reduce_ex__`'s) would be freed, and a later one at the same address taken
    # for seen, so the text would depend on where the allocator put them.
    alive: list[Any] = []

    def walk(item: Any, level: int) -> str:
        if isinstance(item, (int, float, complex, str, bytes, bool, type(None))):
            return repr(item)[:200]
        key = id(item)
        # A mutable object met again is shown as met (sharing it is state: a change
        # through one name shows through the other); a value met again is shown
        # whole, as one object or two equal ones cannot be told apart.
        if level == 0 or key in path or (key in seen and not _a_value(item)):
            return f"<{type(item).__name__}>"
        seen.add(key)
        path.add(key)
        alive.append(item)
        try:
            return _walked(item, level)
        finally:
            path.discard(key)

    def _walked(item: Any, level: int) -> str:
        try:
            if isinstance(item, dict):
                parts = [
                    f"{walk(k, level - 1)}: {walk(v, level - 1)}"
                    for k, v in list(item.items())[:50]
                ]
                return "{" + ", ".join(parts) + "}"
            if isinstance(item, (list, tuple, set, frozenset)):
                items = sorted(map(repr, item))[:50] if isinstance(item, (set, frozenset)) else item
                return "[" + ", ".join(walk(v, level - 1) for v in list(items)[:50]) + "]"
            if isinstance(item, (type, ModuleType, FunctionType, BuiltinFunctionType)):
                return f"<{getattr(item, '__qualname__', type(item).__name__)}>"
            attributes = getattr(item, "__dict__", None)
            if isinstance(attributes, dict):
                # By name: the order they were set in depends on how the object
                # was built (a copy through `__reduce__` may set them otherwise).
                # A `functools.cached_property`'s value is a cache of the rest: whether
                # it was read yet is no state of the object's.
                named = {
                    name: value
                    for name, value in sorted(attributes.items(), key=lambda pair: str(pair[0]))
                    if not _cached(type(item), name)
                }
                return f"{type(item).__name__}{walk(named, level)}"
            reduced = item.__reduce_ex__(4)
            if isinstance(reduced, tuple):
                return f"{type(item).__name__}{walk(list(reduced[1:3]), level - 1)}"
        except Exception:  # a project's __reduce_ex__ or __dict__ may raise anything
            pass
        return f"<{type(item).__name__}>"

    return walk(value, depth)


def _a_value(item: Any) -> bool:
    """Whether `item` hashes by value (a tuple, a `timedelta`, a `frozenset`, a frozen
    dataclass): equal ones stand for each other, so which of them is held is no state."""
    hashing = getattr(type(item), "__hash__", None)
    if hashing is None or hashing is object.__hash__:
        return False  # unhashable, or hashed by identity: an object, not a value
    try:
        hash(item)  # a tuple holding a list cannot be hashed
    except Exception:  # a project's __hash__ may raise anything
        return False
    return True


def _cached(kind: type, name: object) -> bool:
    """Whether `name` is a `functools.cached_property` of `kind` (read without running it)."""
    try:
        found = inspect.getattr_static(kind, name, None) if isinstance(name, str) else None
    except Exception:  # a metaclass may raise anything
        return False
    return isinstance(found, functools.cached_property)


def _parameter_count(code: CodeType) -> int:
    count = code.co_argcount + code.co_kwonlyargcount
    return count + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs


def _arguments(frame: FrameType) -> str:
    code = frame.f_code
    names = list(code.co_varnames[: _parameter_count(code)])
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    local = frame.f_locals
    return ", ".join(f"{name}={shown(local.get(name))}" for name in names)


def _held(frame: FrameType) -> list[tuple[str, Any]]:
    """The objects the call was given, `self` included, by parameter name.

    Held from the call on: the body may rebind a parameter's name, and what
    counts is the object the caller gave.  Immutable values cannot be left
    otherwise and are not held.
    """
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    local = frame.f_locals
    return [
        (name, local[name])
        for name in code.co_varnames[:count]
        if name in local and not isinstance(local[name], _IMMUTABLE)
    ]


_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), frozenset, range)


def _after(held: list[tuple[str, Any]]) -> tuple[tuple[str, str], ...]:
    return tuple((name, state(value)) for name, value in held)


def _same(a: str, b: str) -> bool:
    """Equal but for object addresses (`<Foo object at 0x7f...>` differs on every run)."""
    return _ADDRESS.sub("", a) == _ADDRESS.sub("", b)


def first_difference(
    mutant: list[Call], original: list[Call], again: list[Call] | None = None
) -> dict[str, str] | None:
    """The first call, with the same arguments in both runs, that ended otherwise; else None.

    Calls are paired in order; once the arguments differ nothing more is said.
    `again`, a second run of the original, must agree with the first, so results
    that change from run to run (the clock, random numbers) are not a difference.
    Leaving an argument or its object otherwise counts too, under the same rule.
    """
    if again is not None and _endings(again) != _endings(original):
        return None
    for at, (with_mutant, with_original) in enumerate(zip(mutant, original)):
        if not _same(with_mutant.args, with_original.args):
            return None
        if not with_mutant.ended or not with_original.ended:
            continue
        if with_mutant.ended != with_original.ended or not _same(
            with_mutant.value, with_original.value
        ):
            if with_mutant.ended == with_original.ended and _opaque(
                with_mutant.value, with_original.value
            ):
                continue  # two objects shown by type only: not a difference to go by
            return {
                "args": with_original.args,
                "mutant": f"{with_mutant.ended} {with_mutant.value}",
                "original": f"{with_original.ended} {with_original.value}",
            }
        if again is not None and again[at].after != with_original.after:
            continue
        left = _left_otherwise(with_mutant.after, with_original.after)
        if left is not None:
            return {"args": with_original.args, **left}
    return None


def _opaque(*values: str) -> bool:
    """Whether every value is shown by its type only (`<list_iterator object>`, `<Bad>`).

    Equivalent paths may return objects of different types alike in use
    (`iter(cache)` or a generator): not a difference.  One against a value still is.
    """
    return all(value.startswith("<") and value.endswith(">") for value in values)


def _endings(calls: list[Call]) -> list[tuple[str, str, str]]:
    return [(c.args, c.ended, c.value) for c in calls]


def _left_otherwise(
    mutant: tuple[tuple[str, str], ...], original: tuple[tuple[str, str], ...]
) -> dict[str, str] | None:
    """The first argument the two calls left otherwise, as `leaves name=state` each."""
    if [name for name, _ in mutant] != [name for name, _ in original]:
        return None
    for (name, left), (_, expected) in zip(mutant, original):
        if not _same(left, expected) and not _opaque(left, expected):
            return {"mutant": f"leaves {name}={left}", "original": f"leaves {name}={expected}"}
    return None
