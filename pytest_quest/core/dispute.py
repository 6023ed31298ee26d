"""Disputed mutants: the facts a dispute ends with, and how to tell a dispute's REVIEW.

Pure values.  The flow is in app/dispute.py: a dispute never yields PASS; a
mutant every test of the suite that reaches it lets through is REVIEW (a
person decides whether it is equivalent); a mutant some test kills is
refused (FAIL, a try spent) naming that test, and so is a mutant seen to
return or raise otherwise than the function on a test's own inputs.
"""

from __future__ import annotations

from typing import Any

from pytest_quest.core.model import Fact, Quest, State
from pytest_quest.core.observed import observed_text
from pytest_quest.core.words import counted

#: The gate step a dispute's verdict records (the quest's history keeps it).
STEP = "dispute"


def parse_ids(text: str) -> tuple[str, ...]:
    """Mutant ids as given to ``--quest-dispute`` (comma separated), in order, no repeats."""
    ids: list[str] = []
    for part in text.split(","):
        item = part.strip()
        if item and item not in ids:
            ids.append(item)
    return tuple(ids)


def _change(mutant: dict[str, Any]) -> str:
    return f"`{mutant.get('original', '')}` -> `{mutant.get('mutated', '')}`"


def _where(file: str, mutant: dict[str, Any]) -> str:
    return f"{file}:{mutant.get('line', 0)}"


def refused_fact(file: str, mutant: dict[str, Any], *, whole_suite: bool) -> Fact:
    """A disputed mutant that a test kills: not equivalent; the test shows what to assert."""
    test = str(mutant.get("killed_by", ""))
    how = str(mutant.get("how", "")) or "failed"
    among = "a test of the suite" if whole_suite else "a covering test"
    return Fact(
        check="dispute.refused",
        field=_where(file, mutant),
        expected="no test tells the disputed mutant from the function",
        actual=f"{test} {how} with {_change(mutant)}",
        message=(
            f"dispute of mutant {mutant.get('id', '')} ({mutant.get('operator', '')}) refused: "
            f"{among}, {test}, {how} with {_change(mutant)}; it is not equivalent: "
            "assert what that test asserts (a try is spent)"
        ),
    )


def seen_fact(file: str, mutant: dict[str, Any]) -> Fact | None:
    """A disputed mutant the tests' own inputs tell apart (it returned or raised otherwise): refused.

    None when nothing was observed.  What the child observed only ever
    refuses a dispute, never grants one: a forged observation costs its
    writer a try.
    """
    observed = observed_text(mutant.get("observed"))
    if not observed:
        return None
    return Fact(
        check="dispute.refused",
        field=_where(file, mutant),
        expected="no input of the tests tells the disputed mutant from the function",
        actual=observed,
        message=(
            f"dispute of mutant {mutant.get('id', '')} ({mutant.get('operator', '')}) refused: "
            f"{_change(mutant)}: {observed}; it is not equivalent: assert on that "
            "(a try is spent)"
        ),
    )


def equivalent_fact(file: str, mutant: dict[str, Any], reason: str, tests: list[str]) -> Fact:
    """A disputed mutant every test of the suite that reaches it lets through: for a person."""
    shown = ", ".join(tests[:5]) + (f" and {len(tests) - 5} more" if len(tests) > 5 else "")
    return Fact(
        check="dispute.equivalent",
        field=_where(file, mutant),
        expected="a person decides whether the mutant is equivalent",
        actual=f"reached and passed by {counted(len(tests), 'test')} of the suite: {shown}",
        message=(
            f"disputed mutant {mutant.get('id', '')} ({mutant.get('operator', '')}) "
            f"{_change(mutant)} survives every test of the suite that reaches "
            f"line {mutant.get('line', 0)}, {counted(len(tests), 'test')}: {shown}; "
            f"the reason given: {reason!r}; "
            "possibly equivalent: a person "
            "accepts it (--quest-accept) or reopens the quest (--quest-reopen)"
        ),
    )


def unconfirmed_fact(quest_id: str, why: str) -> Fact:
    """The dispute could not be decided (the run failed, a mutant unreached): REVIEW."""
    return Fact(
        check="dispute.unconfirmed",
        field=quest_id,
        expected="the disputed mutant runs against every test that reaches it",
        actual=why,
        message=f"could not confirm the dispute: {why}",
    )


def not_judged_fact(quest_id: str, why: str) -> Fact:
    """The gate did not get as far as the disputed mutants: its own verdict stands."""
    return Fact(
        check="dispute.not_judged",
        field=quest_id,
        expected="the gate fails only on the disputed mutants",
        actual=why,
        message=f"the dispute was not judged: {why}",
    )


def is_dispute(quest: Quest) -> bool:
    """Whether `quest` waits for a person because of a disputed mutant."""
    return quest.state is State.REVIEW and any(f.check.startswith("dispute.") for f in quest.facts)


__all__ = [
    "STEP",
    "equivalent_fact",
    "is_dispute",
    "not_judged_fact",
    "parse_ids",
    "refused_fact",
    "seen_fact",
    "unconfirmed_fact",
]
