"""person_actions_since: the person actions in a ratchet that its base does not hold."""

from __future__ import annotations

import copy

from pytest_quest.core.model import Event, Quest, Ratchet, State
from pytest_quest.core.person_log import PersonAction, person_actions_since


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


def test_only_person_actions_new_since_the_base_are_listed_oldest_first():
    base = Ratchet(quests={"a.py::f": quest("a.py::f", SUBMIT, EXCLUDE)})
    now = copy.deepcopy(base)
    now.quests["a.py::f"].history.append(REOPEN)
    now.quests["b.py::g"] = quest("b.py::g", SUBMIT, ACCEPT)
    listed = person_actions_since(now, base)
    assert listed == [
        PersonAction("b.py::g", "accept", "Bob", ACCEPT.at, "looked"),
        PersonAction("a.py::f", "reopen", "Ada", REOPEN.at, "alive again"),
    ]
    assert listed[1].to_dict() == {
        "id": "a.py::f", "action": "reopen", "by": "Ada", "at": REOPEN.at,
        "reason": "alive again", "fingerprint": "",
    }  # fmt: skip
    assert listed[0].text() == f"accept b.py::g by Bob at {ACCEPT.at}: looked"


def test_without_a_base_every_person_action_is_new():
    now = Ratchet(quests={"a.py::f": quest("a.py::f", SUBMIT, EXCLUDE, REOPEN)})
    assert [a.action for a in person_actions_since(now, None)] == ["exclude", "reopen"]
    assert person_actions_since(now, now) == []


def test_the_same_event_twice_counts_once_more_than_the_base_holds():
    base = Ratchet(quests={"a.py::f": quest("a.py::f", EXCLUDE)})
    now = Ratchet(quests={"a.py::f": quest("a.py::f", EXCLUDE, EXCLUDE)})
    assert [a.action for a in person_actions_since(now, base)] == ["exclude"]


def test_a_rewritten_event_is_new():
    base = Ratchet(quests={"a.py::f": quest("a.py::f", EXCLUDE)})
    now = copy.deepcopy(base)
    now.quests["a.py::f"].history[0].reason = "another reason"
    assert [a.reason for a in person_actions_since(now, base)] == ["another reason"]
