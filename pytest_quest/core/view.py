"""What `status` shows of a ratchet: counts, a table per file and the quests listed by name.

Pure values.  The text is drawn from this (report/text.py), built from a
whole ratchet (`report.text.status_view`) or read back from the copy kept
beside the ratchet file (engine/view_cache.py), so that a second `status` on
an unchanged file decodes no quest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_quest.core.model import SORT_KEY, Ratchet, State
from pytest_quest.core.policy import PolicyError, parse_compact, weaker_keys


@dataclass
class Listed:
    """A quest status names one by one (REVIEW, DONE, EXCLUDED), with its lines under it."""

    id: str
    file: str
    first: int
    last: int
    tries: int
    state: str
    disputed: bool = False
    # Its facts (REVIEW, DONE) or who took it out and why (EXCLUDED), as status prints them.
    lines: list[str] = field(default_factory=list)


@dataclass
class StatusView:
    """A ratchet as `status` shows it."""

    counts: dict[str, int]
    remaining: int
    # Per file (sorted by name), the number of quests in each state.
    files: dict[str, dict[str, int]]
    # REVIEW, DONE and EXCLUDED quests in the documented order (file, first line, id).
    listed: list[Listed]
    # PASS quests obtained under a weaker policy than the ratchet's (`weaker_passes`).
    weaker: list[dict[str, Any]] = field(default_factory=list)
    policy: dict[str, Any] | None = None


def weaker_passes(ratchet: Ratchet) -> list[dict[str, Any]]:
    """PASS quests obtained under a weaker policy than the current one: id, keys, the policy then."""
    current = ratchet.policy
    found: list[dict[str, Any]] = []
    if current is None:
        return found
    # Most PASS quests share a few policies: judge each compact text once.
    judged: dict[str, list[str]] = {}
    passed = (q for q in ratchet.quests.values() if q.state is State.PASS and q.passed_policy)
    for quest in sorted(passed, key=SORT_KEY):
        text = quest.passed_policy or ""
        if text not in judged:
            try:
                judged[text] = weaker_keys(current, parse_compact(text))
            except PolicyError:
                judged[text] = ["unreadable"]
        if judged[text]:
            found.append({"id": quest.id, "weaker": judged[text], "policy": text})
    return found


__all__ = ["Listed", "StatusView", "weaker_passes"]
