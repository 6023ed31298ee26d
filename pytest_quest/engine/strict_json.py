"""Parsing the ratchet file's JSON as data from a stranger.

Beyond `json.loads`: a key twice in one object is refused (parsers silently
keep the last), ``NaN``/``Infinity`` (not JSON, though Python reads and
writes them) and numbers beyond a float's range are refused, and an integer
longer than `MAX_DIGITS` digits is refused.  Each is reported naming the
field as a path into the JSON (``quests['ID'].tries``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pytest_quest.core.grammar import MAX_DIGITS, too_many_digits


class DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _Refused:
    """A number the reader refuses, kept in place until its field is named."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


class BadNumber(ValueError):
    """A refused number, with the path of its field."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # at C speed; the loop below only runs to name a duplicate
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return result


def parse(text: str) -> Any:
    """`text` parsed; raises `DuplicateKey`, `BadNumber` or `ValueError` (not JSON)."""
    refused: list[_Refused] = []

    def refuse(problem: str) -> _Refused:
        mark = _Refused(problem)
        refused.append(mark)
        return mark

    def parse_int(literal: str) -> int | _Refused:
        if len(literal) > MAX_DIGITS and too_many_digits(literal):
            return refuse(f"an integer of {len(literal.lstrip('-'))} digits (at most {MAX_DIGITS})")
        return int(literal)

    def parse_float(literal: str) -> float | _Refused:
        value = float(literal)
        if not math.isfinite(value):
            return refuse(f"{literal[:40]} is beyond a finite number's range")
        return value

    def parse_constant(name: str) -> _Refused:
        return refuse(f"{name} is not a JSON number (only finite numbers are allowed)")

    # An integer literal of more than MAX_DIGITS digits needs the hook; most files have
    # none, and then Python's own int parsing runs at C speed (a third of the parse).
    hooks: dict[str, Any] = {"parse_int": parse_int} if _LONG_INT.search(text) else {}
    data = json.loads(
        text,
        object_pairs_hook=_reject_duplicates,
        parse_float=parse_float,
        parse_constant=parse_constant,
        **hooks,
    )
    if refused:
        where = _where(data, refused[0], "")
        raise BadNumber(where or "top level", refused[0].problem)
    return data


def _where(data: Any, mark: _Refused, path: str) -> str | None:
    """The path of `mark` in `data` (``quests['ID'].extra.x``, ``lines[0]``)."""
    if data is mark:
        return path
    if isinstance(data, dict):
        for key, value in data.items():
            named = f"{path}[{key!r}]" if path in _KEYED else (f"{path}.{key}" if path else key)
            found = _where(value, mark, named)
            if found is not None:
                return found
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found = _where(value, mark, f"{path}[{index}]")
            if found is not None:
                return found
    return None


# Where a long integer literal may stand: at the start, or after ``:``, ``,`` or ``[``, then
# followed by the end, ``,``, ``]`` or ``}`` (whitespace around).  A digit run inside a string
# may match too (the hook then runs, as before); a number of JSON's grammar never escapes it.
_LONG_INT = re.compile(
    rf"(?:^|[:,\[])[ \t\n\r]*-?[0-9]{{{MAX_DIGITS + 1},}}[ \t\n\r]*(?:[,\]}}]|$)"
)

# Objects whose keys are names (quest ids, file paths), written ``[...]``.
_KEYED = frozenset({"quests", "test_files"})


__all__ = ["BadNumber", "DuplicateKey", "parse"]
