"""Small helpers of ``engine/store.py``: what a special file is called, old journals pruned."""

from __future__ import annotations

import errno
import gc
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_quest.core.errors import RatchetFileError

if TYPE_CHECKING:
    from pytest_quest.core.model import Ratchet


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
    prune_older(folder, "*.journal", JOURNAL_MAX_AGE)


def prune_older(folder: Path, pattern: str, max_age: float) -> None:
    """Remove the files of `folder` matching `pattern` that nobody wrote for `max_age` seconds."""
    horizon = time.time() - max_age
    for old in folder.glob(pattern):
        try:
            if old.stat().st_mtime < horizon:
                old.unlink()
        except OSError:
            continue


def save_cache(target: Path, data: bytes, max_age: float) -> None:
    """Write `data` to the cache file `target` atomically; a cache that cannot be written is
    no error.  A new file prunes its folder's files of its suffix older than `max_age`."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            prune_older(target.parent, "*" + target.suffix, max_age)
        fd, name = tempfile.mkstemp(prefix=".tmp-", suffix=target.suffix, dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(name, target)
        except BaseException:
            try:
                os.unlink(name)
            except OSError:
                pass
            raise
    except OSError:
        return


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


def files_outside(ratchet: Ratchet, root: Path) -> str:
    """The first quest whose `file` resolves outside `root` or its recorded sources, as a fault.

    Symbolic links are resolved: a link in the source folder pointing out of
    the project is refused like ``../../etc/passwd``.  The sources are the
    policy's (else coverage's ``[run] source``) that are folders; a source
    that is no folder (a package name) leaves only the rootdir check.
    """
    real_root = os.path.realpath(root)
    recorded = list(ratchet.policy.sources) if ratchet.policy and ratchet.policy.sources else []
    if not recorded:
        configured = ratchet.coverage_config.get("run:source")
        recorded = (
            [s for s in configured if isinstance(s, str)] if isinstance(configured, list) else []
        )
    folders = [os.path.realpath(os.path.join(real_root, s)) for s in recorded]
    if not all(os.path.isdir(folder) for folder in folders):
        folders = []
    # Each file once (realpath asks the file system); the first quest in id order is named.
    real = _resolver(real_root)
    faults = {
        file: fault
        for file in {quest.file for quest in ratchet.quests.values()}
        if (fault := _outside(real(file), real_root, folders))
    }
    if not faults:
        return ""
    qid = min(qid for qid, quest in ratchet.quests.items() if quest.file in faults)
    file = ratchet.quests[qid].file
    return f"quests[{qid!r}].file: {file!r} {faults[file]}"


def _resolver(root: str) -> Callable[[str], str]:
    """``realpath(root/file)``, each folder resolved once (1,250 files: 7,500 lstat calls less)."""
    folders: dict[str, str] = {}

    def real(file: str) -> str:
        head, name = os.path.split(file)
        if head not in folders:
            folders[head] = os.path.realpath(os.path.join(root, head))
        path = os.path.join(folders[head], name)
        plain = name not in ("", ".", "..") and not os.path.islink(path)
        return path if plain else os.path.realpath(os.path.join(root, file))

    return real


def _outside(real: str, root: str, folders: list[str]) -> str:
    if not _within(real, root):
        return f"resolves to {real}, outside the rootdir {root}"
    if folders and not any(_within(real, folder) for folder in folders):
        shown = ", ".join(os.path.relpath(folder, root) for folder in folders)
        return f"is not under the recorded source ({shown})"
    return ""


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def read_regular(path: Path) -> bytes:
    """The bytes of `path`, refusing a FIFO, device or socket before reading from it.

    Opened without blocking (a FIFO with no writer would hang a plain open
    or read), then checked on the open descriptor: no window between the
    check and the read.  Raises `RatchetFileError` for a special file and
    `OSError` as reading a file does.
    """
    _refuse_special(path, os.stat(path).st_mode)  # before opening: a device may act on open
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        _refuse_special(path, (found := os.fstat(fd)).st_mode)  # swapped in: still never read
        chunks: list[bytes] = []
        while True:  # one read of the whole file: no copy to join
            chunk = os.read(fd, max(found.st_size + 1, 1 << 20))
            if not chunk:
                data = b"".join(chunks)
                if len(data) == found.st_size:
                    last_read[:] = [(os.path.realpath(path), *stamp(found)), data]
                return data
            chunks.append(chunk)
    finally:
        os.close(fd)


def stamp(found: os.stat_result) -> tuple[int, int, int, int, int]:
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


#: The file `read_regular` read last, by real path and stamp, and its bytes: a command that
#: read the head of the ratchet file at start-up (plugin/options.py) does not read it again
#: only to show it (`RatchetStore.read_bytes`).
last_read: list[Any] = [None, b""]


def _refuse_special(path: Path, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
    if not stat.S_ISREG(mode):
        raise RatchetFileError(
            str(path),
            f"is a {special_kind(mode)}, not a regular file; it was not read",
            "point --quest-file at a regular file",
        )


#: The hidden folder beside the ratchet file that holds its lock files.
LOCK_FOLDER = ".quest"
_LOCK_FOLDER_IGNORE = "# pytest-quest's lock files (engine/store.py): never committed.\n*\n"


def lock_file(ratchet: Path, suffix: str) -> Path:
    """The lock file of the ratchet file at `ratchet` ending in `suffix` (``.lock``,
    ``.judging.lock``): in `LOCK_FOLDER` beside it, out of the project's own listing."""
    return ratchet.parent / LOCK_FOLDER / (ratchet.name + suffix)


def make_lock_folder(lock: Path) -> None:
    """Create `lock`'s folder, with a ``.gitignore`` so that git lists nothing of it.

    Every process of the ratchet file makes the same folder; a second one finds it
    there.  OSError when the ratchet file's folder cannot be written.
    """
    lock.parent.mkdir(exist_ok=True)
    try:
        with open(lock.parent / ".gitignore", "x", encoding="utf-8") as handle:
            handle.write(_LOCK_FOLDER_IGNORE)
    except FileExistsError:
        pass


def unwritable(path: Path) -> RatchetFileError | None:
    """Why the existing ratchet file at `path` cannot be written, with the fix; None if it can."""
    if not path.stat().st_mode & stat.S_IWUSR:
        # The mode bit is checked even for root (who may write anyway):
        # a read-only ratchet file is a person's decision to respect.
        return RatchetFileError(
            str(path), "is read-only", "make it writable with chmod u+w to record results"
        )
    if os.access(path, os.W_OK):
        return None
    locked = locked_attribute(path)
    if locked is not None:
        name, command = locked
        return RatchetFileError(
            str(path),
            f"is {name}: a file attribute forbids changing it, whatever its mode",
            f"clear it with `sudo {command} {path}` to record results",
        )
    return RatchetFileError(
        str(path),
        "cannot be written by this user",
        "give this user write access to it, as its owner or through its group, to record results",
    )


# Linux's FS_IOC_GETFLAGS ioctl and the two attributes that refuse a rename over the file.
_GETFLAGS = 0x80086601
_LINUX_ATTRIBUTES = ((0x10, "immutable", "chattr -i"), (0x20, "append-only", "chattr -a"))


def locked_attribute(path: Path) -> tuple[str, str] | None:
    """The file attribute that forbids writing `path` whatever its mode, and the command that
    clears it (``("immutable", "chattr -i")``); None when there is none or it cannot be read.
    """
    flags = getattr(_stat_or_none(path), "st_flags", None)
    if flags is not None:  # BSD, macOS: chflags
        if flags & (stat.UF_IMMUTABLE | stat.SF_IMMUTABLE):
            return "immutable", "chflags nouchg,noschg"
        if flags & (stat.UF_APPEND | stat.SF_APPEND):
            return "append-only", "chflags nouappnd,nosappnd"
        return None
    try:
        import fcntl  # POSIX only
        import struct

        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (ImportError, OSError):
        return None
    try:
        value = struct.unpack("l", fcntl.ioctl(descriptor, _GETFLAGS, struct.pack("l", 0)))[0]
    except OSError:  # not Linux, or a file system without attributes
        return None
    finally:
        os.close(descriptor)
    for bit, name, command in _LINUX_ATTRIBUTES:
        if value & bit:
            return name, command
    return None


def _stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off meanwhile (it was on: on again after).

    Reading or writing 50,000 quests makes millions of objects and no cycle;
    the collector's passes over them cost a third of the time.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
