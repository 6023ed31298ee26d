"""The tests under judgment cannot write the verdict: an audit hook in their process, a check after."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import Fact, Ratchet
from pytest_quest.engine.codec import loads, quest_to_dict
from pytest_quest.engine.store import RatchetStore

JUDGED_FIELDS = (
    "state",
    "tries",
    "fingerprint",
    "excluded_lines",
    "statements",
    "branches",
    "passed_at",
    "issued_at",
    "baseline",
    "history",
    "extra",
)

# The tests under judgment run with this variable naming the ratchet file;
# `protect_from_env` makes writes to it fail inside their process.
PROTECT_ENV = "PYTEST_QUEST_PROTECT"


def protect_from_env() -> None:
    """Refuse, in this process, every write to the file `PROTECT_ENV` names.

    An audit hook (PEP 578) sees ``open`` for writing, ``os.rename``,
    ``os.replace``, ``os.remove`` and ``os.truncate`` of that path and raises
    `PermissionError`.  It cannot see a subprocess or C code writing the file;
    `VerdictGuard` catches those after the run.
    """
    target = os.environ.get(PROTECT_ENV)
    if not target:
        return
    protected = os.path.realpath(target)
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC

    def is_protected(path: Any) -> bool:
        if isinstance(path, int) or path is None:
            return False
        try:
            return os.path.realpath(os.fsdecode(path)) == protected
        except (TypeError, ValueError):
            return False

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                mode is None and isinstance(flags, int) and flags & write_flags
            )
            if writing and is_protected(path):
                raise PermissionError(f"pytest-quest: tests under judgment cannot write {target}")
        elif event in ("os.rename", "os.replace"):
            if is_protected(args[0]) or is_protected(args[1]):
                raise PermissionError(f"pytest-quest: tests under judgment cannot replace {target}")
        elif event in ("os.remove", "os.truncate") and is_protected(args[0]):
            raise PermissionError(f"pytest-quest: tests under judgment cannot change {target}")

    sys.addaudithook(hook)


class VerdictGuard:
    """What the ratchet file held before the tests under judgment ran.

    The tests run in a child process as the same user: nothing stops one
    from writing ``quest.json``.  The parent keeps the bytes it read before
    the run; afterwards, a judged quest whose entry changed was changed by
    no pytest-quest process (another submit of the same quest is refused
    before it writes), so its entry is put back and the verdict is REVIEW.
    A file left unreadable is restored whole (pytest-quest writes
    atomically, so a broken file is never one of its writes).
    """

    def __init__(self, path: Path, quest_id: str) -> None:
        self.path = path
        self.quest_id = quest_id
        self.before = path.read_bytes() if path.exists() else None
        self.facts: list[Fact] = []

    def _entry(self, ratchet: Ratchet) -> dict[str, Any] | None:
        quest = ratchet.quests.get(self.quest_id)
        if quest is None:
            return None
        # A concurrent scan may move a TODO quest and refresh its missing
        # lines; only what the gate and the person actions decide counts.
        data = quest_to_dict(quest)
        return {key: data.get(key) for key in JUDGED_FIELDS}

    def inspect(self) -> list[Fact]:
        """Compare the file with the snapshot; repair a broken file; return tamper facts."""
        if self.before is None:
            return []
        now = self.path.read_bytes() if self.path.exists() else None
        if now == self.before:
            return []
        before = loads(self.before, str(self.path))
        try:
            after = loads(now, str(self.path)) if now is not None else None
        except RatchetFileError:
            after = None
        if after is None:
            _write_back(self.path, self.before)
            self.facts.append(self._fact("the ratchet file was deleted or broken; restored"))
        elif self._entry(after) != self._entry(before):
            self.facts.append(self._fact(f"the entry of {self.quest_id} was changed"))
        return self.facts

    def restore_entry(self, fresh: Ratchet) -> None:
        """Put the judged quest's entry back as it was before the run (under the lock)."""
        if self.before is None or not self.facts:
            return
        before = loads(self.before, str(self.path))
        if self.quest_id in before.quests:
            fresh.quests[self.quest_id] = before.quests[self.quest_id]

    def _fact(self, what: str) -> Fact:
        return Fact(
            check="guard.ratchet_written",
            field=str(self.path.name),
            expected="the ratchet file is written only by pytest-quest while tests are judged",
            actual=f"{what} during the gate's run",
            message=(
                f"{self.path.name} was written during the gate's run ({what}); the entry was "
                "restored and a person must review the tests"
            ),
        )


def _write_back(path: Path, data: bytes) -> None:
    RatchetStore(path).restore(data)


__all__ = ["JUDGED_FIELDS", "PROTECT_ENV", "VerdictGuard", "protect_from_env"]
