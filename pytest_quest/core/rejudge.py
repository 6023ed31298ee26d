"""What CI re-judges against a base ratchet: new or changed PASS entries, person actions since.

Pure: two :class:`Ratchet` values in, a selection out (``app/rejudge.py`` runs the gate).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pytest_quest.core.model import Fact, Quest, Ratchet, State, Verdict
from pytest_quest.core.person_log import PersonAction

# Why a PASS is re-judged.
NEW = "new"  # in the base, but not PASS there
ABSENT = "absent"  # not in the base at all (new code)
CHANGED = "changed"  # PASS in the base too, but its entry changed

# The gate's step names (GateResult.step) -> the name of a re-judge fact's check.
STEP_CHECKS = {
    "1-identity": "identity",
    "2-exclusions": "exclusions",
    "environment": "environment",
    "collection": "environment",
    "3-coverage": "coverage",
    "4-mutants": "mutation",
    "5-stable": "stability",
    "l1-extra": "extra",
}


@dataclass(frozen=True)
class Selected:
    """One PASS quest to re-judge, and its entry in the base (None for new code)."""

    quest: Quest
    reason: str
    base: Quest | None


@dataclass
class Rejudged:
    """The re-judge of one PASS quest."""

    id: str
    reason: str
    verdict: Verdict
    step: str
    facts: list[Fact] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        return self.verdict is Verdict.PASS

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "reason": self.reason,
            "verdict": self.verdict.value,
            "step": self.step,
            "holds": self.holds,
            "facts": [fact.to_dict() for fact in self.facts],
        }


@dataclass
class RejudgeReport:
    """What the re-judge found, against which base, in how long."""

    base: str
    found: bool
    results: list[Rejudged] = field(default_factory=list)
    person_actions: list[PersonAction] = field(default_factory=list)
    seconds: float = 0.0
    mutants: bool = True

    @property
    def failed(self) -> list[Rejudged]:
        return [result for result in self.results if not result.holds]


def judged_record(quest: Quest) -> dict[str, Any]:
    """Every field of a PASS entry the gate's verdict rests on, position-free.

    Excluded lines are kept by offset from the function's first line, and the
    first/last lines are left out: a rescan moves them with unrelated code.
    """
    return {
        "file": quest.file,
        "qualname": quest.qualname,
        "state": quest.state.value,
        "fingerprint": quest.fingerprint,
        "seal": quest.issued_seal,
        "excluded": sorted(line - quest.first for line in quest.excluded_lines),
        "statements": quest.statements,
        "branches": quest.branches,
        "covering_tests": sorted(quest.covering_tests),
        "issued_at": quest.issued_at,
        "passed_at": quest.passed_at,
        "baseline": quest.baseline,
        "history": [event.to_dict() for event in quest.history],
        "extra": {
            key: value
            for key, value in quest.extra_record().items()
            # Timings and the L2 record change with every run; they decide nothing.
            if key not in ("last_run_seconds", "mutation_seconds", "verification")
        },
    }


def select_rejudge(base: Ratchet, current: Ratchet) -> list[Selected]:
    """The PASS quests of `current` to re-judge against `base`, in the ratchet's order.

    A PASS that was not PASS in the base, a PASS absent from the base, and a
    PASS whose judged record (:func:`judged_record`) differs from the base's.
    """
    chosen = []
    for quest in current.ordered():
        if quest.state is not State.PASS:
            continue
        before = base.quests.get(quest.id)
        if before is None:
            chosen.append(Selected(quest, ABSENT, None))
        elif before.state is not State.PASS:
            chosen.append(Selected(quest, NEW, before))
        elif judged_record(before) != judged_record(quest):
            chosen.append(Selected(quest, CHANGED, before))
    return chosen


POLICY_ID = "(gate policy)"


def policy_changes_since(ratchet: Ratchet, base: Ratchet | None) -> list[PersonAction]:
    """The person changes of the gate policy in `ratchet` that `base` does not hold, oldest first."""
    known = [dict(entry) for entry in base.policy_history] if base is not None else []
    found = []
    for entry in ratchet.policy_history:
        if entry in known:
            known.remove(entry)
            continue
        change = f"{entry.get('key', '?')} {entry.get('old', '?')} -> {entry.get('new', '?')}"
        reason = entry.get("reason", "")
        found.append(
            PersonAction(
                quest_id=POLICY_ID,
                action="policy",
                by=entry.get("by", ""),
                at=entry.get("at", ""),
                reason=f"{change} ({reason})" if reason else change,
            )
        )
    return sorted(found, key=lambda action: action.at)


def trusted_entry(selected: Selected, actions: list[PersonAction]) -> Quest:
    """The entry the gate compares the code with: the base's, unless a person re-issued it.

    The base is committed and reviewed; the current entry is whatever the
    branch wrote.  A quest re-issued by a reopen since the base (listed in the
    person actions for the reviewer) or new code has no base entry to trust.
    """
    quest, before = selected.quest, selected.base
    if before is None or any(
        action.quest_id == quest.id and action.action == "reopen" for action in actions
    ):
        return quest
    return replace(
        quest,
        fingerprint=before.fingerprint,
        issued_seal=before.issued_seal,
        issued_at=before.issued_at,
        # Offsets from the base, placed at the current entry's position.
        excluded_lines=[line - before.first + quest.first for line in before.excluded_lines],
        # What step 2 compares the configuration and partial-branch lines with (sealed).
        config_digest=before.config_digest,
        partial_lines=before.partial_lines,
    )


def rejudge_fact(step: str, fact: Fact, selected: Selected) -> Fact:
    """`fact` of the gate's `step` as a re-judge fact: ``rejudge.<step>``, naming the quest."""
    name = STEP_CHECKS.get(step, step)
    why = {
        NEW: "PASS since the base",
        ABSENT: "new code, PASS since the base",
        CHANGED: "PASS entry changed since the base",
    }[selected.reason]
    message = fact.message or fact.actual
    return replace(
        fact,
        check=f"rejudge.{name}",
        message=f"{message} ({fact.check}) [{selected.quest.id}, {why}]",
    )
