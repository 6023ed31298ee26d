"""Small helpers of ``engine/codec.py``'s reader: names, kinds, where a key repeats."""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def policy_fault(message: str) -> tuple[str, str]:
    """Where and what for a `PolicyError` message (``key: problem``, or a problem of the whole)."""
    key, sep, problem = message.partition(": ")
    if sep and " " not in key:
        return f"policy.{key}", problem
    return "policy", message


def kind_name(kind: type | tuple[type, ...]) -> str:
    """How a message names the JSON kind(s) a field must have: "an object", "a list or a string"."""
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        int: "an integer",
        bool: "a boolean",
    }
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def second_occurrence(text: str, key: str) -> str:
    """`` at line N``: where `key` appears as an object key for the second time."""
    pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    matches = list(pattern.finditer(text))
    if len(matches) < 2:
        return ""
    return f" at line {text.count(chr(10), 0, matches[1].start()) + 1}"


def run_migrations(
    data: dict[str, Any],
    schema: int,
    fail: Callable[..., Exception],
    current: int,
    steps: dict[int, Callable[[dict[str, Any]], dict[str, Any]]],
) -> dict[str, Any]:
    """`data` of version `schema` brought to `current` by `steps`; errors made by `fail`."""
    if schema < 1:
        raise fail("schema", f"unknown version {schema} (versions start at 1)", RESTORE)
    while schema < current:
        step = steps.get(schema)
        if step is None:
            raise fail(
                "schema",
                f"version {schema} is older than this pytest-quest can read (it reads {current})",
                RESTORE,
            )
        try:
            migrated = step(dict(data))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise fail(
                "schema",
                f"migrating from version {schema} to {schema + 1} failed: "
                f"{type(exc).__name__}: {exc}",
            ) from None
        if not isinstance(migrated, dict):
            raise fail(
                "schema", f"migrating from version {schema} to {schema + 1} gave no JSON object"
            )
        data = migrated
        schema += 1
        data["schema"] = schema
    return data


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off meanwhile (it was on: on again after).

    Reading or writing 50,000 quests makes millions of objects and no cycle;
    the collector's passes over them cost a third of the time.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


RESTORE = "restore it from version control, or delete it and run `pytest --quest scan`"

__all__ = ["RESTORE", "paused_gc", "policy_fault", "run_migrations", "second_occurrence"]
