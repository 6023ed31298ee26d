"""Which kills of a function's mutants the fresh run confirms, and with which mutant (pure).

The mutation child's entries (dicts: index, status, killed_by, how,
operator, id, original, mutated) in, choices out; plugin/fresh_kill.py runs
them.
"""

from __future__ import annotations

from typing import Any

from pytest_quest.core.mutant_ast import change_text

#: How a kill by a mutant that runs away ends: past its time budget, or at the memory cap.
RUNAWAY = ("timeout", "memory")
#: In why a kill is unconfirmed: the fresh run could not have the mutant in place at all
#: (its module was imported before any conftest), which says nothing of the test.
IMPORTED_BEFORE_SIGN = "cannot have this mutant in place from the start"


def killers(mutants: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Per mutant index, the killing tests to confirm with it: each test once, with its first
    kill by a failure, else its first kill by a mutant that ran away (``RUNAWAY``)."""
    chosen: dict[int, list[str]] = {}
    seen: set[str] = set()
    for runaway in (False, True):
        for entry in mutants:
            if entry.get("status") != "killed" or (entry.get("how") in RUNAWAY) != runaway:
                continue
            test = str(entry.get("killed_by") or "")
            if test and test not in seen:
                seen.add(test)
                chosen.setdefault(int(entry["index"]), []).append(test)
    return chosen


def pilot(mutants: list[dict[str, Any]], chosen: dict[int, list[str]]) -> int:
    """The mutant every killing test is first tried with: ``return None`` when it was killed."""
    for entry in mutants:
        if entry.get("operator") == "body.return_none" and entry.get("status") == "killed":
            if entry.get("how") not in RUNAWAY:
                return int(entry["index"])
    return next(iter(chosen))


def describe(entry: dict[str, Any]) -> str:
    change = change_text(str(entry.get("original")), str(entry.get("mutated")))
    return f"mutant {entry.get('id', '')} {change}"
