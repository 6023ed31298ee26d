"""Small helpers of ``engine/store.py``: what a special file is called, old journals pruned."""

from __future__ import annotations

import stat
import time
from pathlib import Path


def special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


JOURNAL_MAX_AGE = 24 * 3600


def prune_journals(folder: Path) -> None:
    """Remove journals nobody wrote for a day (a guard only needs the writes of its own run)."""
    horizon = time.time() - JOURNAL_MAX_AGE
    for old in folder.glob("*.journal"):
        try:
            if old.stat().st_mtime < horizon:
                old.unlink()
        except OSError:
            continue


__all__ = ["JOURNAL_MAX_AGE", "prune_journals", "special_kind"]
