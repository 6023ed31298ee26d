"""What status lists of a quest: its unwitnessed survivors."""

from __future__ import annotations

from typing import Any

from pytest_quest.core.model import Quest, State
from pytest_quest.core.view import unwitnessed_lines


def _quest(unwitnessed: list[Any] | None) -> Quest:
    return Quest(
        id="src/m.py::f",
        file="src/m.py",
        qualname="f",
        first=3,
        last=9,
        fingerprint="sha256:x",
        state=State.PASS,
        unwitnessed=unwitnessed,
    )


def test_a_quest_without_unwitnessed_survivors_is_its_heading_alone() -> None:
    assert unwitnessed_lines(_quest(None)) == ["  src/m.py::f  (src/m.py:3-9, PASS)"]
    assert unwitnessed_lines(_quest([])) == ["  src/m.py::f  (src/m.py:3-9, PASS)"]


def test_each_survivor_is_one_line_and_what_is_not_a_record_is_skipped() -> None:
    survivors: list[Any] = [
        {"line": 5, "original": "a < b", "mutated": "a <= b", "operator": "compare", "id": "m1"},
        "not a record",
        {},
    ]
    assert unwitnessed_lines(_quest(survivors)) == [
        "  src/m.py::f  (src/m.py:3-9, PASS)",
        "    src/m.py:5: `a < b` -> `a <= b` (operator compare, mutant m1)",
        "    src/m.py:?: `` -> `` (operator , mutant )",
    ]
