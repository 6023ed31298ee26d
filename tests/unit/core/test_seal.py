"""PASS seals: how a quest became PASS, and the PASS entries nothing of pytest-quest wrote."""

from __future__ import annotations

from dataclasses import replace

from pytest_quest.core.model import Fact, Quest, Ratchet, State, Verdict
from pytest_quest.core.seal import (
    PASS_SEAL_KEY,
    forged_passes,
    issued_seal,
    mark_seals,
    seal_facts,
    seal_pass,
)
from pytest_quest.core.states import accept
from tests.support.quests import double_pass

TODO_ID = "src/pkg/calc.py::sign"


def todo() -> Quest:
    return Quest(
        id=TODO_ID, file="src/pkg/calc.py", qualname="sign", first=5, last=8, fingerprint="fp-s"
    )


def ratchet(*quests: Quest) -> Ratchet:
    return Ratchet(quests={quest.id: quest for quest in quests})


def test_a_file_from_before_seals_has_nothing_forged_and_its_first_write_seals_it() -> None:
    old = ratchet(double_pass("fp-d"), todo())
    assert forged_passes(old) == {}
    assert mark_seals(old, legacy=True) is True
    assert old.quests["src/pkg/calc.py::double"].extra[PASS_SEAL_KEY].startswith("legacy:")
    assert old.quests[TODO_ID].extra[PASS_SEAL_KEY] == ""
    assert forged_passes(old) == {}
    assert mark_seals(old, legacy=False) is False  # nothing more to mark


def test_a_todo_flipped_to_pass_its_seal_taken_out_or_an_edited_pass_are_forged() -> None:
    sealed = ratchet(double_pass("fp-d"), todo())
    mark_seals(sealed, legacy=True)
    flipped = sealed.quests[TODO_ID]
    flipped.state, flipped.covering_tests = State.PASS, ["tests/t.py::test_no_assert"]
    assert forged_passes(sealed) == {
        TODO_ID: "PASS where its seal says it never passed (edited from TODO)"
    }
    del flipped.extra[PASS_SEAL_KEY]
    assert "no seal" in forged_passes(sealed)[TODO_ID]
    flipped.extra[PASS_SEAL_KEY] = sealed.quests["src/pkg/calc.py::double"].extra[PASS_SEAL_KEY]
    assert "differs from its seal" in forged_passes(sealed)[TODO_ID]
    double = sealed.quests["src/pkg/calc.py::double"]
    sealed.quests[double.id] = replace(double, covering_tests=["tests/t.py::test_other"])
    assert "differs from its seal" in forged_passes(sealed)[double.id]


def test_the_three_ways_to_pass_are_sealed_and_a_move_keeps_the_seal() -> None:
    review = replace(todo(), state=State.REVIEW)
    sealed = ratchet(double_pass("fp-d"), review)
    mark_seals(sealed, legacy=True)
    accept(review, "a person", "2026-02-01T00:00:00Z", reason="looked")
    assert review.extra[PASS_SEAL_KEY].startswith("accept:")
    scanned = double_pass("fp-e")
    seal_pass(scanned, "scan")
    scanned.first, scanned.last = 40, 41  # a rescan moves it: not what a PASS claims
    sealed.quests[scanned.id] = scanned
    assert forged_passes(sealed) == {}


def test_seal_facts_nothing_when_the_seal_matches() -> None:
    quest = Quest(id="a.py::f", file="a.py", qualname="f", first=4, last=5, fingerprint="sha256:1")
    quest.issued_seal = issued_seal(quest)
    assert seal_facts(quest) == []


def test_seal_facts_review_without_a_seal_or_with_a_changed_one() -> None:
    quest = Quest(id="a.py::f", file="a.py", qualname="f", first=4, last=5, fingerprint="sha256:1")
    message = (
        "the ratchet entry of a.py::f was edited by hand since it was issued "
        "(fingerprint or excluded lines); a person must review it"
    )
    for recorded, actual in [
        (None, "no seal"),
        ("", "no seal"),
        ("sha256:other", "fingerprint or excluded lines differ from the seal"),
    ]:
        quest.issued_seal = recorded
        assert seal_facts(quest) == [
            (
                Verdict.REVIEW,
                Fact(
                    check="guard.seal",
                    field="a.py:4",
                    expected="the quest's baseline as issued by the scan (sealed)",
                    actual=actual,
                    message=message,
                ),
            )
        ]
