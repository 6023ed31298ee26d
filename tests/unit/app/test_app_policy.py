"""app/policy.py in-process: the recorded policy, the person's change, submit's refusal, weaker PASSes."""

from __future__ import annotations

import pytest
from app_calc import CLAMP, SIGN, CalcProject

from pytest_quest.app.policy import record_policy_change
from pytest_quest.app.submit import claim_quest
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Ratchet, State
from pytest_quest.core.seal import seal_facts
from pytest_quest.core.view import weaker_passes


def test_scan_records_the_policy_and_seals_it(calc: CalcProject) -> None:
    ratchet = calc.context("status").store.load()
    assert ratchet.policy is not None
    assert ratchet.policy.sources == ("src/pkg",)
    assert ratchet.policy.timeout_floor == 60.0
    quest = ratchet.quests[CLAMP]
    assert quest.config_digest and quest.config_digest.startswith("cfg:")
    assert seal_facts(quest) == []


def test_a_person_change_is_recorded_and_reseals(calc: CalcProject) -> None:
    ctx = calc.context("policy")
    before = ctx.store.load().quests[CLAMP].config_digest
    old, new, ratchet = record_policy_change(
        ctx, [("max_tries", "5")], by="Ada", now="2026-12-01T00:00:00Z"
    )
    assert (old.max_tries, new.max_tries) == (3, 5)
    assert ratchet.policy_history == [
        {"at": "2026-12-01T00:00:00Z", "by": "Ada", "key": "max_tries", "old": "3", "new": "5"}
    ]
    quest = ctx.store.load().quests[CLAMP]
    assert quest.config_digest != before
    assert seal_facts(quest) == []  # re-sealed by the person's change


def test_submit_refuses_more_tries_than_recorded(calc: CalcProject) -> None:
    calc.context("next")
    with pytest.raises(QuestUsageError, match=r"max_tries=3.*--quest-policy"):
        claim_quest(calc.context("submit", quest_id=SIGN, max_tries=4))


def test_weaker_passes_lists_a_pass_under_a_weaker_policy(calc: CalcProject) -> None:
    ctx = calc.context("policy")

    def passed(ratchet: Ratchet) -> Ratchet:
        quest = ratchet.quests[CLAMP]
        quest.state = State.PASS
        quest.passed_at = "2026-12-01T00:00:00Z"
        quest.missing_lines, quest.missing_branches = [], []
        quest.covering_tests = ["tests/t.py::test_clamp"]
        assert ratchet.policy is not None
        quest.passed_policy = ratchet.policy.compact()
        return ratchet

    ctx.store.update(passed)
    assert weaker_passes(ctx.store.load()) == []
    record_policy_change(ctx, [("max_tries", "2")], by="Ada", now="2026-12-01T00:00:01Z")
    found = weaker_passes(ctx.store.load())
    # The scan's PASS baseline (double) recorded its policy too.
    assert [(item["id"], item["weaker"]) for item in found] == [
        ("src/pkg/calc.py::double", ["max_tries"]),
        (CLAMP, ["max_tries"]),
    ]
