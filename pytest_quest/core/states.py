"""The state machine of a quest, TODO -> PASS | REVIEW | DONE | EXCLUDED, as pure functions.

FAIL spends a try (DONE at `max_tries`); only a person's `reopen` or `accept` leave a terminal state.
"""

from __future__ import annotations

from pytest_quest.core.environment import BEGUN_KEY, STREAK_KEY
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Event, Fact, FunctionFacts, Quest, Ratchet, State, Verdict
from pytest_quest.core.seal import seal_issued, seal_pass


def ensure_submittable(quest: Quest) -> None:
    """Refuse a submission for a terminal quest; nothing changes."""
    if quest.state.terminal:
        # No hint at the person actions: an agent reads this message.
        raise QuestUsageError(
            f"quest {quest.id} is {quest.state.value} and refuses resubmission"
            + ("; it waits for a person" if quest.state is State.REVIEW else "")
            + (
                "; it is closed (no try left): nothing remains to do for it"
                if quest.state is State.DONE
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
    quest.extra.pop(STREAK_KEY, None)  # a verdict ends a streak of environment failures
    quest.extra.pop(BEGUN_KEY, None)  # and the submit that began is recorded
    quest.extra.pop(GATE_FACTS_KEY, None)  # its facts are the gate's last word now
    quest.extra.pop(RESCANNED_KEY, None)
    quest.extra.pop(FAILED_DIGEST_KEY, None)  # the caller keeps a FAIL's (`kept_fail`)
    if result.verdict is Verdict.PASS:
        quest.state = State.PASS
        quest.passed_at = now
        quest.missing_lines = []
        quest.missing_branches = []
        seal_pass(quest, "submit")  # again by `record_pass_facts`, with what the gate measured
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
    seal_pass(quest, "submit")


def _person_event(
    action: str, by: str, now: str, reason: str, fingerprint: str | None, note: str = ""
) -> Event:
    return Event(
        at=now, action=action, by=by, note=note, reason=reason, fingerprint=fingerprint or ""
    )


def check_reopen(quest: Quest, fingerprint: str | None = None) -> None:
    """Refuse to reopen a PASS quest (locked forever), or a TODO quest issued for its code as
    it is: a TODO quest whose code changed since (`fingerprint`: the code's now) is re-issued."""
    if quest.state in (State.REVIEW, State.DONE, State.EXCLUDED):
        return
    if quest.state is State.TODO and changed_since_issue(quest, fingerprint):
        return
    raise QuestUsageError(
        f"quest {quest.id} is {quest.state.value}; "
        "only REVIEW and DONE quests can be reopened, EXCLUDED ones, and a TODO quest "
        "whose code changed since it was issued"
    )


def changed_since_issue(quest: Quest, fingerprint: str | None) -> bool:
    """Whether `quest` was issued for other code than `fingerprint` (the function's now):
    any submit of it is REVIEW (identity.changed) until a person re-issues it."""
    return code_changed(quest.fingerprint, fingerprint)


def code_changed(issued: str, now: str | None) -> bool:
    """Whether a function issued with fingerprint `issued` has another one `now` (both known)."""
    return bool(issued and now and now != issued)


def check_accept(quest: Quest) -> None:
    """Refuse to accept anything but a REVIEW quest."""
    if quest.state is not State.REVIEW:
        raise QuestUsageError(
            f"quest {quest.id} is {quest.state.value}; only a REVIEW quest can be accepted"
        )


def check_exclude(quest: Quest) -> None:
    """Refuse to exclude a PASS quest (locked forever) or one already excluded."""
    if quest.state is State.PASS:
        raise QuestUsageError(
            f"quest {quest.id} is PASS; a PASS is locked and cannot be excluded "
            "(`check` keeps holding it to full coverage)"
        )
    if quest.state is State.EXCLUDED:
        raise QuestUsageError(f"quest {quest.id} is already EXCLUDED")


def reopen(
    quest: Quest, by: str, now: str, fingerprint: str | None = None, *, reason: str = ""
) -> None:
    """A person puts a REVIEW, DONE or EXCLUDED quest back to TODO, with tries reset.

    `fingerprint`, when given, re-issues the quest for the current code of
    the function (a person has looked at the change); the event records it.
    """
    check_reopen(quest, fingerprint)
    previous = quest.state
    quest.state = State.TODO
    quest.tries = 0
    if fingerprint:
        quest.fingerprint = fingerprint
        seal_issued(quest)
    quest.history.append(
        _person_event("reopen", by, now, reason, fingerprint, note=f"from {previous.value}")
    )


def accept(
    quest: Quest, by: str, now: str, *, reason: str = "", fingerprint: str | None = None
) -> None:
    """A person settles a REVIEW quest as PASS after a look."""
    check_accept(quest)
    quest.state = State.PASS
    quest.passed_at = now
    quest.missing_lines = []
    quest.missing_branches = []
    if not quest.covering_tests:
        quest.covering_tests = ["(accepted by a person)"]
    seal_pass(quest, "accept")
    quest.history.append(_person_event("accept", by, now, reason, fingerprint))


def exclude(
    quest: Quest, by: str, now: str, *, reason: str, fingerprint: str | None = None
) -> None:
    """A person takes a TODO, REVIEW or DONE quest out of the work (dead or untestable code).

    EXCLUDED is terminal and not remaining; a person's `reopen` undoes it.
    """
    check_exclude(quest)
    previous = quest.state
    quest.state = State.EXCLUDED
    quest.history.append(
        _person_event("exclude", by, now, reason, fingerprint, note=f"from {previous.value}")
    )


#: The quest's ``extra`` key keeping the last gate facts a rescan replaced.
GATE_FACTS_KEY = "gate_facts"
#: In a TODO quest's ``extra``: the digest of what its last FAIL judged (tests, code, configuration).
FAILED_DIGEST_KEY = "failed_digest"


def kept_fail(quest: Quest, digest: str) -> None:
    """Remember on a quest left TODO by a FAIL what was judged, so the same cannot be judged again."""
    if digest and quest.state is State.TODO:
        quest.extra[FAILED_DIGEST_KEY] = digest


def unchanged_since_fail(quest: Quest, digest: str) -> str | None:
    """The usage error for a resubmit of exactly what the last FAIL judged (None: something changed).

    Judging the same tests on the same code again would give the same
    verdict and spend a try for nothing.
    """
    if quest.state is not State.TODO or quest.extra.get(FAILED_DIGEST_KEY) != digest:
        return None
    failed = [event.at for event in quest.history if event.verdict == Verdict.FAIL.value]
    when = f" at {failed[-1]}" if failed else ""
    return (
        f"nothing changed since the last FAIL of {quest.id}{when}: its tests, the code under "
        "test and the configuration are as judged then; change the tests, then submit again "
        "(nothing was judged, no try spent)"
    )


#: Set on a quest whose facts a rescan replaced after a verdict (cleared by the next verdict).
RESCANNED_KEY = "facts_rescanned"


def _last_verdict(quest: Quest) -> Event | None:
    for event in reversed(quest.history):
        if event.action == "submit" and event.verdict:
            return event
    return None


def facts_origin(quest: Quest, ratchet: Ratchet) -> tuple[str, str]:
    """Where `quest.facts` come from: ``("submit", when)`` or ``("scan", when)``.

    A scan replaces a TODO quest's facts (and marks it, `RESCANNED_KEY`); a
    verdict replaces them again (and clears the mark).
    """
    last = _last_verdict(quest)
    scanned = ratchet.scanned_at or quest.issued_at
    if last is None or quest.extra.get(RESCANNED_KEY):
        return "scan", scanned
    if last.at >= ratchet.scanned_at:
        return "submit", last.at
    return "scan", scanned  # rescanned by a version that did not mark it


def keep_gate_facts(quest: Quest, ratchet: Ratchet, facts: list[Fact]) -> None:
    """Before a rescan gives a TODO quest `facts`: keep the gate's last facts when they differ."""
    kind, at = facts_origin(quest, ratchet)
    last = _last_verdict(quest)
    if last is None:
        return
    quest.extra[RESCANNED_KEY] = True
    if kind != "submit":
        return  # the facts were already the scan's: what was kept, if anything, stays
    if quest.facts == facts:
        quest.extra.pop(GATE_FACTS_KEY, None)
        return
    quest.extra[GATE_FACTS_KEY] = {
        "at": at,
        "verdict": last.verdict,
        "facts": [fact.to_dict() for fact in quest.facts],
    }


def last_person_event(quest: Quest, action: str) -> Event | None:
    """The latest `action` event of `quest`'s history (who excluded it, and why)."""
    for event in reversed(quest.history):
        if event.action == action:
            return event
    return None
