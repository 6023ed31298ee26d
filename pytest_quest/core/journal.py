"""The ratchet file's write journal: one line per locked write, and the chain a guard checks.

Pure: lines in, a verdict on the chain out; the store writes the lines (engine/store.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from pytest_quest.core.words import counted

#: The "read" hash of a write that created the file.
ABSENT = "absent"


def content_hash(data: bytes | None) -> str:
    """The hash the journal names a content by (`ABSENT` for no file)."""
    if data is None:
        return ABSENT
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Entry:
    """One locked write: the content it replaced, the content and inode it wrote, who and when."""

    read: str
    wrote: str
    inode: int
    pid: int
    time: float

    def line(self) -> str:
        data = {
            "inode": self.inode,
            "pid": self.pid,
            "read": self.read,
            "time": round(self.time, 3),
            "wrote": self.wrote,
        }
        return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


def parse(line: str) -> Entry | None:
    """The entry a journal line holds, or None for a line that is not one."""
    try:
        data = json.loads(line)
        entry = Entry(
            read=data["read"],
            wrote=data["wrote"],
            inode=data["inode"],
            pid=data["pid"],
            time=float(data["time"]),
        )
    except (ValueError, KeyError, TypeError):
        return None
    if not (isinstance(entry.read, str) and isinstance(entry.wrote, str)):
        return None
    if type(entry.inode) is not int or type(entry.pid) is not int:
        return None
    return entry


def since(lines: Sequence[str], mark: str | None) -> list[str] | None:
    """The lines after the last occurrence of `mark` (all of them when `mark` is None).

    None when `mark` is not there any more: the journal was cut or rewritten
    beyond what the window saw, so nothing in it can vouch for the window.
    """
    if mark is None:
        return list(lines)
    for index in range(len(lines) - 1, -1, -1):
        if lines[index] == mark:
            return list(lines[index + 1 :])
    return None


@dataclass(frozen=True)
class Snapshot:
    """The ratchet file as a guard saw it under the lock before the judged tests ran."""

    hash: str
    inode: int | None
    links: int
    mark: str | None  # the journal's last line then


@dataclass(frozen=True)
class Now:
    """The ratchet file as it is after the run, read under the lock."""

    hash: str
    inode: int | None
    links: int
    parses: bool


def unaccounted(
    snapshot: Snapshot,
    now: Now,
    lines: Sequence[str] | None,
    vouched: Collection[str] | None = None,
) -> list[str]:
    """Why the file's changes since `snapshot` are not all pytest-quest's locked writes.

    `lines` are the journal's lines after the snapshot's mark (None: the mark
    is gone).  The file is accounted for when the journal's entries since the
    snapshot chain from its hash to the current one (every entry's ``read``
    the previous ``wrote``), the last one wrote the current inode (or none
    was written and the inode is the snapshot's), and no new hard link
    points at it.  With `vouched` (the lines whose writers were seen to be
    outside the judged run), every line must also be among them.  An empty
    list means accounted for.
    """
    reasons: list[str] = []
    if not now.parses:
        reasons.append("the file was deleted, emptied or left unreadable")
    if now.links > 1 and not (now.inode == snapshot.inode and now.links <= snapshot.links):
        reasons.append(f"the file has {now.links} hard links")
    if lines is None:
        reasons.append("the journal was cut or rewritten")
        return reasons
    entries = [parse(line) for line in lines if line.strip()]
    if any(entry is None for entry in entries):
        reasons.append("the journal holds a line pytest-quest did not write")
    chain = [entry for entry in entries if entry is not None]
    if vouched is not None:
        strangers = [line for line in lines if line.strip() and line not in vouched]
        if strangers:
            reasons.append(
                f"{counted(len(strangers), 'journal line')} "
                f"{'was' if len(strangers) == 1 else 'were'} not announced by a pytest-quest "
                "process outside the judged run"
            )
    reasons.extend(chain_breaks(snapshot.hash, chain, now.hash))
    last_inode = chain[-1].inode if chain else snapshot.inode
    if now.inode is not None and now.inode != last_inode:
        reasons.append("the file was replaced by a write the journal does not hold")
    return reasons


def chain_breaks(start: str, entries: Iterable[Entry], end: str) -> list[str]:
    """Where the entries fail to lead from content `start` to content `end` (empty: they do)."""
    breaks: list[str] = []
    current = start
    for entry in entries:
        if entry.read != current:
            breaks.append(f"a write by pid {entry.pid} replaced content the journal never recorded")
        current = entry.wrote
    if current != end:
        breaks.append("the file holds content no journaled write produced")
    return breaks


def trimmed(lines: Sequence[str], keep: int) -> list[str]:
    """The journal's last `keep` lines (it is kept short: a window only needs its own)."""
    return list(lines[-keep:]) if keep > 0 else []
