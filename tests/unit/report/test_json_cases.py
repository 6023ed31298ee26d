"""A quest's JSON for a disputed REVIEW with unwitnessed survivors, and for a plain REVIEW."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.core.model import Fact, Quest, Ratchet, State
from pytest_quest.report.json import quest_json

SURVIVOR = {
    "id": "m1",
    "line": 2,
    "operator": "return.changed",
    "original": "return 1",
    "mutated": "return 2",
}


def test_a_disputed_review_says_so_and_lists_its_unwitnessed_survivors() -> None:
    quest = Quest(
        id="m.py::f",
        file="m.py",
        qualname="f",
        first=1,
        last=2,
        fingerprint="x",
        state=State.REVIEW,
        facts=[Fact("dispute.equivalent", "m.py:2", "a person decides", "1 test passes")],
        unwitnessed=[SURVIVOR],
    )
    shown = quest_json(
        quest, Ratchet(quests={quest.id: quest}), max_tries=3, rootdir=Path("/nowhere"), full=False
    )
    assert shown == {
        "id": "m.py::f",
        "file": "m.py",
        "qualname": "f",
        "lines": [1, 2],
        "state": "REVIEW",
        "tries": 0,
        "max_tries": 3,
        "missing_lines": [],
        "missing_branches": [],
        "facts": [
            {
                "check": "dispute.equivalent",
                "field": "m.py:2",
                "expected": "a person decides",
                "actual": "1 test passes",
            }
        ],
        "statements": 0,
        "branches": 0,
        "covering_tests": [],
        "covering_tests_total": 0,
        "issued_at": "",
        "passed_at": "",
        "submit": "pytest --quest submit --quest-id m.py::f --quest-format json",
        "extra": {"unwitnessed": [SURVIVOR]},
        "unwitnessed": [SURVIVOR],
        "dispute": True,
    }
    assert shown["unwitnessed"] is not quest.unwitnessed


def test_a_review_for_another_reason_is_no_dispute_and_has_no_survivors() -> None:
    quest = Quest(
        id="m.py::g",
        file="m.py",
        qualname="g",
        first=4,
        last=5,
        fingerprint="x",
        state=State.REVIEW,
        tries=2,
        facts=[Fact("environment", "m.py::g", "the test run completes", "timed out")],
        unwitnessed=[],
    )
    shown = quest_json(
        quest, Ratchet(quests={quest.id: quest}), max_tries=5, rootdir=Path("/nowhere"), full=False
    )
    assert "dispute" not in shown
    assert "unwitnessed" not in shown
    assert shown["extra"] == {"unwitnessed": []}
    assert (shown["tries"], shown["max_tries"], shown["lines"]) == (2, 5, [4, 5])
