"""Changing the active quest alone: one line of the ratchet file rewritten, not all of it.

`next` changes nothing but the ``active`` pointer.  When the file, under the
lock, still holds the bytes this process read and validated
(`RatchetStore.seen`), the new file is those bytes with the ``active`` line
replaced, inserted or removed (`layout.with_active`): nothing is decoded or
encoded again, and the lock is held for one read and one write whatever the
number of quests.  Otherwise (another process wrote meanwhile, a file laid out
otherwise: version 1, indented by hand) `RatchetStore.update` reads, changes
and writes the whole file, as every other change does.
"""

from __future__ import annotations

import dataclasses

from pytest_quest.core.model import Ratchet
from pytest_quest.engine.layout import with_active
from pytest_quest.engine.store import RatchetStore


def allowed(ratchet: Ratchet, target: str | None) -> bool:
    """Whether `target` may become active in `ratchet`: None, or a quest not settled."""
    quest = ratchet.quests.get(target) if target is not None else None
    return target is None or (quest is not None and not quest.state.terminal)


def set_active(store: RatchetStore, target: str | None) -> str | None:
    """Make `target` the active quest (when `allowed`); the active quest the file held before."""

    def change(fresh: Ratchet) -> str | None:
        previous = fresh.active
        if allowed(fresh, target):
            fresh.active = target
        return previous

    if store.seen is not None:
        raw, ratchet = store.seen
        if allowed(ratchet, target) and ratchet.active != target:
            patched = with_active(raw, ratchet.active, target)
            if patched is not None and store.replace_if_unchanged(raw, patched):
                store.seen = (patched, dataclasses.replace(ratchet, active=target))
                return ratchet.active
    return store.update(change)


__all__ = ["allowed", "set_active"]
