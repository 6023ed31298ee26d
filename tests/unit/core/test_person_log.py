"""person_actions_since (core/rejudge.py) with the reason and fingerprint a person action records."""

from __future__ import annotations

import copy

from pytest_quest.core.model import Event, Quest, Ratchet, State
from pytest_quest.core.person_log import person_actions_since


def quest(qid: str, *events: Event) -> Quest:
    file, name = qid.split("::")
    return Quest(
        id=qid, file=file, qualname=name, first=1, last=2, fingerprint="f",
        state=State.TODO, history=list(events),
    )  # fmt: skip


SUBMIT = Event(at="2026-01-01T00:00:00Z", action="submit", verdict="FAIL")
EXCLUDE = Event(
    at="2026-01-02T00:00:00Z", action="exclude", by="Ada", note="from TODO",
    reason="dead code", fingerprint="sha256:1",
)  # fmt: skip
REOPEN = Event(at="2026-01-03T00:00:00Z", action="reopen", by="Ada", reason="alive again")
ACCEPT = Event(at="2026-01-01T12:00:00Z", action="accept", by="Bob", reason="looked")


def test_new_person_actions_carry_reason_and_fingerprint_oldest_first() -> None:
    base = Ratchet(quests={"a.py::f": quest("a.py::f", SUBMIT)})
    now = copy.deepcopy(base)
    now.quests["a.py::f"].history += [EXCLUDE, REOPEN]
    now.quests["b.py::g"] = quest("b.py::g", SUBMIT, ACCEPT)
    listed = person_actions_since(now, base)
    assert [(a.quest_id, a.action, a.reason) for a in listed] == [
        ("b.py::g", "accept", "looked"),
        ("a.py::f", "exclude", "dead code"),
        ("a.py::f", "reopen", "alive again"),
    ]
    assert listed[1].to_dict() == {
        "id": "a.py::f", "action": "exclude", "by": "Ada", "at": EXCLUDE.at,
        "reason": "dead code", "fingerprint": "sha256:1",
    }  # fmt: skip
    assert listed[1].text() == f"exclude a.py::f by Ada at {EXCLUDE.at}: dead code"


def test_the_same_event_twice_counts_once_more_than_the_base_holds() -> None:
    base = Ratchet(quests={"a.py::f": quest("a.py::f", EXCLUDE)})
    now = Ratchet(quests={"a.py::f": quest("a.py::f", EXCLUDE, EXCLUDE)})
    assert [a.action for a in person_actions_since(now, base)] == ["exclude"]
    assert person_actions_since(now, now) == []


def test_a_rewritten_reason_is_a_new_action() -> None:
    base = Ratchet(quests={"a.py::f": quest("a.py::f", EXCLUDE)})
    now = copy.deepcopy(base)
    now.quests["a.py::f"].history[0].reason = "another reason"
    assert [a.reason for a in person_actions_since(now, base)] == ["another reason"]
