"""Fresh facts: a rescan keeps a TODO quest's last gate facts, and the
facts a quest shows say where they come from."""

from __future__ import annotations

from typing import Any

from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Event, Fact, FunctionFacts, Ratchet, State, Verdict
from pytest_quest.core.ratchet import merge_scan
from pytest_quest.core.states import GATE_FACTS_KEY, apply_verdict, facts_origin
from tests.support import quests

SCAN1 = "2026-12-01T09:00:00Z"
SUBMIT = "2026-12-01T09:30:00Z"
SCAN2 = "2026-12-01T10:00:00Z"
QID = "src/pkg/m.py::f"
FAILED = Fact(
    "test.failed",
    "tests/t.py::test_f",
    "the test passes",
    "failed: ValueError",
    "failed: ValueError",
)
LINE = Fact(
    "coverage.line",
    "src/pkg/m.py:5",
    "executed by a passing test",
    "never executed",
    "line 5 not covered",
)


def function(**changes: Any) -> FunctionFacts:
    values: dict[str, Any] = {
        "file": "src/pkg/m.py",
        "qualname": "f",
        "ordinal": 1,
        "start": 3,
        "first": 3,
        "last": 6,
        "fingerprint": "sha256:" + "0" * 32,
        "statements": 3,
        "branches": 2,
    }
    values.update(changes)
    return FunctionFacts(**values)


def failed_once() -> Ratchet:
    quest = quests.make_quest(tries=1, facts=[FAILED, LINE])
    quest.history.append(Event(at=SUBMIT, action="submit", verdict="FAIL", note="3-coverage"))
    return Ratchet(quests={QID: quest}, scanned_at=SCAN1)


def test_origin_is_the_last_submit_after_the_scan_else_the_scan() -> None:
    ratchet = failed_once()
    assert facts_origin(ratchet.quests[QID], ratchet) == ("submit", SUBMIT)
    ratchet.scanned_at = SCAN2
    assert facts_origin(ratchet.quests[QID], ratchet) == ("scan", SCAN2)


def test_a_rescan_keeps_the_last_gate_facts_when_they_differ() -> None:
    ratchet = failed_once()
    merge_scan(ratchet, [function()], [], {}, {}, SCAN2)  # now fully covered by other tests
    quest = ratchet.quests[QID]
    assert quest.state is State.TODO and quest.tries == 1
    assert quest.facts == []
    kept = quest.extra[GATE_FACTS_KEY]
    assert kept["at"] == SUBMIT and kept["verdict"] == "FAIL"
    assert [Fact.from_dict(f) for f in kept["facts"]] == [FAILED, LINE]
    # A second rescan keeps them: they are still the gate's last word.
    merge_scan(ratchet, [function(missing_lines=[5])], [], {}, {}, "2026-12-01T11:00:00Z")
    assert ratchet.quests[QID].extra[GATE_FACTS_KEY]["at"] == SUBMIT


def test_a_rescan_that_finds_the_same_facts_keeps_no_copy() -> None:
    ratchet = failed_once()
    ratchet.quests[QID].facts = [LINE]
    merge_scan(ratchet, [function(missing_lines=[5])], [], {}, {}, SCAN2)
    assert GATE_FACTS_KEY not in ratchet.quests[QID].extra


def test_a_new_verdict_replaces_the_kept_gate_facts() -> None:
    ratchet = failed_once()
    merge_scan(ratchet, [function()], [], {}, {}, SCAN2)
    quest = ratchet.quests[QID]
    apply_verdict(quest, GateResult(Verdict.FAIL, [LINE], "3-coverage"), 3, "2026-12-01T12:00:00Z")
    assert GATE_FACTS_KEY not in quest.extra


def test_a_rescan_in_the_same_second_as_the_submit_is_still_the_scan() -> None:
    ratchet = failed_once()
    merge_scan(ratchet, [function()], [], {}, {}, SUBMIT)
    assert facts_origin(ratchet.quests[QID], ratchet) == ("scan", SUBMIT)
    assert ratchet.quests[QID].extra[GATE_FACTS_KEY]["at"] == SUBMIT
    apply_verdict(ratchet.quests[QID], GateResult(Verdict.FAIL, [LINE], "3-coverage"), 3, SUBMIT)
    assert facts_origin(ratchet.quests[QID], ratchet) == ("submit", SUBMIT)
