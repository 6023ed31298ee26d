"""Disputed mutants: the facts a dispute ends with, and how to tell a dispute's REVIEW.

Pure values.  The flow is in app/dispute.py: a dispute never yields PASS; a
mutant every test of the suite that reaches it lets through is REVIEW (a
person decides whether it is equivalent); a mutant some test kills is
refused (FAIL, a try spent) naming that test, and so is a mutant seen to
return or raise otherwise than the function on a test's own inputs.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from dataclasses import dataclass
from typing import Any

from pytest_quest.core.model import Fact, FunctionFacts, Quest, State, arc_text
from pytest_quest.core.mutant_ast import change_text
from pytest_quest.core.observed import observed_text, witness_text
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


#: A disputed line or branch: ``N``, ``path:N``, ``N->M`` (``M`` may be ``exit``).
_SPOT = re.compile(r"^(?:(?P<path>.+):)?(?P<line>\d+)(?:->(?P<end>-?\d+|exit))?$")


@dataclass(frozen=True)
class Spot:
    """A line (`end` None) or a branch ``line->end`` said to be unreachable; `path` as given."""

    path: str | None
    line: int
    end: int | None = None

    def text(self) -> str:
        return (
            f"line {self.line}" if self.end is None else f"branch {arc_text((self.line, self.end))}"
        )

    def missing_in(self, lines: list[int], arcs: list[tuple[int, int]]) -> bool:
        """Whether this spot is among missing `lines` (a line) or `arcs` (a branch)."""
        if self.end is None:
            return self.line in lines
        if self.end < 0:  # "exit": coverage's exit arcs carry minus the code object's line
            return any(start == self.line and end < 0 for start, end in arcs)
        return (self.line, self.end) in arcs


def assumed_reached(facts: FunctionFacts, spots: list[Spot]) -> FunctionFacts:
    """`facts` as if tests reached the disputed `spots`: what the gate judges beyond them."""
    lines = {spot.line for spot in spots if spot.end is None}
    arcs = [spot for spot in spots if spot.end is not None]

    def kept(arc: tuple[int, int]) -> bool:
        return not any(spot.missing_in([], [arc]) for spot in arcs)

    return dataclasses.replace(
        facts,
        missing_lines=[n for n in facts.missing_lines if n not in lines],
        missing_branches=[a for a in facts.missing_branches if kept(a)],
    )


def parse_spots(text: str) -> list[Spot] | None:
    """The lines and branches given to ``--quest-dispute`` (comma separated); None: not all are."""
    spots: list[Spot] = []
    for part in text.split(","):
        item = part.strip()
        if not item:
            continue
        found = _SPOT.match(item)
        if found is None:
            return None
        end = found.group("end")
        spot = Spot(
            found.group("path"),
            int(found.group("line")),
            None if end is None else -1 if end == "exit" else int(end),
        )
        if spot not in spots:
            spots.append(spot)
    return spots or None


def unreachable_fact(file: str, spot: Spot, reason: str, tests: int) -> Fact:
    """A line or branch no test of the whole suite reaches: for a person, with that evidence."""
    return Fact(
        check="dispute.unreachable",
        field=f"{file}:{spot.line if spot.end is None else arc_text((spot.line, spot.end))}",
        expected="a person decides whether the code can be reached",
        actual=f"no test of the whole suite ({counted(tests, 'test')} run) reaches it",
        message=(
            f"disputed {spot.text()} is reached by no test of the whole suite "
            f"({counted(tests, 'test')} run, measured); the reason given: {reason!r}; a person excludes it "
            "(--quest-accept, --quest-exclude) or reopens the quest (--quest-reopen)"
        ),
    )


def reached_fact(file: str, spot: Spot, tests: list[str]) -> Fact:
    """A disputed line or branch a test reaches: refused, naming the test (a try is spent).

    `tests`: the one that reached it, or those among which one did.
    """
    shown = ", ".join(tests[:3]) + (f" and {len(tests) - 3} more" if len(tests) > 3 else "")
    who = shown if len(tests) == 1 else f"a test among {shown}"
    return Fact(
        check="dispute.refused",
        field=f"{file}:{spot.line if spot.end is None else arc_text((spot.line, spot.end))}",
        expected="no test reaches the disputed code",
        actual=f"reached by {who}",
        message=(
            f"dispute of {spot.text()} refused: {who} reaches it (measured over the whole "
            "suite); it is reachable: test it as that test does (a try is spent)"
        ),
    )


def _change(mutant: dict[str, Any]) -> str:
    return change_text(str(mutant.get("original", "")), str(mutant.get("mutated", "")))


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
    """A disputed mutant a call tells apart (it returned or raised otherwise): refused.

    The call is a test's own, or the witness search's.  None when there is
    none.  What the child observed only ever refuses a dispute, never grants
    one: a forged observation costs its writer a try.
    """
    observed = observed_text(mutant.get("observed")) or witness_text(mutant.get("search"))
    if not observed:
        return None
    return Fact(
        check="dispute.refused",
        field=_where(file, mutant),
        expected="no input tells the disputed mutant from the function",
        actual=observed,
        message=(
            f"dispute of mutant {mutant.get('id', '')} ({mutant.get('operator', '')}) refused: "
            f"{_change(mutant)}: {observed}; it is not equivalent: assert on that "
            "(a try is spent)"
        ),
    )


def equivalent_fact(
    file: str, mutant: dict[str, Any], reason: str, tests: list[str], *, quest_id: str = ""
) -> Fact:
    """A disputed mutant every test of the suite that reaches it lets through: for a person.

    It says what was sought and not found (a failing test, an input on which the mutant
    returns or raises otherwise), the agent's reason, and the person's two commands.
    """
    shown = ", ".join(tests[:5]) + (f" and {len(tests) - 5} more" if len(tests) > 5 else "")
    one = len(tests) == 1
    reach = (
        "the one test of the suite that reaches"
        if one
        else f"all {counted(len(tests), 'test')} of the suite that reach"
    )
    return Fact(
        check="dispute.equivalent",
        field=_where(file, mutant),
        expected="a person decides whether the mutant is equivalent",
        actual=(
            f"1 test of the suite reaches it and passes: {shown}"
            if one
            else f"{counted(len(tests), 'test')} of the suite reach it and pass: {shown}"
        ),
        message=(
            f"disputed mutant {mutant.get('id', '')} ({mutant.get('operator', '')}) "
            f"{_change(mutant)} survives {reach} "
            f"line {mutant.get('line', 0)} ({shown}): none fails with it, and none of their "
            "inputs was seen making it return or raise otherwise; "
            f"the reason given: {reason!r}; possibly equivalent: a person accepts it "
            f"({_person('accept', quest_id)}) or reopens the quest ({_person('reopen', quest_id)})"
        ),
    )


def _person(action: str, quest_id: str) -> str:
    """A person's command line for the quest (the reason is theirs to write)."""
    which = shlex.quote(quest_id) if quest_id else "ID"
    return f'pytest --quest-{action} {which} --quest-reason "..."'


#: Killed mutants a dispute's REVIEW names one by one; the rest are counted.
KILLED_SHOWN = 10


def others_killed_fact(quest_id: str, killed: list[dict[str, Any]]) -> Fact:
    """What the person also weighs: every mutant not disputed is killed, and by which test.

    `killed` are the entries the dispute's gate run killed (its other mutants).
    """
    if not killed:
        return Fact(
            check="dispute.others_killed",
            field=quest_id,
            expected="every mutant not disputed is killed",
            actual="no other mutant of the function was planned",
            message="no other mutant of the function was planned: the disputed ones are all",
        )
    items = [
        f"{m.get('id', '')} (line {m.get('line', 0)}, {_change(m)}) by "
        f"{m.get('killed_by', '') or 'a covering test'}"
        for m in killed
    ]
    shown = "; ".join(items[:KILLED_SHOWN])
    if len(items) > KILLED_SHOWN:
        shown += f"; and {len(items) - KILLED_SHOWN} more"
    count = "the one other mutant" if len(killed) == 1 else f"all {len(killed)} other mutants"
    return Fact(
        check="dispute.others_killed",
        field=quest_id,
        expected="every mutant not disputed is killed",
        actual=f"{len(killed)} killed",
        message=f"{count} of the function killed by the covering tests: {shown}",
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
