"""Model objects with everything filled in, for unit tests to change one field of."""

from __future__ import annotations

import json
from typing import Any

from pytest_quest.core.model import Quest, State


def make_quest(state: State = State.TODO, tries: int = 0, **changes: Any) -> Quest:
    values: dict[str, Any] = {
        "id": "src/pkg/m.py::f",
        "file": "src/pkg/m.py",
        "qualname": "f",
        "first": 3,
        "last": 6,
        "fingerprint": "sha256:" + "0" * 32,
        "state": state,
        "tries": tries,
        "statements": 3,
        "branches": 2,
        "missing_lines": [5],
        "missing_branches": [(4, 5)],
    }
    values.update(changes)
    return Quest(**values)


def double_pass(fingerprint: str) -> Quest:
    """The PASS baseline quest of `double` in tests.support.projects.CALC (lines 1-2)."""
    return Quest(
        id="src/pkg/calc.py::double",
        file="src/pkg/calc.py",
        qualname="double",
        first=1,
        last=2,
        fingerprint=fingerprint,
        state=State.PASS,
        statements=1,
        covering_tests=["tests/test_calc.py::test_double"],
        issued_at="2026-01-01T00:00:00Z",
        passed_at="2026-01-01T00:00:00Z",
        baseline=True,
    )


def ratchet_view(text: str | bytes) -> dict[str, Any]:
    """A ratchet file's content as version 1 laid it out: every field, covering tests by name.

    Version 2 leaves defaults out and interns test names (engine/layout.py);
    tests read and hand-edit this view, and a file written from it (schema 1)
    is read back through the migration.
    """
    from pytest_quest.engine.codec import dumps_v1, loads

    view: dict[str, Any] = json.loads(dumps_v1(loads(text)))
    return view


def without_begun_marks(text: str | bytes) -> dict[str, Any]:
    """`ratchet_view` less each quest's ``extra.submit_begun``: the mark a submit writes
    before its run (core/environment.py), the one thing an interrupted submit leaves."""
    from pytest_quest.core.environment import BEGUN_KEY

    view = ratchet_view(text)
    for quest in view["quests"].values():
        extra = quest.get("extra") or {}
        extra.pop(BEGUN_KEY, None)
        if "extra" in quest and not extra:
            del quest["extra"]
    return view
