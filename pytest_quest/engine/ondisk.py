"""The mutant written into the source file itself, where the judged run's project is a throwaway layer.

Under bwrap (engine/sandbox.py) the project tree is an overlay whose writes
vanish with the run.  There the mutation child writes each mutant's source
(core/mutant_text.py) into the function's file while that mutant's test
runs, and the probe's while the probe's does, and puts the original bytes
and times back after it.  Every way of loading the module then runs the
mutant: a reload, ``importlib.util.spec_from_file_location``, ``runpy``, a
process started with ``python -I -S`` and no environment (which skips
coverage.py's start-up hook, engine/remote_mutant.py), and the fresh run
that confirms the kills.

Only where the facts say the file is in such a layer: the judge names the
project's root in the child's instructions when its engine has one
(`Sandbox.overlay`), and the child checks its own mount table: the deepest
mount holding the file must be an overlay mounted at that root.  Landlock
and ``sandbox=off`` have no throwaway layer: the user's files are never
written.

Stale bytecode: CPython takes a ``__pycache__`` file for valid when it
records the source's size and modification time in whole seconds; a mutant
of the same size written in the same second would run the bytecode of the
version before it.  Each distinct text written gets a time of its own (the
original's plus a count, so never one an older version of the file had),
and the original's bytes get the original's times back.

In a process where nothing put the reach marks in place (no start-up hook),
the text's prelude (one statement before the function) defines them: they
read the run record (engine/remote_mutant.py) for the run's marks file.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass

from pytest_quest.core.mutant_ast import CHANGED, REACHED
from pytest_quest.core.mutant_text import mutant_text
from pytest_quest.core.mutants import changed_value

MOUNTINFO = "/proc/self/mountinfo"


def _unescaped(field: str) -> str:
    """A mount table field with its octal escapes (``\\040`` for a space) decoded."""
    out, index = [], 0
    while index < len(field):
        if field[index] == "\\" and field[index + 1 : index + 4].isdigit():
            out.append(chr(int(field[index + 1 : index + 4], 8)))
            index += 4
        else:
            out.append(field[index])
            index += 1
    return "".join(out)


def mounts(table: str = MOUNTINFO) -> list[tuple[str, str]]:
    """Each mount's (mount point, file system type), in the table's order; [] if unreadable."""
    try:
        with open(table, encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        fields, _, rest = line.partition(" - ")
        parts, kind = fields.split(), rest.split()
        if len(parts) >= 5 and kind:
            found.append((_unescaped(parts[4]), kind[0]))
    return found


def in_overlay(path: str, root: str, table: str = MOUNTINFO) -> bool:
    """Whether the deepest mount holding `path` is an overlay mounted at `root`."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    holder: tuple[str, str] | None = None
    for point, kind in mounts(table):
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and (holder is None or len(point) >= len(holder[0])):
            holder = (point, kind)  # a later mount at the same point hides the earlier
    return holder is not None and holder == (top, "overlay")


# The marks for a process where nothing put them in place: the run record says
# which marks file this run's reach goes to.  Run once per process (the names
# stay in builtins); `changed_value`'s own source is appended.
_MARKS = """
from __future__ import annotations
import builtins, hashlib, json, math
MARKS = []
def _marks():
    if not MARKS:
        MARKS.append("")
        try:
            with open(RECORD, "rb") as handle:
                line = handle.read().split(b"\\n", 1)[0]
            digest, _, body = line.partition(b" ")
            if body and hashlib.sha256(body).hexdigest().encode("ascii") == digest:
                found = json.loads(body)
                if found.get("mode") in ("mutant", "probe"):
                    open(str(found["marks"]), "a").close()
        except Exception:
            pass
def reached(value=None):
    _marks()
    return value
def changed(value):
    _marks()
    return changed_value(value)
if not hasattr(builtins, REACHED):
    setattr(builtins, REACHED, reached)
    setattr(builtins, CHANGED, changed)
"""


def prelude(record: str) -> str:
    """The one statement put before the judged function: the marks where none are in place."""
    helper = _MARKS + "\n" + inspect.getsource(changed_value)
    space = f"{{'RECORD': {record!r}, 'REACHED': {REACHED!r}, 'CHANGED': {CHANGED!r}}}"
    return f"__import__('builtins').__dict__.get({REACHED!r}) or exec({helper!r}, {space})"


@dataclass
class _Original:
    data: bytes
    times: tuple[int, int]  # (atime, mtime) in nanoseconds


class OnDisk:
    """The mutation child's writer of mutants into the project's files (one per child)."""

    def __init__(self, root: str, record: str, table: str = MOUNTINFO) -> None:
        self.root = os.path.realpath(root)
        self.record = record
        self.table = table  # the mount table that must show the layer
        self._prelude = prelude(record)
        self._originals: dict[str, _Original | None] = {}
        # Each text written, and the modification time (seconds) it was given.
        self._texts: dict[tuple[str, int, int | None], tuple[bytes, int] | None] = {}
        self._count = 0
        self.written = ""

    def writable(self, file: str) -> bool:
        """Whether `file` is in the throwaway layer (checked once per file)."""
        real = os.path.realpath(file)
        if real not in self._originals:
            original: _Original | None = None
            if in_overlay(real, self.root, self.table):
                try:
                    with open(real, "rb") as handle:
                        data = handle.read()
                    st = os.stat(real)
                    original = _Original(data, (st.st_atime_ns, st.st_mtime_ns))
                except OSError:
                    original = None
            self._originals[real] = original
        return self._originals[real] is not None

    def _text(self, real: str, start: int, index: int | None) -> tuple[bytes, int] | None:
        key = (real, start, index)
        if key not in self._texts:
            original = self._originals[real]
            assert original is not None
            made: tuple[bytes, int] | None = None
            try:
                source = original.data.decode("utf-8")
                text = mutant_text(source, start, index, self._prelude)
            except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
                text = None
            if text is not None:
                self._count += 1
                made = (text.encode("utf-8"), original.times[1] // 10**9 + self._count)
            self._texts[key] = made
        return self._texts[key]

    def write(self, file: str, start: int, index: int | None) -> bool:
        """Mutant `index` (None: the probe) of the function on line `start` into `file`."""
        self.restore()
        real = os.path.realpath(file)
        if not self.writable(real):
            return False
        made = self._text(real, start, index)
        if made is None:
            return False
        data, seconds = made
        original = self._originals[real]
        assert original is not None
        if _put(real, data, (original.times[0], seconds * 10**9)):
            self.written = real
        return self.written == real

    def restore(self) -> None:
        """The original bytes and times back in the file last written."""
        if self.written:
            original = self._originals[self.written]
            assert original is not None
            _put(self.written, original.data, original.times)
            self.written = ""


def _put(path: str, data: bytes, times: tuple[int, int]) -> bool:
    """`data` written over `path` in place (no new name in the project), then its times.

    Written from offset 0 and cut to its length, never truncated to nothing
    first: on ext4 a file emptied and written again is flushed at its close
    (``auto_da_alloc``), 4 ms a write here against 0.2 ms.
    """
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return False
    try:
        done = 0
        while done < len(data):
            done += os.pwrite(fd, data[done:], done)
        os.ftruncate(fd, len(data))
        os.utime(fd, ns=times)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


__all__ = ["MOUNTINFO", "OnDisk", "in_overlay", "mounts", "prelude"]
