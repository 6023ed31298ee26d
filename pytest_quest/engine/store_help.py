"""Small helpers of ``engine/store.py``: what a special file is called, old journals pruned."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any


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


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """`path`'s inode, size and modification time (None: it cannot be seen)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns)


def unchanged(store: Any) -> bytes | None:
    """The bytes `store.load` read when the file looks the same since (inode, size, time).

    Only a shortcut before the lock: under it the file is read again and
    compared, so a file changed unseen is still read and validated.
    """
    if store.seen is None or store.stamp is None or file_stamp(store.path) != store.stamp:
        return None
    raw: bytes = store.seen[0]
    return raw


__all__ = ["JOURNAL_MAX_AGE", "file_stamp", "prune_journals", "special_kind", "unchanged"]
