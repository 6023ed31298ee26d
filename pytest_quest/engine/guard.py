"""The tests under judgment cannot write the verdict: an audit hook in their process, a check after."""

from __future__ import annotations

import os
import sys
import tempfile
import weakref
from pathlib import Path
from typing import Any

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.journal import Now, Snapshot, content_hash, since, unaccounted
from pytest_quest.core.model import Fact, Ratchet, State
from pytest_quest.core.words import counted
from pytest_quest.engine import view_cache
from pytest_quest.engine.codec import loads, quest_to_dict
from pytest_quest.engine.created_files import CREATED_ENV, track_created
from pytest_quest.engine.gate_signals import SIGNALS_ENV, refuse_gate_signals
from pytest_quest.engine.store import RatchetStore
from pytest_quest.engine.store_help import read_regular
from pytest_quest.engine.witness import Witness

# The tests under judgment run with this variable naming the ratchet file;
# `protect_from_env` makes writes to it fail inside their process.
PROTECT_ENV = "PYTEST_QUEST_PROTECT"
# ...and this one naming a file where each refused write leaves a line, so a
# refused attempt is a REVIEW even though it changed nothing.
REFUSED_ENV = "PYTEST_QUEST_REFUSED"


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class _Protected:
    """The ratchet file's names and identities, and the audit hook refusing writes to them."""

    def __init__(self, target: str) -> None:
        self.target = target
        ratchet = Path(os.path.realpath(target))
        store = RatchetStore(ratchet)
        journal = store.journal_path
        self.names = [
            str(ratchet),
            str(store.lock_path),
            str(store.claims_path),
            os.path.realpath(journal),
            # What status and next show of the file (engine/view_cache.py).
            os.path.realpath(view_cache.path_for(journal)),
        ]
        self.refused_log = os.environ.get(REFUSED_ENV)

    def identities(self) -> set[tuple[int, int]]:
        found = set()
        for name in self.names:
            try:
                st = os.stat(name)
            except OSError:
                continue
            found.add((st.st_dev, st.st_ino))
        return found

    def covers(self, path: Any, dir_fd: Any = None) -> bool:
        if isinstance(path, int) or path is None:
            return False
        try:
            name = os.fsdecode(path)
            if isinstance(dir_fd, int) and dir_fd >= 0 and not os.path.isabs(name):
                # Relative to a folder's descriptor (shutil.rmtree, pytest's clean-up of old
                # tmp_path folders): the file there, not the one of that name in the cwd.
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                return (st.st_dev, st.st_ino) in self.identities()
            if os.path.realpath(name) in self.names:
                return True
            st = os.stat(name)
        except (TypeError, ValueError, OSError):
            return False
        return (st.st_dev, st.st_ino) in self.identities()

    def refuse(self, what: str) -> PermissionError:
        if self.refused_log:
            try:
                fd = os.open(self.refused_log, os.O_WRONLY | os.O_APPEND)
                os.write(fd, f"{os.getpid()} {what}\n".encode())
                os.close(fd)
            except OSError:
                pass
        return PermissionError(f"pytest-quest: tests under judgment cannot {what} {self.target}")

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writing and self.covers(path):
                raise self.refuse("write")
        elif event in ("os.rename", "os.replace", "os.link"):
            # (src, dst, src_dir_fd, dst_dir_fd)
            if self.covers(args[0], args[2]) or self.covers(args[1], args[3]):
                raise self.refuse("link or replace")
        elif event == "os.symlink":
            # (target, link, dir_fd): the target is text, the link is made in dir_fd.
            if self.covers(args[0]) or self.covers(args[1], args[2]):
                raise self.refuse("link or replace")
        elif event in ("os.remove", "os.truncate"):
            # os.remove: (path, dir_fd); os.truncate: (path or descriptor, length).
            if self.covers(args[0], args[1] if event == "os.remove" else None):
                raise self.refuse("change")


def protect_from_env() -> None:
    """Refuse, in this process, every write to the file `PROTECT_ENV` names, its lock, journal
    and kept view.

    An audit hook (PEP 578) raises `PermissionError` on writes, renames,
    removals and links of those files, matched by name and by inode (so a hard
    link is refused too).  A subprocess or C code is `VerdictGuard`'s to catch.
    """
    refuse_gate_signals()
    track_created()
    target = os.environ.get(PROTECT_ENV)
    if target:
        sys.addaudithook(_Protected(target).hook)


class VerdictGuard:
    """The whole ratchet file, watched by identity and content while the judged tests run.

    The tests run as the same user, so nothing stops one writing ``quest.json``.
    The guard snapshots the file under the lock before the run; after it, under
    the lock of the verdict's write (`vet`, then `repair`), the file is accepted
    only when the journal chains from the snapshot to it (core/journal.py);
    otherwise the entries are put back and the verdict is REVIEW
    (``guard.ratchet_written``).  docs/judge.md, "The judged cannot write the verdict".
    """

    def __init__(self, path: Path, quest_id: str, store: RatchetStore | None = None) -> None:
        self.store = store if store is not None else RatchetStore(path)
        self.path = self.store.path
        self.quest_id = quest_id
        self.facts: list[Fact] = []
        self.changed: list[str] = []
        # Each write refused by the audit hook in a judged process leaves a line here.
        fd, name = tempfile.mkstemp(prefix="pytest-quest-refused-")
        os.close(fd)
        self.refusals = Path(name)
        # Each signal at the gate refused in a judged process (engine/gate_signals.py).
        fd, name = tempfile.mkstemp(prefix="pytest-quest-signals-")
        os.close(fd)
        self.signals = Path(name)
        # Each file a judged process creates (engine/created_files.py).
        fd, name = tempfile.mkstemp(prefix="pytest-quest-created-")
        os.close(fd)
        self.created = Path(name)
        # Listening before the snapshot: every write after it is announced.
        self.witness = Witness.start(self.path)
        # A guard dropped without `close` still lets go of its socket and file.
        self._finalizer = weakref.finalize(
            self, _release, self.witness, self.refusals, self.signals, self.created
        )
        self.before, self.snapshot = self.store.locked(self._snapshot)

    def _snapshot(self) -> tuple[bytes | None, Snapshot]:
        data = _read_now(self.path)
        inode, links = _identity(self.path)
        lines = self.store.journal_lines()
        mark = lines[-1] if lines else None
        return data, Snapshot(content_hash(data), inode, links, mark)

    def vet(self, now: bytes | None) -> bytes | None:
        """Judge the file's bytes `now` (read under the lock); the bytes to start from instead.

        Records the facts; hands back the snapshot's bytes when the file no
        longer parses (the repair then starts from them), else None.
        """
        self.facts = []
        if self.before is None:
            return None  # nothing to protect yet: the file did not exist
        inode, links = _identity(self.path)
        # Content a journaled write produced parses: the file is only parsed
        # (the costly part) when the chain does not account for it.
        state = Now(content_hash(now), inode, links, parses=True)
        lines = since(self.store.journal_lines(), self.snapshot.mark)
        vouched = self.witness.snapshot()[0] if self.witness is not None else None
        reasons = unaccounted(self.snapshot, state, lines, vouched)
        after = _parsed(now, self.path) if reasons else None
        if reasons and after is None:
            state = Now(state.hash, inode, links, parses=False)
            reasons = unaccounted(self.snapshot, state, lines, vouched)
        refused = _read_lines(self.refusals)
        if refused:
            reasons.append(
                f"a judged process tried to {refused[0].split(' ', 1)[-1]} it "
                f"({counted(len(refused), 'attempt')}, refused)"
            )
        if not reasons:
            return None
        before = loads(self.before, str(self.path))
        self.changed = changed_entries(before, after) if after is not None else ["the whole file"]
        self.facts.append(self._fact(reasons))
        return self.before if after is None else None

    def judged_env(self) -> dict[str, str]:
        """The variables the judged processes run with: the ratchet file and the guard's logs."""
        return {
            PROTECT_ENV: str(self.path),
            REFUSED_ENV: str(self.refusals),
            SIGNALS_ENV: str(self.signals),  # nor kill the gate (engine/gate_signals.py)
            CREATED_ENV: str(self.created),
        }

    def signal_lines(self) -> list[str]:
        """The signals at the gate a judged process tried to send (refused), one line each."""
        return _read_lines(self.signals)

    def close(self) -> None:
        """Stop listening for announced writes and drop the refusals file (the verdict is recorded)."""
        self._finalizer()
        self.witness = None

    def repair(self, fresh: Ratchet) -> None:
        """Undo, in `fresh` (the ratchet being written under the lock), what `vet` found forged."""
        if self.before is None or not self.facts:
            return
        undo(loads(self.before, str(self.path)), fresh)

    def inspect(self) -> list[Fact]:
        """`vet` under the lock, on its own (a broken file is written back at once)."""

        def check() -> bytes | None:
            return self.vet(_read_now(self.path))

        start = self.store.locked(check)
        if start is not None:
            _write_back(self.path, start)
        return self.facts

    def _fact(self, reasons: list[str]) -> Fact:
        changed = ", ".join(self.changed) or "no entry"
        why = "; ".join(reasons)
        return Fact(
            check="guard.ratchet_written",
            field=str(self.path.name),
            expected="the ratchet file is written only by pytest-quest while tests are judged",
            actual=f"changed during the gate's run: {changed} ({why})",
            message=(
                f"{self.path.name} was written during the gate's run by something other than "
                f"pytest-quest ({why}); changed: {changed}. Every changed entry was put back "
                "as it was before the run and a person must review the tests"
            ),
        )


def changed_entries(before: Ratchet, after: Ratchet) -> list[str]:
    """The quest ids (and top-level fields) whose value differs between two ratchets."""
    changed = [
        qid
        for qid in sorted(set(before.quests) | set(after.quests))
        if qid not in before.quests
        or qid not in after.quests
        or quest_to_dict(before.quests[qid]) != quest_to_dict(after.quests[qid])
    ]
    changed += [name for name in _BASELINE_FIELDS if getattr(before, name) != getattr(after, name)]
    return changed


# What a scan records and the gate compares with: put back whole after a forgery.
_BASELINE_FIELDS = ("test_files", "coverage_config", "excluded_functions", "removed", "scanned_at")


def undo(before: Ratchet, fresh: Ratchet) -> None:
    """Put `fresh` back to `before`, keeping only what no forgery can gain from.

    Every quest of `before` gets its entry back; a quest added since is kept
    only as a TODO (what a scan issues; a forged PASS is dropped, and a later
    scan adds it again); the scan's baseline fields are put back; the active
    quest stays if it still exists.  A legitimate write made in the same
    window (another quest's verdict, a scan) is undone with the forgery.
    """
    for qid, quest in before.quests.items():
        fresh.quests[qid] = quest
    for qid in [qid for qid in fresh.quests if qid not in before.quests]:
        if fresh.quests[qid].state is not State.TODO:
            del fresh.quests[qid]
    for name in _BASELINE_FIELDS:
        setattr(fresh, name, getattr(before, name))
    if fresh.active not in fresh.quests:
        fresh.active = before.active if before.active in fresh.quests else None


def _parsed(data: bytes | None, path: Path) -> Ratchet | None:
    if data is None:
        return None
    try:
        return loads(data, str(path))
    except RatchetFileError:
        return None


def _release(witness: Witness | None, *files: Path) -> None:
    for path in files:
        path.unlink(missing_ok=True)
    if witness is not None:
        witness.close()


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _identity(path: Path) -> tuple[int | None, int]:
    """The file's inode and link count (through a symbolic link); (None, 0) when missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None, 0
    return st.st_ino, st.st_nlink


def _write_back(path: Path, data: bytes) -> None:
    RatchetStore(path).restore(data)


def _read_now(path: Path) -> bytes | None:
    """The file's bytes now; a special file put in its place reads as damage (never blocks)."""
    try:
        return read_regular(path)
    except FileNotFoundError:
        return None
    except (OSError, RatchetFileError):
        return b""
