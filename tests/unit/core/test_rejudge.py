"""The pure selection of what CI re-judges against a base ratchet (core/rejudge.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State
from pytest_quest.core.person_log import person_actions_since
from pytest_quest.core.rejudge import (
    ABSENT,
    CHANGED,
    NEW,
    Selected,
    rejudge_fact,
    select_rejudge,
    trusted_entry,
)
from pytest_quest.core.seal import issued_seal, seal_issued


def quest(qid: str = "src/a.py::f", state: State = State.TODO, **kw: Any) -> Quest:
    file, _, qualname = qid.partition("::")
    made = Quest(
        id=qid,
        file=file,
        qualname=qualname,
        first=10,
        last=20,
        fingerprint="sha256:f0",
        state=state,
        statements=5,
        branches=2,
        issued_at="2026-01-01T00:00:00Z",
        **kw,
    )
    seal_issued(made)
    return made


def passed(made: Quest) -> Quest:
    made.state = State.PASS
    made.passed_at = "2026-01-02T00:00:00Z"
    made.covering_tests = ["tests/test_a.py::test_f"]
    return made


def ratchet(*quests: Quest) -> Ratchet:
    return Ratchet(quests={q.id: q for q in quests})


def selected(base: Ratchet, now: Ratchet) -> dict[str, str]:
    return {s.quest.id: s.reason for s in select_rejudge(base, now)}


def test_a_todo_become_pass_is_new() -> None:
    base = ratchet(quest())
    assert selected(base, ratchet(passed(quest()))) == {"src/a.py::f": NEW}


def test_review_or_done_become_pass_is_new() -> None:
    for state in (State.REVIEW, State.DONE):
        base = ratchet(quest(state=state))
        assert selected(base, ratchet(passed(quest()))) == {"src/a.py::f": NEW}


def test_a_pass_absent_from_the_base_is_new_code() -> None:
    assert selected(Ratchet(), ratchet(passed(quest()))) == {"src/a.py::f": ABSENT}


def test_an_unchanged_pass_is_not_rejudged() -> None:
    base = ratchet(passed(quest()), quest("src/a.py::g"))
    assert selected(base, copy.deepcopy(base)) == {}


def test_quests_that_are_not_pass_now_are_not_rejudged() -> None:
    base = ratchet(passed(quest()))
    now = ratchet(quest(state=State.REVIEW), quest("src/b.py::h"))
    assert selected(base, now) == {}


def test_every_judged_field_of_a_pass_entry_counts() -> None:
    base = ratchet(passed(quest()))
    edits: dict[str, Callable[[Quest], object]] = {
        "fingerprint": lambda q: setattr(q, "fingerprint", "sha256:other"),
        "seal": lambda q: setattr(q, "issued_seal", "sha256:resealed"),
        "excluded": lambda q: setattr(q, "excluded_lines", [12]),
        "passed_at": lambda q: setattr(q, "passed_at", "2026-02-02T00:00:00Z"),
        "baseline": lambda q: setattr(q, "baseline", True),
        "history": lambda q: q.history.append(Event(at="x", action="accept", by="me")),
        "statements": lambda q: setattr(q, "statements", 1),
        "covering_tests": lambda q: setattr(q, "covering_tests", ["tests/t.py::other"]),
        "issued_at": lambda q: setattr(q, "issued_at", "2030-01-01T00:00:00Z"),
        "extra": lambda q: q.extra.update(policy={"mutants": "off"}),
    }
    for name, edit in edits.items():
        now = copy.deepcopy(base)
        edit(now.quests["src/a.py::f"])
        assert selected(base, now) == {"src/a.py::f": CHANGED}, name


def test_a_moved_pass_and_its_timings_are_not_a_change() -> None:
    entry = passed(quest(excluded_lines=[13]))
    base = ratchet(entry)
    now = copy.deepcopy(base)
    moved = now.quests[entry.id]
    moved.first, moved.last, moved.excluded_lines = 30, 40, [33]
    moved.last_run_seconds = 1.5
    moved.mutation_seconds = 2.5
    moved.verification = {"result": "skipped"}
    assert selected(base, now) == {}


def test_the_selection_follows_the_ratchet_order() -> None:
    base = ratchet(quest("src/b.py::g"), quest("src/a.py::f"))
    now = ratchet(passed(quest("src/b.py::g")), passed(quest("src/a.py::f")))
    assert [s.quest.id for s in select_rejudge(base, now)] == ["src/a.py::f", "src/b.py::g"]


# -- the entry the gate compares the code with ---------------------------------------


def test_the_trusted_entry_is_the_base_one() -> None:
    before = quest(excluded_lines=[12])
    forged = passed(quest())
    forged.fingerprint = "sha256:rewritten"
    forged.excluded_lines = [12, 14]
    forged.first = 11
    seal_issued(forged)
    trusted = trusted_entry(Selected(forged, NEW, before), [])
    assert trusted.fingerprint == "sha256:f0"
    assert trusted.issued_seal == issued_seal(before)
    assert trusted.excluded_lines == [13]  # the base's offset, at the current position
    assert trusted.state is State.PASS and trusted.covering_tests == forged.covering_tests


def test_new_code_and_a_person_reissue_trust_the_current_entry() -> None:
    current = passed(quest())
    current.fingerprint = "sha256:new"
    assert trusted_entry(Selected(current, ABSENT, None), []) is current
    before = quest(state=State.REVIEW)
    reopen = Event(at="2026-03-01T00:00:00Z", action="reopen", by="Ada", note="from REVIEW")
    current.history.append(reopen)
    actions = person_actions_since(ratchet(current), ratchet(before))
    assert trusted_entry(Selected(current, NEW, before), actions) is current


# -- person actions since the base (core/person_log.py) ----------------------------


def test_person_actions_are_the_events_new_since_the_base() -> None:
    old = Event(at="2026-01-05T00:00:00Z", action="reopen", by="Ada", reason="dead code")
    submit = Event(at="2026-01-06T00:00:00Z", action="submit", verdict="PASS", note="pass")
    base = ratchet(quest(history=[old]), quest("src/b.py::g"))
    now = copy.deepcopy(base)
    accept = Event(at="2026-01-07T00:00:00Z", action="accept", by="Bob", reason="looked")
    again = Event(at="2026-01-04T00:00:00Z", action="reopen", by="Ada", reason="again")
    now.quests["src/a.py::f"].history += [submit, accept]
    now.quests["src/b.py::g"].history.append(again)
    actions = person_actions_since(now, base)
    assert [(a.quest_id, a.action, a.by) for a in actions] == [
        ("src/b.py::g", "reopen", "Ada"),
        ("src/a.py::f", "accept", "Bob"),
    ]
    assert person_actions_since(copy.deepcopy(base), base) == []


# -- facts ------------------------------------------------------------------------


def test_a_rejudge_fact_names_the_step_the_quest_and_why() -> None:
    fact = Fact("mutation.compare", "src/a.py:12", "a test fails", "all pass", "mutant survived")
    chosen = Selected(passed(quest()), NEW, quest())
    made = rejudge_fact("4-mutants", fact, chosen)
    assert made.check == "rejudge.mutation"
    assert made.field == "src/a.py:12"
    assert made.message == "mutant survived (mutation.compare) [src/a.py::f, PASS since the base]"
    assert rejudge_fact("1-identity", fact, chosen).check == "rejudge.identity"
    assert rejudge_fact("5-stable", fact, chosen).check == "rejudge.stability"
    absent = Selected(passed(quest()), ABSENT, None)
    assert "new code" in rejudge_fact("3-coverage", fact, absent).message


# -- the policy re-judged under: the base's ------------------------------------------


def test_the_rejudge_runs_under_the_base_policy_which_options_only_tighten() -> None:
    from types import SimpleNamespace

    from pytest_quest.app.rejudge import RejudgePolicy, base_policy
    from pytest_quest.core.policy import GatePolicy

    def ctx(mutants: bool, timeout: float, given: set[str] | None) -> Any:
        return SimpleNamespace(
            options=SimpleNamespace(
                mutants=mutants, mutants_rule="on", timeout=timeout, given=given
            )
        )

    strict = Ratchet(policy=GatePolicy(mutants="on", timeout_floor=600.0))
    weak = Ratchet(policy=GatePolicy(mutants="off", timeout_floor=60.0))
    asked_off = ctx(False, 10.0, {"quest_mutants", "quest_timeout"})
    # The base's recorded mutation operators are the re-judge's.
    ops = GatePolicy().operators
    assert base_policy(strict, asked_off) == RejudgePolicy(
        mutants=True, timeout=600.0, operators=ops
    )
    assert base_policy(weak, ctx(True, 900.0, {"quest_mutants", "quest_timeout"})) == (
        RejudgePolicy(mutants=True, timeout=900.0, operators=ops)
    )
    assert base_policy(weak, ctx(True, 600.0, set())) == RejudgePolicy(
        mutants=False, timeout=60.0, operators=ops
    )
    # A base written before policies were recorded: this run's options.
    assert base_policy(Ratchet(), asked_off) == RejudgePolicy(mutants=False, timeout=10.0)


def test_policy_changes_since_the_base_are_person_actions() -> None:
    from pytest_quest.core.rejudge import POLICY_ID, policy_changes_since

    old = {"at": "2026-01-01T00:00:00Z", "by": "Ada", "key": "mutants", "old": "on", "new": "off"}
    new = {"at": "2026-01-02T00:00:00Z", "by": "Bob", "key": "max_tries", "old": "3", "new": "5"}
    base = Ratchet(policy_history=[old])
    now = Ratchet(policy_history=[old, dict(new, reason="slow suite")])
    [action] = policy_changes_since(now, base)
    assert (action.quest_id, action.action, action.by) == (POLICY_ID, "policy", "Bob")
    assert action.reason == "max_tries 3 -> 5 (slow suite)"
    assert len(policy_changes_since(now, None)) == 2
