"""The judge's side of the clean witness search (engine/clean_child.py).

The mutation child's "no difference found" is never taken: the judge searches
again in a process that loads no test code, reading the source first
(`judged`) so that process can check it imports the judged code.  A search
that does not complete holds its survivors.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_quest.core.mutant_ast import parsed
from pytest_quest.core.mutants import find_function
from pytest_quest.core.observed import held_because, observed_text, witness_text
from pytest_quest.engine.runner import run_over_channel
from pytest_quest.engine.source import fingerprint_node

ENTRY = "pytest_quest.engine.clean_child"


@dataclass(frozen=True)
class SearchPath:
    """Where the clean search imports the code under test from (the judge's, never the child's),
    and the folders of the code under test (a seed's classes come from their modules only)."""

    path: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judged:
    """A function as the judge read it before the tests ran."""

    file: str
    start: int
    source: str
    fingerprint: str
    operators: tuple[str, ...] | None


def judged(file: Path, start: int, operators: tuple[str, ...] | None) -> Judged | None:
    """`file`'s function on line `start` as it stands now (None: unreadable, or no def there)."""
    try:
        source = file.read_text(encoding="utf-8")
        found = find_function(parsed(source), start)
    except (OSError, UnicodeError, SyntaxError, ValueError):
        return None
    if found is None:
        return None
    return Judged(str(file), start, source, fingerprint_node(found[1]), operators)


def pending(entry: dict[str, Any]) -> bool:
    """Whether the child's record of `entry` would let the survivor through unwitnessed."""
    if not isinstance(entry, dict):
        return False
    if entry.get("status") != "survived" or observed_text(entry.get("observed")):
        return False
    search = entry.get("search")
    return not witness_text(search) and not held_because(search)


def module_names(file: str, path: list[str]) -> list[str]:
    """The names `file` is imported by from the folders of `path` (deepest folder first)."""
    real = Path(file).resolve()
    names = []
    for folder in sorted({str(Path(p).resolve()) for p in path}, key=len, reverse=True):
        try:
            parts = list(real.relative_to(folder).with_suffix("").parts)
        except ValueError:
            continue
        if parts and parts[-1] == "__init__":
            parts.pop()
        if parts and all(part.isidentifier() for part in parts):
            names.append(".".join(parts))
    return names


def search_cleanly(
    functions: list[tuple[Judged | None, list[dict[str, Any]]]],
    *,
    path: list[str],
    roots: list[str],
    cwd: Path,
    timeout: float,
) -> float:
    """Replace the `search` record of every pending mutant entry by the clean search's.

    `functions`: each function as judged and the mutation child's entries for
    it (changed in place; their seeds dropped).  `path`: the import path the
    judge computed; `roots`: the folders of the code under test (a seed's
    classes come from their modules only).  Returns the seconds the clean
    process took (0: none ran).
    """
    try:
        return _search(functions, path=path, roots=roots, cwd=cwd, timeout=timeout)
    finally:
        for _, entries in functions:
            for entry in entries:
                if isinstance(entry, dict):
                    entry.pop("seeds", None)
                    entry.pop("seeds_seen", None)
                    entry.pop("module", None)


def _search(
    functions: list[tuple[Judged | None, list[dict[str, Any]]]],
    *,
    path: list[str],
    roots: list[str],
    cwd: Path,
    timeout: float,
) -> float:
    specs: list[dict[str, Any]] = []
    waiting: list[list[dict[str, Any]]] = []
    for function, entries in functions:
        jobs = [entry for entry in entries if pending(entry)]
        if not jobs:
            continue
        if function is None:
            for entry in jobs:
                entry["search"] = _held(
                    "the judge could not read the function before the tests ran"
                )
            continue
        specs.append(
            {
                "file": function.file,
                "start": function.start,
                "source": function.source,
                "fingerprint": function.fingerprint,
                "operators": None if function.operators is None else list(function.operators),
                "modules": module_names(function.file, path),
                "module": str(jobs[0].get("module") or ""),
                "jobs": [
                    {
                        key: entry.get(key)
                        for key in ("id", "line", "original", "mutated", "seeds", "seeds_seen")
                    }
                    for entry in jobs
                ],
            }
        )
        waiting.append(jobs)
    if not specs:
        return 0.0
    ran = run_over_channel(
        {"role": "search", "path": path, "roots": roots, "functions": specs},
        lambda channel: [sys.executable, "-m", ENTRY, channel],
        cwd=cwd,
        timeout=timeout,
    )
    answers: Any = None
    if ran.returncode is not None and ran.received.payload is not None:
        answers = ran.received.payload.get("functions")
    if not isinstance(answers, list) or len(answers) != len(waiting):
        why = (
            f"the clean witness search exceeded {timeout:g}s"
            if ran.returncode is None
            else f"the clean witness search gave no answer (exit status {ran.returncode}): {ran.tail()}"
        )
        answers = [{} for _ in waiting]
    else:
        why = "the clean witness search gave no record of it"
    for jobs, answer in zip(waiting, answers):
        for entry in jobs:
            record = answer.get(str(entry.get("id"))) if isinstance(answer, dict) else None
            entry["search"] = record if _well_formed(record) else _held(why)
    return ran.duration


def _held(why: str) -> dict[str, Any]:
    return {"calls": 0, "escapes": "", "problem": why[:300]}


def _well_formed(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    calls = record.get("calls")
    return (
        isinstance(calls, int)
        and not isinstance(calls, bool)
        and isinstance(record.get("escapes"), str)
        and isinstance(record.get("problem"), str)
    )
