"""Changing the active quest, or one key of a quest's extra, alone: one line rewritten, not all.

When the file under the lock still holds the bytes this process validated
(`RatchetStore.seen`), only the ``active`` line is rewritten
(`layout.with_active`); otherwise `RatchetStore.update` rewrites the whole file.
"""

from __future__ import annotations

import copy
import json

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
                # A copy of the fields as they are (a table not decoded yet stays so).
                now = copy.copy(ratchet)
                now.active = target
                store.seen = (patched, now)
                return ratchet.active
    return store.update(change)


def with_quest_extra(text: bytes, qid: str, key: str, value: str) -> bytes | None:
    """`text` (a version-2 file) with ``extra[key] = value`` on quest `qid`'s line alone.

    The line is decoded and encoded again as `layout.render` writes it; None
    when the file is not laid out so (the caller then writes the whole file).
    """
    encode = json.JSONEncoder(sort_keys=True, allow_nan=False).encode
    head = b"\n" + f"{encode(qid)}: ".encode()
    start = text.find(head)
    if start < 0 or text.find(head, start + 1) >= 0:
        return None
    end = text.find(b"\n", start + 1)
    line = text[start + len(head) : end]
    comma = line.endswith(b",")
    try:
        record = json.loads(line[:-1] if comma else line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("extra", {}), dict):
        return None
    record.setdefault("extra", {})[key] = value
    patched = encode(record).encode() + (b"," if comma else b"")
    return text[: start + len(head)] + patched + text[end:]


def set_quest_extra(store: RatchetStore, qid: str, key: str, value: str) -> Ratchet | None:
    """One line rewritten when the file is what `store` last read; the ratchet now (None: not done)."""
    if store.seen is None:
        return None
    raw, ratchet = store.seen
    quest = ratchet.quests.get(qid)
    patched = with_quest_extra(raw, qid, key, value) if quest is not None else None
    if quest is None or patched is None or not store.replace_if_unchanged(raw, patched):
        return None
    quest.extra[key] = value
    store.seen = (patched, ratchet)
    return ratchet
