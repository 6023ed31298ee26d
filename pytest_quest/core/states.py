"""The state machine of a quest, TODO -> PASS | REVIEW | DONE, as pure functions over `Quest`.

FAIL spends a try (DONE at `max_tries`); only `reopen` or `accept` leave a terminal state.
"""

from __future__ import annotations

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Event, FunctionFacts, Quest, State, Verdict
from pytest_quest.core.seal import seal_issued


def ensure_submittable(quest: Quest) -> None:
    """Refuse a submission for a terminal quest; nothing changes."""
    if quest.state.terminal:
        raise QuestUsageError(
            f"quest {quest.id} is {quest.state.value} and refuses resubmission"
            + (
                "; a person can put it back with --quest-reopen"
                if quest.state in (State.REVIEW, State.DONE)
                else ""
            )
        )


def apply_verdict(quest: Quest, result: GateResult, max_tries: int, now: str) -> State:
    """Record the gate's `result` on `quest`; return the new state.

    The caller has checked `ensure_submittable`.  A PASS stores what the
    gate saw (`covering_tests`, `passed_at`) with the quest.
    """
    ensure_submittable(quest)
    quest.facts = list(result.facts)
    if result.verdict is Verdict.PASS:
        quest.state = State.PASS
        quest.passed_at = now
        quest.missing_lines = []
        quest.missing_branches = []
    elif result.verdict is Verdict.REVIEW:
        quest.state = State.REVIEW
    else:
        quest.tries += 1
        if quest.tries >= max_tries:
            quest.state = State.DONE
    quest.history.append(
        Event(at=now, action="submit", verdict=result.verdict.value, note=result.step)
    )
    return quest.state


def record_pass_facts(quest: Quest, current: FunctionFacts) -> None:
    """Keep with a PASS quest what the gate measured when it passed."""
    quest.statements = current.statements
    quest.branches = current.branches
    quest.covering_tests = list(current.covering_tests)


def reopen(quest: Quest, by: str, now: str, fingerprint: str | None = None) -> None:
    """A person puts a REVIEW or DONE quest back to TODO, with tries reset.

    `fingerprint`, when given, re-issues the quest for the current code of
    the function (a person has looked at the change).
    """
    if quest.state not in (State.REVIEW, State.DONE):
        raise QuestUsageError(
            f"quest {quest.id} is {quest.state.value}; only REVIEW and DONE quests can be reopened"
        )
    previous = quest.state
    quest.state = State.TODO
    quest.tries = 0
    if fingerprint:
        quest.fingerprint = fingerprint
        seal_issued(quest)
    quest.history.append(Event(at=now, action="reopen", by=by, note=f"from {previous.value}"))


def accept(quest: Quest, by: str, now: str) -> None:
    """A person settles a REVIEW quest as PASS after a look."""
    if quest.state is not State.REVIEW:
        raise QuestUsageError(
            f"quest {quest.id} is {quest.state.value}; only a REVIEW quest can be accepted"
        )
    quest.state = State.PASS
    quest.passed_at = now
    quest.missing_lines = []
    quest.missing_branches = []
    if not quest.covering_tests:
        quest.covering_tests = ["(accepted by a person)"]
    quest.history.append(Event(at=now, action="accept", by=by))
