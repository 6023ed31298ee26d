"""PASS seals: a PASS entry no pytest-quest transition wrote is found, with why."""

from __future__ import annotations

from typing import Any

from pytest_quest.core.model import Quest, Ratchet, State
from pytest_quest.core.seal import PASS_SEAL_KEY, forged_passes, pass_seal, seal_pass
from tests.support.quests import make_quest


def _quest(name: str, state: State, **changes: Any) -> Quest:
    return make_quest(state, id=f"src/pkg/m.py::{name}", qualname=name, **changes)


def test_a_file_without_any_seal_has_no_forged_pass() -> None:
    ratchet = Ratchet(quests={"src/pkg/m.py::a": _quest("a", State.PASS)})
    assert forged_passes(ratchet) == {}


def test_each_pass_is_checked_against_its_seal_in_id_order() -> None:
    sealed = _quest("a", State.PASS, passed_at="2026-01-01T00:00:00Z")
    seal_pass(sealed, "submit")
    edited = _quest("b", State.PASS, passed_at="2026-01-01T00:00:00Z")
    seal_pass(edited, "scan")
    edited.covering_tests = ["tests/t.py::test_new"]
    other_way = _quest("c", State.PASS)
    other_way.extra[PASS_SEAL_KEY] = "forged:" + pass_seal(other_way, "submit").partition(":")[2]
    from_todo = _quest("d", State.PASS, extra={PASS_SEAL_KEY: ""})
    unsealed = _quest("e", State.PASS)
    not_pass = _quest("f", State.TODO, extra={PASS_SEAL_KEY: ""})
    accepted = _quest("g", State.PASS)
    seal_pass(accepted, "accept")
    quests = [unsealed, not_pass, from_todo, other_way, edited, sealed, accepted]
    ratchet = Ratchet(quests={quest.id: quest for quest in quests})
    found = forged_passes(ratchet)
    assert found == {
        "src/pkg/m.py::b": "PASS entry differs from its seal (edited since it passed)",
        "src/pkg/m.py::c": "PASS entry differs from its seal (edited since it passed)",
        "src/pkg/m.py::d": "PASS where its seal says it never passed (edited from TODO)",
        "src/pkg/m.py::e": "PASS with no seal: not written by a judged submit, a scan or a person",
    }
    assert list(found) == sorted(found)
