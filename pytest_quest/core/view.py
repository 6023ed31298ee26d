"""What `status` shows of a ratchet: counts, a table per file and the quests listed by name.

Pure values.  The text is drawn from this (report/text.py), built from a
whole ratchet (`report.text.status_view`) or read back from the copy kept
beside the ratchet file (engine/view_cache.py), so that a second `status` on
an unchanged file decodes no quest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_quest.core.model import SORT_KEY, Quest, Ratchet, State
from pytest_quest.core.mutant_ast import change_text
from pytest_quest.core.policy import PolicyError, parse_compact, weaker_keys

#: In a section's text, where the tries allowed go (known when drawn: ``--quest-max-tries``).
MAX_TRIES = "\x00"

#: The sections of quests status lists by name, in order: (state, disputed, title).
SECTIONS = (
    ("REVIEW", False, "waiting for a person (REVIEW)"),
    ("REVIEW", True, "disputed mutants, lines and branches, waiting for a person (REVIEW)"),
    ("DONE", False, "closed after max tries (DONE)"),
    ("EXCLUDED", False, "taken out of the work by a person (EXCLUDED)"),
    ("", False, "survivors no call told apart, not held against the tests (unwitnessed)"),
)


def unwitnessed_lines(quest: Quest) -> list[str]:
    """A quest's unwitnessed survivors as status lists them: the quest, then one line each."""
    found = quest.unwitnessed or []
    lines = [f"  {quest.id}  ({quest.file}:{quest.first}-{quest.last}, {quest.state.value})"]
    for mutant in found:
        if isinstance(mutant, dict):
            lines.append(
                f"    {quest.file}:{mutant.get('line', '?')}: "
                f"{change_text(str(mutant.get('original', '')), str(mutant.get('mutated', '')))} "
                f"(operator {mutant.get('operator', '')}, "
                f"mutant {mutant.get('id', '')})"
            )
    return lines


@dataclass
class StatusView:
    """A ratchet as `status` shows it."""

    counts: dict[str, int]
    remaining: int
    # Per file (sorted by name), the number of quests in each state.
    files: dict[str, dict[str, int]]
    # Per section (its title), the lines of its quests in the documented order (file, first
    # line, id), each quest's place then its facts (or who excluded it): one text, where
    # `MAX_TRIES` stands for the tries allowed.  Sections with no quest are left out.
    sections: dict[str, str]
    # PASS quests obtained under a weaker policy than the ratchet's (`weaker_passes`).
    weaker: list[dict[str, Any]] = field(default_factory=list)
    policy: dict[str, Any] | None = None
    # PASS entries no judged submit, scan or person wrote (core/seal.py `forged_passes`).
    forged: dict[str, str] = field(default_factory=dict)
    # Judged quests by the sandbox of their last judgement (engine/sandbox.py; "none":
    # unsandboxed), sorted by name.
    judged_in: dict[str, int] = field(default_factory=dict)
    # Per file (sorted by name), its TODO quests as issued: [id, fingerprint, issued_at]
    # (`status` tells those whose code changed since from the files as they are now).
    issued: dict[str, list[list[str]]] = field(default_factory=dict)


@dataclass
class NextView:
    """What `next` needs of every quest to show one: the queue, and the tests the scan saw."""

    # Every TODO quest's id in `next`'s order (file, first line, id).
    queue: list[str]
    # The covering tests recorded at a scan (every quest's but a PASS the gate gave), by their
    # place in the file's tests table: an example is taken only from a test the scan saw
    # (engine/examples.py).  None: not kept (a read that decoded no covering test).
    recorded: list[int] | None


def recorded_at_scan(quest: Quest) -> bool:
    """Whether `quest`'s covering tests are those a scan recorded (every quest's but a PASS the
    gate gave): the tests `next` may take an example from (engine/examples.py)."""
    return not (quest.state is State.PASS and not quest.baseline)


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
