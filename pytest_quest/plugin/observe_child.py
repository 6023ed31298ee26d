"""In the mutation child: what a surviving mutant made the function return or raise.

The first covering test that reached the survivor runs once with the mutant
and twice with the original (shared by the function's survivors) under
`engine.observe.CallObserver`; the first difference goes to the judge as plain
fields (core/observed.py words them).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import CodeType, FunctionType
from typing import Any

import pytest

from pytest_quest.core.mutant_ast import parsed
from pytest_quest.core.mutants import find_function
from pytest_quest.engine.observe import MAX_VALUE, Call, CallObserver, first_difference
from pytest_quest.engine.swap import CodeSwap
from pytest_quest.engine.witness_search import Target, search


def target(source: str, start: int) -> tuple[str, int] | None:
    """(name, first line of its code object) of the function defined on line `start`."""
    try:
        found = find_function(parsed(source), start)
    except (SyntaxError, SystemError):  # SystemError: mutation_child._again_on_ast_race
        return None
    if found is None:
        return None
    node = found[1]
    decorators = node.decorator_list  # type: ignore[attr-defined]
    first = decorators[0].lineno if decorators else node.lineno  # type: ignore[attr-defined]
    return node.name, first  # type: ignore[attr-defined]


class Watch:
    """Runs one test under a `CallObserver` of the quest's function."""

    def __init__(
        self, file: str, source: str, start: int, run: Callable[[pytest.Item], dict[str, Any]]
    ) -> None:
        self.file = file
        self.source, self.start = source, start
        self.run = run
        # The original's two runs per test, made once for all the function's survivors.
        self._originals: dict[str, tuple[list[Call] | None, list[Call] | None]] = {}
        # The arguments of the original's calls per test, deep-copied as given,
        # and how many calls' arguments could not be copied.
        self.kept: dict[str, list[dict[str, Any]]] = {}
        self.uncopied: dict[str, int] = {}

    @functools.cached_property
    def where(self) -> tuple[str, int] | None:
        # Found on first use: most mutants are killed and never watched.
        return target(self.source, self.start)

    def calls(self, item: pytest.Item, keep: bool = False) -> list[Call] | None:
        """The function's calls while `item` ran and passed; None when not observable.

        With `keep`, the calls' arguments are kept in `kept` for the witness search.
        """
        if self.where is None:
            return None
        name, first = self.where
        try:
            with CallObserver(self.file, name, first, keep=keep) as observer:
                outcome = self.run(item)
        except Exception:  # the observer must never change a verdict
            return None
        if not observer.usable or outcome.get("status") != "survived":
            return None
        if keep:
            self.kept[item.nodeid] = observer.kept
            self.uncopied[item.nodeid] = observer.uncopied
        return observer.calls

    def original(self, item: pytest.Item) -> tuple[list[Call] | None, list[Call] | None]:
        """`calls(item)` twice with the original in place.

        Kept for the next survivors `item` witnesses when the two runs agree
        (a function that answers the same twice); made again otherwise.
        """
        kept = self._originals.get(item.nodeid)
        if kept is not None:
            return kept
        found = (self.calls(item, keep=True), self.calls(item))
        if found[0] is not None and found[0] == found[1]:
            self._originals[item.nodeid] = found
        return found


def live_function(swap: CodeSwap) -> tuple[FunctionType, CodeType] | None:
    """The function object the mutant is in now, and the mutant's code (None: nested)."""
    if len(swap.keys) != 1 or not swap.swapped:
        return None
    function = swap.swapped[0][0]
    return function, function.__code__


def searched(
    watch: Watch, item: pytest.Item, live: tuple[FunctionType, CodeType] | None, applied: bool
) -> dict[str, Any]:
    """The child's `search` fields for a survivor `item`'s calls do not tell apart.

    `live`: the function object the mutant was put in, and the mutant's code
    (None: nested, or `applied` nowhere in this process); the original is in
    place again.  A survivor the search cannot look at says why (`problem`).
    """
    why = ""
    if not applied:
        why = "the mutant ran only in processes the tests started"
    elif live is None:
        why = "a nested function is not called on its own"
    else:
        if item.nodeid not in watch.kept:
            watch.original(item)
        kept = watch.kept.get(item.nodeid)
        if kept is None:
            why = "the function's calls could not be observed"
        elif not kept and watch.uncopied.get(item.nodeid):
            why = "the arguments of its calls could not be copied (an iterator, a lock, a file)"
        elif not kept:
            why = "no call of the function by a covering test was seen in this process"
    if why or live is None or kept is None:
        return {"calls": 0, "escapes": "", "problem": why}
    function, mutant = live
    return search(Target(function, function.__code__, mutant, kept)).record()


def observed(
    item: pytest.Item,
    mutant: list[Call] | None,
    original: list[Call] | None,
    again: list[Call] | None,
) -> Any:
    """The child's `observed` fields for a survivor, or None (`again`: the original once more)."""
    if not mutant or not original or again is None:
        return None
    difference = first_difference(mutant, original, again)
    if difference is None:
        return None
    return {"test": item.nodeid[: 2 * MAX_VALUE], **difference}
