"""What `next` measured of a quest's function, kept for the same test files and source.

One small JSON file per ratchet file, beside the journals' folder (as the
views are, engine/view_cache.py): quest id -> the key of what the measurement
depended on, and what it found.  A cache, never a record: a miss measures
again, a file that cannot be read or written is no error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_quest.engine.store_help import save_cache

#: Quests kept per ratchet file: the ones an agent went through lately.
KEPT = 64
MAX_AGE = 7 * 24 * 3600


def path_for(journal: Path) -> Path:
    return journal.parent.parent / "facts" / (journal.stem + ".json")


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load(journal: Path, quest_id: str, key: str) -> dict[str, Any] | None:
    """What was measured of `quest_id` for `key`, or None."""
    entry = _read(path_for(journal)).get(quest_id)
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    found = entry.get("measured")
    return found if isinstance(found, dict) else None


def save(journal: Path, quest_id: str, key: str, measured: dict[str, Any]) -> None:
    """Keep `measured` for `quest_id` and `key` (the oldest entries dropped past `KEPT`)."""
    target = path_for(journal)
    data = _read(target)
    data.pop(quest_id, None)
    data[quest_id] = {"key": key, "measured": measured}
    for old in list(data)[: max(0, len(data) - KEPT)]:
        del data[old]
    save_cache(target, json.dumps(data).encode("utf-8"), MAX_AGE)
