"""The ratchet file on disk: validated reads, locked read-modify-write, atomic writes, claims.

The guarantees, every error message and the tests that prove them: docs/reliability.md.
"""

from __future__ import annotations

import errno
import glob
import hashlib
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from filelock import FileLock

if sys.platform != "win32":
    import fcntl
    import pwd

from pytest_quest.core.errors import LockTimeoutError, QuestUsageError, RatchetFileError
from pytest_quest.core.model import Ratchet
from pytest_quest.core.seal import mark_seals, sealed_file
from pytest_quest.engine.store_help import (
    file_stamp,
    files_outside,
    lock_file,
    make_lock_folder,
    read_regular,
    unchanged,
    unwritable,
)
from pytest_quest.engine.store_help import last_read as _last_read
from pytest_quest.engine.store_help import prune_journals as _prune_journals
from pytest_quest.engine.store_help import stamp as _stamp

# The codecs and the journal are imported by the first read or write that needs them:
# `status` drawing its kept view (engine/view_cache.py) decodes and writes nothing.


def loads(raw: str | bytes, path: str = "quest.json") -> Ratchet:
    from pytest_quest.engine.codec import loads as decode

    return decode(raw, path)


def loads_lazy(raw: str | bytes, path: str = "quest.json") -> Ratchet:
    from pytest_quest.engine.codec import loads as decode

    return decode(raw, path, lazy=True)


def dump_bytes(ratchet: Ratchet) -> bytes:
    from pytest_quest.engine.codec import dump_bytes as encode

    return encode(ratchet)


TMP_PREFIX = ".quest-tmp-"
# The journal is cut to its last JOURNAL_KEEP lines past JOURNAL_MAX_BYTES (a guard needs no more).
JOURNAL_MAX_BYTES = 64 * 1024
JOURNAL_KEEP = 200

T = TypeVar("T")


class RatchetStore:
    """The ratchet file at `path`, with its lock ``.quest/NAME.lock`` beside it.

    `load` reads without the lock (a reader sees the old or the new file,
    thanks to the atomic rename); `update` takes the lock, re-reads, applies
    a change and writes atomically.  The lock is only held for that
    read-modify-write, never while tests run.
    """

    def __init__(self, path: Path, lock_timeout: float = 30.0, root: Path | None = None) -> None:
        self.path = Path(path)
        self.lock_timeout = lock_timeout
        #: The rootdir: every quest's `file` must resolve inside it (None: not checked).
        self.root = root
        #: Times this store replaced the file, and of them a submit's begun marks (no outcome).
        self.writes = 0
        self.marks = 0
        #: The bytes `load` last read and the ratchet they hold (engine/active.py).
        self.seen: tuple[bytes, Ratchet] | None = None
        self.stamp: tuple[int, int, int] | None = None  # the file's when `load` read it
        #: Called after `update` wrote, lock released, with the ratchet and the bytes written
        #: (app/context.py keeps status's view of them, engine/view_cache.py); errors ignored.
        self.after_write: Callable[[Ratchet, bytes], None] | None = None

    @property
    def lock_path(self) -> Path:
        return lock_file(self.path, ".lock")

    @property
    def temp_prefix(self) -> str:
        """Prefix of this file's temporary files (per file: two ratchet files may share a folder)."""
        return f"{TMP_PREFIX}{self.path.name}-"

    def exists(self) -> bool:
        return self.path.exists()

    def load(self, *, lazy: bool = False) -> Ratchet:
        """The current ratchet, or an empty one when the file does not exist yet (`lazy`: to read)."""
        stamp, raw = file_stamp(self.path), self._read_bytes()
        if raw is None:
            return Ratchet()
        self.seen = (raw, self._vetted((loads_lazy if lazy else loads)(raw, str(self.path))))
        self.stamp = stamp
        return self.seen[1]

    def _vetted(self, ratchet: Ratchet) -> Ratchet:
        if self.root is not None:
            fault = files_outside(ratchet, self.root)
            if fault:
                raise RatchetFileError(
                    str(self.path),
                    fault,
                    "restore it from version control, or delete it and run `pytest --quest scan`",
                )
        return ratchet

    @property
    def journal_path(self) -> Path:
        """The file's journal (core/journal.py) in the user's cache, named by its real path."""
        key = hashlib.sha256(os.path.realpath(self.path).encode("utf-8")).hexdigest()[:32]
        return journal_folder() / f"{key}.journal"

    def update(
        self,
        change: Callable[[Ratchet], T],
        *,
        vet: Callable[[bytes | None], bytes | None] | None = None,
    ) -> T:
        """Apply `change` to the freshly re-read ratchet under the lock, then write it.

        `change` may raise to abort; nothing is written then.  The file is only
        rewritten when its serialized content actually changed.  A lock that
        cannot be taken within `lock_timeout` seconds raises `LockTimeoutError`
        naming the lock file; a file or folder that cannot be written raises
        `RatchetFileError`, and the old file stays as it was.

        `vet`, when given, sees the file's bytes first (under the lock) and
        may hand back other bytes to start from (a guard undoing a forgery);
        the write is then made even when it equals those bytes.
        """
        self._check_writable()
        # Read (not again when the file is as `load` read it) and validated before the lock,
        # held then for the change and the write: the same bytes are not validated again.
        early = (unchanged(self) or self._read_bytes()) if vet is None else None
        known = self._vetted(loads(early, str(self.path))) if early is not None else None
        written: tuple[Ratchet, bytes] | None = None
        lock = self._acquire_lock()
        try:
            before = self._read_bytes()
            start = vet(before) if vet is not None else None
            base = start if start is not None else before
            if known is not None and base == early:
                ratchet = known
            else:
                ratchet = (
                    self._vetted(loads(base, str(self.path))) if base is not None else Ratchet()
                )
            legacy = not sealed_file(ratchet)
            result = change(ratchet)
            if base is None and ratchet == Ratchet():
                # Nothing to record (say, the file was deleted under a `next`):
                # never create an empty ratchet file.
                return result
            try:
                after = dump_bytes(ratchet)
                # A write marks the PASS seals (core/seal.py); a change that changes nothing
                # is still no write.
                if after != before and mark_seals(ratchet, legacy=legacy):
                    after = dump_bytes(ratchet)
            except ValueError as exc:  # NaN or Infinity: not JSON, never written
                raise RatchetFileError(
                    str(self.path),
                    f"refused to write a value that is not JSON: {exc}",
                    "nothing was written; report this as a bug of pytest-quest",
                ) from None
            if after != before:
                self._write_atomic(after, read=before)
                written = (ratchet, after)
        finally:
            lock.release()
        if written is not None and self.after_write is not None:
            try:
                self.after_write(*written)
            except Exception:  # a cache: the next read rebuilds it
                pass
        return result

    def restore(self, data: bytes) -> None:
        """Put back an earlier, valid content of the file, under the lock and atomically.

        Used when something other than pytest-quest broke the file (a test
        under judgment writing it); `data` is validated first.
        """
        loads(data, str(self.path))
        self._check_writable()
        lock = self._acquire_lock()
        try:
            self._write_atomic(data, read=self._read_bytes_or_none())
        finally:
            lock.release()

    def locked(self, read: Callable[[], T]) -> T:
        """`read()` with the lock held (a guard's snapshot: the file and journal agree)."""
        lock = self._acquire_lock()
        try:
            return read()
        finally:
            lock.release()

    def journal_lines(self) -> list[str]:
        """The journal's lines (none when it does not exist or cannot be read)."""
        try:
            return self.journal_path.read_text(encoding="utf-8", errors="replace").splitlines(True)
        except OSError:
            return []

    def _journal(self, read: bytes | None, wrote: bytes, inode: int) -> None:
        """Append this write to the journal (under the lock); cut the journal back when long.

        A journal that cannot be written costs nothing but a guard's trust:
        a guard watching the file then reports the write as not pytest-quest's.
        """
        from pytest_quest.core.journal import Entry, content_hash, trimmed
        from pytest_quest.engine.witness import announce

        entry = Entry(content_hash(read), content_hash(wrote), inode, os.getpid(), time.time())
        path = self.journal_path
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not path.exists():
                _prune_journals(path.parent)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, entry.line().encode("utf-8"))
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
            announce(self.path, entry.line())
            if size > JOURNAL_MAX_BYTES:
                kept = "".join(trimmed(self.journal_lines(), JOURNAL_KEEP))
                tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
                tmp.write_text(kept, encoding="utf-8")
                os.replace(tmp, path)
        except OSError:
            pass

    def replace_if_unchanged(self, read: bytes, data: bytes) -> bool:
        """Under the lock: `data` replaces the file if it still holds `read` (False: it did not)."""
        self._check_writable()
        lock = self._acquire_lock()
        try:
            if self._read_bytes() != read:
                return False
            self._write_atomic(data, read=read)
            return True
        finally:
            lock.release()

    def _read_bytes_or_none(self) -> bytes | None:
        try:
            return self._read_bytes()
        except RatchetFileError:
            return None

    def _acquire_lock(self) -> FileLock:
        """The ratchet file's lock, taken; a clear error when it cannot be had in time."""
        import filelock  # on the first lock: a command that only reads never takes one

        lock = filelock.FileLock(str(self.lock_path), timeout=self.lock_timeout)
        try:
            make_lock_folder(self.lock_path)
            lock.acquire()
        except filelock.Timeout:
            raise LockTimeoutError(
                f"{self.lock_path}: could not take the ratchet file's lock within "
                f"{self.lock_timeout:g}s; another process holds it (a running pytest-quest "
                "command). Retry when it is done, or raise --quest-lock-timeout"
            ) from None
        except OSError as exc:
            raise RatchetFileError(
                str(self.lock_path),
                f"the lock file cannot be created: {exc.strerror or exc}",
                "make the ratchet file's folder writable",
            ) from None
        return lock

    def read_bytes(self) -> bytes | None:
        """The file's bytes (None: no file), for showing: those this process last read of it
        when its inode, size, modification and change times are still the same."""
        try:
            found = os.stat(self.path)
        except OSError:
            return self._read_bytes()
        if _last_read[0] == (os.path.realpath(self.path), *_stamp(found)):
            data: bytes = _last_read[1]
            return data
        return self._read_bytes()

    def _read_bytes(self) -> bytes | None:
        try:
            return read_regular(self.path)
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise RatchetFileError(
                str(self.path), "is a folder, not a file", "point --quest-file at a file"
            ) from None
        except OSError as exc:
            raise RatchetFileError(
                str(self.path),
                f"cannot be read: {exc.strerror or exc}",
                "make it readable with chmod u+r",
            ) from None

    def check_writable(self) -> None:
        """Raise `RatchetFileError` when a write would be refused (before asking anyone to act)."""
        self._check_writable()

    def _check_writable(self) -> None:
        folder = self.path.parent
        if not folder.is_dir():
            raise RatchetFileError(
                str(self.path),
                f"its folder {folder} does not exist",
                "create the folder or point --quest-file elsewhere",
            )
        if self.path.exists():
            refused = unwritable(self.path)
            if refused is not None:
                raise refused

    def _write_atomic(self, data: bytes, *, read: bytes | None) -> None:
        """Replace the file with `data`: all of it or nothing, even on a crash.

        SQLite's discipline in small: write a temporary file in the same
        folder (a rename is only atomic within one file system), fsync it,
        rename it over the old file, then fsync the folder so the rename
        itself survives a power loss.  The write is journaled: `read` is the
        content it replaced.
        """
        # Write through a symbolic link to its target, keeping the link.
        target = Path(os.path.realpath(self.path))
        folder = target.parent
        self.clean_stale_temp_files()
        try:
            fd, tmp_name = tempfile.mkstemp(prefix=self.temp_prefix, suffix=".json", dir=folder)
        except OSError as exc:
            raise RatchetFileError(
                str(self.path),
                f"cannot write a temporary file in {folder}: {exc.strerror or exc}",
                "make the folder writable",
            ) from None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if target.exists():
                os.chmod(tmp_name, stat.S_IMODE(target.stat().st_mode))
            else:
                os.chmod(tmp_name, 0o644)
            inode = os.stat(tmp_name).st_ino
            os.replace(tmp_name, target)
            self.writes += 1
        except BaseException as exc:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise RatchetFileError(
                    str(self.path),
                    f"could not be written: {exc.strerror or exc}; the old file is unchanged",
                    "free disk space or fix the folder's permissions, then run the command again",
                ) from None
            raise
        _fsync_folder(folder)
        self._journal(read, data, inode)

    @property
    def claims_path(self) -> Path:
        return lock_file(self.path, ".judging.lock")

    def claim(self, quest_id: str) -> None:
        """Claim `quest_id` for judging until this process ends; refuse if another holds it.

        Two submits of one quest would both judge it from the same state.  The
        claim is a POSIX record lock on one byte (chosen by the quest id) of
        ``.quest/quest.json.judging.lock``: the kernel drops it when the process
        dies, so it never goes stale.
        """
        # The claim is made to record a verdict: say now, before the tests
        # run, when that cannot be written.
        self._check_writable()
        if sys.platform == "win32":  # pragma: no cover - no fcntl record locks
            return
        key = os.path.realpath(self.claims_path)
        fd = _CLAIM_FDS.get(key)
        if fd is None:
            try:
                make_lock_folder(self.claims_path)
                fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise RatchetFileError(
                    str(self.claims_path),
                    f"cannot be opened: {exc.strerror or exc}",
                    "make the ratchet file's folder writable",
                ) from None
            # Closing any descriptor of the file drops every record lock this
            # process holds on it: one descriptor per file, open for good.
            _CLAIM_FDS[key] = fd
        digest = hashlib.sha256(quest_id.encode("utf-8")).digest()
        offset = int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset, os.SEEK_SET)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN):
                return  # a file system without record locks: no claim, as on Windows
            raise QuestUsageError(
                f"quest {quest_id} is being judged by another process right now; "
                "wait for it to finish, then run `pytest --quest next`"
            ) from None

    def stale_temp_files(self) -> list[Path]:
        """Temporary files of this ratchet file that a killed writer left behind."""
        folder = Path(os.path.realpath(self.path)).parent
        return sorted(folder.glob(glob.escape(self.temp_prefix) + "*.json"))

    def clean_stale_temp_files(self) -> None:
        """Remove temporary files a killed writer left behind.

        Only called with the lock held: no live writer of this file has a
        temporary file then.  Readers never look at them.
        """
        for stale in self.stale_temp_files():
            try:
                stale.unlink()
            except OSError:
                pass


_CLAIM_FDS: dict[str, int] = {}


def journal_folder() -> Path:
    """Where journals live: the user's own cache folder (by the account, not ``$HOME``)."""
    if sys.platform == "win32":  # pragma: no cover
        home = Path.home()
    else:
        home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    return home / ".cache" / "pytest-quest" / "journals"


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
