"""The person actions a ratchet records since another (the base): what a reviewer must see in CI."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pytest_quest.core.model import PERSON_ACTIONS, Event, Ratchet


@dataclass(frozen=True)
class PersonAction:
    """One recorded person action on one quest."""

    quest_id: str
    action: str
    by: str
    at: str
    reason: str
    fingerprint: str = ""
    note: str = ""

    def to_dict(self) -> dict[str, str]:
        return {
            "id": self.quest_id,
            "action": self.action,
            "by": self.by,
            "at": self.at,
            "reason": self.reason,
            "fingerprint": self.fingerprint,
        }

    def text(self) -> str:
        reason = self.reason or "(no reason recorded)"
        return f"{self.action} {self.quest_id} by {self.by or '?'} at {self.at}: {reason}"


def _key(event: Event) -> tuple[str, ...]:
    return (event.at, event.action, event.by, event.note, event.reason, event.fingerprint)


def person_actions_since(ratchet: Ratchet, base: Ratchet | None) -> list[PersonAction]:
    """Every person action recorded in `ratchet` and not in `base`, oldest first.

    Events are matched per quest id, as a multiset (the same event twice in
    `ratchet` and once in `base` is one new action).  With no `base` (a new
    ratchet file) every recorded person action is new.  A quest removed and
    re-added keeps no history, so nothing is hidden by that.
    """
    found: list[PersonAction] = []
    for quest in ratchet.ordered():
        before = base.quests.get(quest.id) if base is not None else None
        known = Counter(_key(e) for e in before.history) if before is not None else Counter()
        for event in quest.history:
            if event.action not in PERSON_ACTIONS:
                continue
            key = _key(event)
            if known[key]:
                known[key] -= 1
                continue
            found.append(
                PersonAction(
                    quest_id=quest.id,
                    action=event.action,
                    by=event.by,
                    at=event.at,
                    reason=event.reason,
                    fingerprint=event.fingerprint,
                    note=event.note,
                )
            )
    found.sort(key=lambda action: (action.at, action.quest_id))
    return found
