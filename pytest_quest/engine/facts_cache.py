"""What `next` measured of a quest's function, kept for the same test files and source.

One small JSON file per ratchet file, beside the journals' folder (as the
views are, engine/view_cache.py): quest id -> the key of what the measurement
depended on, and what it found.  A cache, never a record: a miss measures
again, a file that cannot be read or written is no error.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pytest_quest.engine.store_help import prune_older

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
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            prune_older(target.parent, "*.json", MAX_AGE)
        fd, name = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle)
            os.replace(name, target)
        except BaseException:
            try:
                os.unlink(name)
            except OSError:
                pass
            raise
    except OSError:
        return


__all__ = ["load", "path_for", "save"]
