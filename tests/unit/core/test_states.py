"""Unit tests of the quest state machine (``pytest_quest/states.py``), and a
Hypothesis state machine over a whole ratchet driven like the agent loop.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Event, Fact, FunctionFacts, Ratchet, State, Verdict
from pytest_quest.core.ratchet import merge_scan
from pytest_quest.core.states import (
    accept,
    apply_verdict,
    ensure_submittable,
    last_person_event,
    record_pass_facts,
    reopen,
)
from pytest_quest.engine.codec import quest_to_dict
from tests.support.profiles import examples
from tests.support.quests import make_quest

NOW = "2026-11-30T06:00:00Z"
LATER = "2026-11-30T07:00:00Z"
FACT = Fact(
    check="coverage.line",
    field="src/pkg/m.py:5",
    expected="executed by a passing test",
    actual="never executed",
    message="line 5 not covered",
)
FAIL = GateResult(Verdict.FAIL, [FACT], "3-coverage")
PASS = GateResult(Verdict.PASS, [], "pass")
REVIEW_FACT = Fact("identity.changed", "src/pkg/m.py:3", "code as issued", "changed code")
REVIEW = GateResult(Verdict.REVIEW, [REVIEW_FACT], "1-identity")


# -- apply_verdict ----------------------------------------------------------------


def test_fail_spends_a_try_keeps_todo_and_stores_the_facts() -> None:
    quest = make_quest()
    state = apply_verdict(quest, FAIL, max_tries=3, now=NOW)
    assert state is State.TODO
    assert (quest.state, quest.tries) == (State.TODO, 1)
    assert quest.facts == [FACT]
    assert quest.history == [Event(at=NOW, action="submit", verdict="FAIL", note="3-coverage")]
    assert quest.passed_at == ""


@pytest.mark.parametrize("max_tries", [1, 2, 3, 5])
def test_done_exactly_when_tries_reach_max_tries(max_tries: int) -> None:
    quest = make_quest()
    states = [apply_verdict(quest, FAIL, max_tries, NOW) for _ in range(max_tries)]
    assert states == [State.TODO] * (max_tries - 1) + [State.DONE]
    assert quest.tries == max_tries


def test_a_fail_beyond_a_lowered_max_tries_closes_the_quest() -> None:
    quest = make_quest(tries=4)
    assert apply_verdict(quest, FAIL, max_tries=3, now=NOW) is State.DONE
    assert quest.tries == 5


def test_pass_locks_and_clears_what_was_missing() -> None:
    quest = make_quest(tries=2, facts=[FACT])
    assert apply_verdict(quest, PASS, max_tries=3, now=NOW) is State.PASS
    assert quest.state is State.PASS
    assert quest.tries == 2
    assert quest.passed_at == NOW
    assert (quest.missing_lines, quest.missing_branches, quest.facts) == ([], [], [])
    assert quest.history[-1] == Event(at=NOW, action="submit", verdict="PASS", note="pass")


def test_pass_on_the_last_try_is_pass_not_done() -> None:
    quest = make_quest(tries=2)
    assert apply_verdict(quest, PASS, max_tries=3, now=NOW) is State.PASS


def test_review_spends_no_try_and_keeps_the_facts() -> None:
    quest = make_quest(tries=1)
    assert apply_verdict(quest, REVIEW, max_tries=3, now=NOW) is State.REVIEW
    assert (quest.state, quest.tries, quest.facts) == (State.REVIEW, 1, [REVIEW_FACT])
    assert quest.passed_at == ""


@pytest.mark.parametrize("state", [State.PASS, State.REVIEW, State.DONE])
@pytest.mark.parametrize("result", [PASS, FAIL, REVIEW])
def test_terminal_quests_refuse_every_verdict_and_change_nothing(
    state: State, result: GateResult
) -> None:
    quest = make_quest(state=state, tries=3 if state is State.DONE else 1)
    before = copy.deepcopy(quest)
    with pytest.raises(QuestUsageError, match=f"quest src/pkg/m.py::f is {state.value}"):
        apply_verdict(quest, result, max_tries=3, now=NOW)
    assert quest == before


def test_ensure_submittable_never_suggests_a_person_action() -> None:
    with pytest.raises(QuestUsageError) as done:
        ensure_submittable(make_quest(State.DONE, tries=3))
    assert str(done.value) == (
        "quest src/pkg/m.py::f is DONE and refuses resubmission; "
        "it is closed (no try left): nothing remains to do for it"
    )
    with pytest.raises(QuestUsageError) as passed:
        ensure_submittable(make_quest(State.PASS))
    assert str(passed.value) == "quest src/pkg/m.py::f is PASS and refuses resubmission"
    ensure_submittable(make_quest(State.TODO, tries=2))


def test_record_pass_facts_keeps_what_the_gate_measured() -> None:
    quest = make_quest()
    current = FunctionFacts(
        file="src/pkg/m.py",
        qualname="f",
        ordinal=1,
        start=3,
        first=3,
        last=6,
        fingerprint=quest.fingerprint,
        statements=4,
        branches=2,
        covering_tests=["tests/test_m.py::test_f"],
    )
    record_pass_facts(quest, current)
    assert (quest.statements, quest.branches) == (4, 2)
    assert quest.covering_tests == ["tests/test_m.py::test_f"]
    current.covering_tests.append("tests/test_m.py::test_g")
    assert quest.covering_tests == ["tests/test_m.py::test_f"]  # a copy, not an alias


# -- person actions: reopen, accept ------------------------------------------------------


@pytest.mark.parametrize("state", [State.REVIEW, State.DONE])
def test_reopen_puts_review_and_done_back_to_todo_with_tries_reset(state: State) -> None:
    quest = make_quest(state=state, tries=3)
    reopen(quest, by="Ada", now=LATER)
    assert (quest.state, quest.tries) == (State.TODO, 0)
    assert quest.fingerprint == "sha256:" + "0" * 32
    assert quest.history[-1] == Event(
        at=LATER, action="reopen", by="Ada", note=f"from {state.value}"
    )


def test_reopen_with_a_fingerprint_reissues_for_the_current_code() -> None:
    quest = make_quest(state=State.REVIEW)
    reopen(quest, by="Ada", now=LATER, fingerprint="sha256:" + "1" * 32)
    assert quest.fingerprint == "sha256:" + "1" * 32


@pytest.mark.parametrize("state", [State.TODO, State.PASS])
def test_reopen_refuses_todo_and_pass(state: State) -> None:
    quest = make_quest(state=state)
    before = copy.deepcopy(quest)
    with pytest.raises(QuestUsageError, match="only REVIEW and DONE quests can be reopened"):
        reopen(quest, by="Ada", now=LATER)
    assert quest == before


def test_reopen_refuses_a_todo_quest_issued_for_its_code_as_it_is() -> None:
    quest = make_quest(state=State.TODO)
    with pytest.raises(QuestUsageError, match="a TODO quest whose code changed since"):
        reopen(quest, by="Ada", now=LATER, fingerprint=quest.fingerprint)


def test_reopen_reissues_a_todo_quest_whose_code_changed_since() -> None:
    # Any submit of it would be REVIEW (identity.changed): a person re-issues it.
    quest = make_quest(state=State.TODO, tries=1)
    reopen(quest, by="Ada", now=LATER, fingerprint="sha256:" + "1" * 32)
    assert (quest.state, quest.tries, quest.fingerprint) == (State.TODO, 0, "sha256:" + "1" * 32)
    assert quest.history[-1].note == "from TODO"


def test_accept_settles_a_review_as_pass_recorded_with_who() -> None:
    quest = make_quest(state=State.REVIEW)
    accept(quest, by="Ada", now=LATER)
    assert quest.state is State.PASS
    assert quest.passed_at == LATER
    assert (quest.missing_lines, quest.missing_branches) == ([], [])
    assert quest.covering_tests == ["(accepted by a person)"]
    assert quest.history[-1] == Event(at=LATER, action="accept", by="Ada")


def test_accept_keeps_known_covering_tests() -> None:
    quest = make_quest(state=State.REVIEW, covering_tests=["tests/test_m.py::test_f"])
    accept(quest, by="Ada", now=LATER)
    assert quest.covering_tests == ["tests/test_m.py::test_f"]


@pytest.mark.parametrize("state", [State.TODO, State.PASS, State.DONE])
def test_accept_refuses_everything_but_review(state: State) -> None:
    quest = make_quest(state=state)
    before = copy.deepcopy(quest)
    with pytest.raises(QuestUsageError, match="only a REVIEW quest can be accepted"):
        accept(quest, by="Ada", now=LATER)
    assert quest == before


# -- the whole loop as a state machine ------------------------------------------------------


def function_facts(name: str, line: int, covered: bool, fingerprint: str = "fp") -> FunctionFacts:
    return FunctionFacts(
        file="src/pkg/m.py",
        qualname=name,
        ordinal=1,
        start=line,
        first=line,
        last=line + 3,
        fingerprint=f"sha256:{fingerprint}-{name}",
        statements=3,
        branches=2,
        missing_lines=[] if covered else [line + 2],
        missing_branches=[] if covered else [(line + 1, line + 2)],
        covering_tests=[f"tests/test_m.py::test_{name}"] if covered else [],
    )


VERDICTS = {
    Verdict.PASS: PASS,
    Verdict.FAIL: FAIL,
    Verdict.REVIEW: REVIEW,
}


class QuestLoop(RuleBasedStateMachine):
    """The ratchet as next/submit/rescan see it, with arbitrary gate verdicts.

    `next` and `submit` mirror what the commands do on the ratchet (pick the
    active quest or the next TODO; record a verdict and move on when the
    quest is settled); `rescan` merges a scan that finds new functions.
    """

    @initialize(
        max_tries=st.integers(min_value=1, max_value=4),
        covered=st.lists(st.booleans(), min_size=2, max_size=6),
    )
    def start(self, max_tries: int, covered: list[bool]) -> None:
        self.max_tries = max_tries
        self.ratchet = Ratchet()
        self.functions = [
            function_facts(f"f{index}", 10 * (index + 1), is_covered)
            for index, is_covered in enumerate(covered)
        ]
        merge_scan(self.ratchet, self.functions, [], {"run:branch": True}, {}, NOW)
        self.locked: dict[str, dict[str, Any]] = {}
        self.clock = 0
        self.record_passes()

    def now(self) -> str:
        self.clock += 1
        return f"2026-11-30T06:{self.clock // 60:02d}:{self.clock % 60:02d}Z"

    def record_passes(self) -> None:
        for qid, quest in self.ratchet.quests.items():
            if quest.state is State.PASS and qid not in self.locked:
                self.locked[qid] = quest_to_dict(quest)

    @rule()
    def next(self) -> None:
        remaining = self.ratchet.remaining
        active = self.ratchet.quests.get(self.ratchet.active or "")
        quest = active if active is not None and active.state is State.TODO else None
        quest = quest or self.ratchet.next_todo()
        self.ratchet.active = quest.id if quest else None
        if quest is None:
            assert remaining == 0
        assert self.ratchet.remaining == remaining

    @rule(index=st.integers(min_value=0, max_value=100), verdict=st.sampled_from(list(Verdict)))
    def submit(self, index: int, verdict: Verdict) -> None:
        ordered = self.ratchet.ordered()
        quest = ordered[index % len(ordered)]
        remaining = self.ratchet.remaining
        before = copy.deepcopy(quest)
        if quest.state.terminal:
            with pytest.raises(QuestUsageError):
                ensure_submittable(quest)
            with pytest.raises(QuestUsageError):
                apply_verdict(quest, VERDICTS[verdict], self.max_tries, self.now())
            assert quest == before
        else:
            state = apply_verdict(quest, VERDICTS[verdict], self.max_tries, self.now())
            expected = {
                Verdict.PASS: State.PASS,
                Verdict.REVIEW: State.REVIEW,
                Verdict.FAIL: State.DONE if before.tries + 1 >= self.max_tries else State.TODO,
            }[verdict]
            assert state is expected
            assert quest.tries == before.tries + (verdict is Verdict.FAIL)
            # As `submit` records it: an active TODO quest stays active.
            active = self.ratchet.quests.get(self.ratchet.active or "")
            if active is None or active.state.terminal:
                nxt = quest if quest.state is State.TODO else self.ratchet.next_todo()
                self.ratchet.active = nxt.id if nxt else None
        assert self.ratchet.remaining <= remaining
        self.record_passes()

    @rule(new=st.lists(st.booleans(), max_size=3), fully_covered_now=st.booleans())
    def rescan(self, new: list[bool], fully_covered_now: bool) -> None:
        # Existing functions come back, maybe fully covered now (that PASSes
        # nothing: only the gate does), maybe changed; new ones are added.
        remaining = self.ratchet.remaining
        base = len(self.functions)
        self.functions = [
            function_facts(f.qualname, f.first, fully_covered_now, fingerprint="changed")
            for f in self.functions
        ] + [
            function_facts(f"f{base + index}", 10 * (base + index + 1), is_covered)
            for index, is_covered in enumerate(new)
        ]
        states = {qid: quest.state for qid, quest in self.ratchet.quests.items()}
        report = merge_scan(self.ratchet, self.functions, [], {"run:branch": True}, {}, self.now())
        assert {qid: q.state for qid, q in self.ratchet.quests.items() if qid in states} == states
        assert report.removed == []
        assert self.ratchet.remaining == remaining + new.count(False)
        assert sorted(report.added) == sorted(
            f"src/pkg/m.py::f{base + i}" for i, covered in enumerate(new) if not covered
        )
        self.record_passes()

    @precondition(lambda self: hasattr(self, "ratchet"))
    @invariant()
    def pass_quests_never_change(self) -> None:
        for qid, snapshot in self.locked.items():
            quest = self.ratchet.quests[qid]
            assert quest.state is State.PASS
            assert quest_to_dict(quest) == snapshot

    @precondition(lambda self: hasattr(self, "ratchet"))
    @invariant()
    def done_exactly_when_tries_reach_max(self) -> None:
        for quest in self.ratchet.quests.values():
            assert (quest.state is State.DONE) == (quest.tries >= self.max_tries), quest

    @precondition(lambda self: hasattr(self, "ratchet"))
    @invariant()
    def remaining_is_the_todo_count_and_active_is_todo(self) -> None:
        todo = [q for q in self.ratchet.quests.values() if q.state is State.TODO]
        assert self.ratchet.remaining == len(todo)
        if self.ratchet.active is not None:
            assert self.ratchet.quests[self.ratchet.active].state is State.TODO


QuestLoop.TestCase.settings = settings(
    max_examples=examples(60), stateful_step_count=30, deadline=None
)
test_quest_loop = QuestLoop.TestCase


def test_a_resubmit_of_what_the_last_fail_judged_is_refused_naming_that_fail() -> None:
    from pytest_quest.core.states import kept_fail, unchanged_since_fail

    quest = make_quest(
        history=[
            Event(at="2026-01-01T00:00:00Z", action="submit", verdict="FAIL"),
            Event(at="2026-01-02T00:00:00Z", action="submit", verdict="FAIL"),
            Event(at="2026-01-03T00:00:00Z", action="next"),
        ]
    )
    kept_fail(quest, "sha256:judged")
    assert unchanged_since_fail(quest, "sha256:judged") == (
        "nothing changed since the last FAIL of src/pkg/m.py::f at 2026-01-02T00:00:00Z: its tests, "
        "the code under test and the configuration are as judged then; change the tests, then "
        "submit again (nothing was judged, no try spent)"
    )
    assert unchanged_since_fail(quest, "sha256:changed") is None


def test_a_kept_fail_without_a_fail_event_names_no_time() -> None:
    from pytest_quest.core.states import FAILED_DIGEST_KEY, unchanged_since_fail

    quest = make_quest(extra={FAILED_DIGEST_KEY: "d"})
    assert unchanged_since_fail(quest, "d") == (
        "nothing changed since the last FAIL of src/pkg/m.py::f: its tests, the code under test and "
        "the configuration are as judged then; change the tests, then submit again (nothing was "
        "judged, no try spent)"
    )


def test_a_settled_quest_is_never_refused_as_unchanged() -> None:
    from pytest_quest.core.states import FAILED_DIGEST_KEY, unchanged_since_fail

    for state in (State.PASS, State.REVIEW, State.DONE):
        assert unchanged_since_fail(make_quest(state, extra={FAILED_DIGEST_KEY: "d"}), "d") is None


def test_last_person_event_is_the_latest_of_its_action() -> None:
    first = Event(at="2026-01-01T00:00:00Z", action="exclude", by="ann", reason="one")
    other = Event(at="2026-01-02T00:00:00Z", action="reopen", by="bob")
    latest = Event(at="2026-01-03T00:00:00Z", action="exclude", by="cy", reason="two")
    quest = make_quest(history=[first, latest, other])
    assert last_person_event(quest, "exclude") is latest
    assert last_person_event(quest, "reopen") is other
    assert last_person_event(quest, "accept") is None
    assert last_person_event(make_quest(), "exclude") is None
