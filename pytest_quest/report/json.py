"""What a quest command says: `Output`, the JSON form of a quest, and the versioned envelope."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_quest.core.model import JSON_SCHEMA, Quest, Ratchet, State
from pytest_quest.report import text

#: Covering tests a quest's full JSON (`next`, `submit`) names; `status` and `export` name them all.
COVERING_SHOWN = 10

# The rules a quest's JSON needs (its dispute, its last exclusion, its example) are imported
# by `quest_json`: `status` drawing its kept view shows no quest's JSON (start-up time).


@dataclass
class Output:
    """What a command says: a JSON object and its text rendering, and the exit status.

    `stderr` holds lines for stderr whatever the format (GitHub workflow
    commands while stdout carries the JSON object).
    """

    data: dict[str, Any]
    lines: list[str] = field(default_factory=list)
    exitcode: int = 0
    stderr: list[str] = field(default_factory=list)


def quest_json(
    quest: Quest,
    ratchet: Ratchet,
    *,
    max_tries: int,
    rootdir: Path,
    full: bool = True,
    recorded: Callable[[], set[str]] | None = None,
) -> dict[str, Any]:
    """One quest as the JSON output shows it; `full` adds its marked source and an example test."""
    from pytest_quest.core.dispute import is_dispute
    from pytest_quest.core.states import last_person_event
    from pytest_quest.engine.examples import example_for

    data: dict[str, Any] = {
        "id": quest.id,
        "file": quest.file,
        "qualname": quest.qualname,
        "lines": [quest.first, quest.last],
        "state": quest.state.value,
        "tries": quest.tries,
        "max_tries": max_tries,
        "missing_lines": list(quest.missing_lines),
        "missing_branches": [list(arc) for arc in quest.missing_branches],
        "facts": [fact.to_dict() for fact in quest.facts],
        "statements": quest.statements,
        "branches": quest.branches,
        "covering_tests": list(quest.covering_tests),
        "covering_tests_total": len(quest.covering_tests),
        "issued_at": quest.issued_at,
        "passed_at": quest.passed_at,
        # As JSON asked for it: its answer is JSON too.
        "submit": text.submit_command(quest.id, json=True),
    }
    extra = quest.extra_record()
    if extra:
        data["extra"] = extra
    if quest.unwitnessed:
        # Surviving mutants no call told apart: not held against the tests (docs/gate.md).
        data["unwitnessed"] = list(quest.unwitnessed)
    if is_dispute(quest):
        data["dispute"] = True  # a REVIEW that waits on a disputed mutant
    if quest.state is State.EXCLUDED:
        event = last_person_event(quest, "exclude")
        data["excluded"] = {
            "by": event.by if event else "",
            "at": event.at if event else "",
            "reason": event.reason if event else "",
            "fingerprint": event.fingerprint if event else "",
        }
    if full:
        # An agent reads one quest: a few names show what runs the function, the count the rest.
        data["covering_tests"] = data["covering_tests"][:COVERING_SHOWN]
        data["submit_args"] = [*text.submit_args(quest.id), *text.JSON_FORMAT]
        data["facts_from"] = facts_from(quest, ratchet)
        data["source"] = text.source_with_marks(quest, rootdir)
        data["example"] = example_for(quest, ratchet, rootdir, recorded=recorded)
    return data


def facts_from(quest: Quest, ratchet: Ratchet) -> dict[str, str]:
    """Where the quest's facts come from (the last scan or submit), when, and how far to trust them."""
    from pytest_quest.core.states import facts_origin

    kind, at = facts_origin(quest, ratchet)
    if quest.state is not State.TODO:
        note = ""
    elif kind == "scan" and not quest.facts:
        note = (
            "the last scan found nothing missing: tests since then cover it; "
            "submit, and the gate judges"
        )
    else:
        note = (
            f"from the {kind} of {at}: tests written since then are not counted here "
            "(`pytest --quest next` measures them)"
        )
    return {"kind": kind, "at": at, "note": note}


def envelope(command: str | None, data: dict[str, Any]) -> dict[str, Any]:
    """`data` with the schema version and the command first: the one object on stdout."""
    return {"schema": JSON_SCHEMA, "command": command, **data}


def error_output(message: str, exitcode: int) -> Output:
    """A command that stopped with `message` (a usage error)."""
    return Output({"error": message}, [f"ERROR: {message}"], exitcode)


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
