"""Which PASS quests were judged under a weaker policy than the ratchet's now."""

from __future__ import annotations

import dataclasses

from pytest_quest.core.model import Quest, Ratchet, State
from pytest_quest.core.policy import GatePolicy
from pytest_quest.core.view import weaker_passes

CURRENT = GatePolicy()
MORE_TRIES = dataclasses.replace(CURRENT, max_tries=5).compact()


def _quest(name: str, first: int, state: State, policy: str | None) -> Quest:
    return Quest(
        id=f"src/m.py::{name}",
        file="src/m.py",
        qualname=name,
        first=first,
        last=first + 3,
        fingerprint="sha256:x",
        state=state,
        passed_policy=policy,
    )


def _ratchet(policy: GatePolicy | None, *quests: Quest) -> Ratchet:
    return Ratchet(quests={q.id: q for q in quests}, policy=policy)


def test_no_recorded_policy_lists_nothing() -> None:
    assert weaker_passes(_ratchet(None, _quest("f", 3, State.PASS, MORE_TRIES))) == []


def test_a_pass_under_the_same_policy_is_not_listed() -> None:
    assert weaker_passes(_ratchet(CURRENT, _quest("f", 3, State.PASS, CURRENT.compact()))) == []


def test_weaker_and_unreadable_passes_are_listed_in_file_order() -> None:
    ratchet = _ratchet(
        CURRENT,
        _quest("late", 40, State.PASS, MORE_TRIES),
        _quest("odd", 20, State.PASS, "not a policy"),
        _quest("early", 3, State.PASS, MORE_TRIES),
        _quest("odd_too", 30, State.PASS, "not a policy"),
        _quest("todo", 10, State.TODO, MORE_TRIES),
        _quest("unknown", 12, State.PASS, ""),
        _quest("same", 50, State.PASS, CURRENT.compact()),
    )
    assert weaker_passes(ratchet) == [
        {"id": "src/m.py::early", "weaker": ["max_tries"], "policy": MORE_TRIES},
        {"id": "src/m.py::odd", "weaker": ["unreadable"], "policy": "not a policy"},
        {"id": "src/m.py::odd_too", "weaker": ["unreadable"], "policy": "not a policy"},
        {"id": "src/m.py::late", "weaker": ["max_tries"], "policy": MORE_TRIES},
    ]
