"""The mutant in the module's bytecode file, where the judged run's project is a throwaway layer.

Under bwrap's overlay the mutation child compiles each run's mutant (or the probe) into
the module's ``__pycache__`` file, stamped with the source's size and time, and puts the
original back after: every load through the import system runs the mutant while the
source reads as the original.  Only where the child's mount table shows the overlay the
judge named (`Sandbox.overlay`).  Details and limits: docs/judge.md, "The mutant in the
bytecode file, under bwrap".
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import marshal
import os
import types
from dataclasses import dataclass

from pytest_quest.core.mutant_ast import CHANGED, REACHED
from pytest_quest.core.mutant_text import mutant_text
from pytest_quest.core.mutants import changed_value

MOUNTINFO = "/proc/self/mountinfo"
#: The run record's mode where the bytecode file holds each run's code (engine/remote_mutant.py).
ONDISK = "ondisk"
#: The record's modes in which a process puts the reach marks in place.
ARMED = ("mutant", "probe", ONDISK)


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
                if found.get("mode") in ARMED:
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
    space = (
        f"{{'RECORD': {record!r}, 'REACHED': {REACHED!r}, 'CHANGED': {CHANGED!r}, "
        f"'ARMED': {ARMED!r}}}"
    )
    return f"__import__('builtins').__dict__.get({REACHED!r}) or exec({helper!r}, {space})"


@dataclass
class _Original:
    source: bytes
    size: int  # the source's, and its modification time in whole seconds:
    seconds: int  # what a bytecode file's header must record to be taken
    cached: str  # the bytecode file's path
    bytecode: bytes | None  # what it held before the runs (None: no file)


class OnDisk:
    """The mutation child's writer of mutants into the project's bytecode files (one per child)."""

    def __init__(self, root: str, record: str, table: str = MOUNTINFO) -> None:
        self.root = os.path.realpath(root)
        self.record = record
        self.table = table  # the mount table that must show the layer
        self._prelude = prelude(record)
        self._originals: dict[str, _Original | None] = {}
        # Each mutant's (and the probe's) bytecode file, made once.
        self._made: dict[tuple[str, int, int | None], bytes | None] = {}
        self.written = ""

    def writable(self, file: str) -> bool:
        """Whether `file`'s bytecode file is in the throwaway layer (checked once per file)."""
        real = os.path.realpath(file)
        if real not in self._originals:
            self._originals[real] = self._original(real)
        return self._originals[real] is not None

    def _original(self, real: str) -> _Original | None:
        cached = importlib.util.cache_from_source(real)
        folder = os.path.dirname(real)
        if os.path.dirname(cached) != os.path.join(folder, "__pycache__"):
            return None  # PYTHONPYCACHEPREFIX: the bytecode lives outside the project
        if not in_overlay(real, self.root, self.table):
            return None
        try:
            with open(real, "rb") as handle:
                source = handle.read()
            st = os.stat(real)
            bytecode: bytes | None = None
            if os.path.isfile(cached):
                with open(cached, "rb") as handle:
                    bytecode = handle.read()
        except OSError:
            return None
        return _Original(source, st.st_size, int(st.st_mtime), cached, bytecode)

    def _bytecode(self, real: str, start: int, index: int | None) -> bytes | None:
        key = (real, start, index)
        if key not in self._made:
            original = self._originals[real]
            assert original is not None
            made: bytes | None = None
            try:
                text = mutant_text(original.source.decode("utf-8"), start, index, self._prelude)
                if text is not None:
                    code = compile(text, real, "exec", dont_inherit=True)
                    made = _pyc(code, original.seconds, original.size)
            except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
                made = None
            self._made[key] = made
        return self._made[key]

    def write(self, file: str, start: int, index: int | None) -> bool:
        """Mutant `index` (None: the probe) of the function on line `start` into `file`'s bytecode."""
        self.restore()
        real = os.path.realpath(file)
        if not self.writable(real):
            return False
        data = self._bytecode(real, start, index)
        original = self._originals[real]
        assert original is not None
        if data is None:
            return False
        with contextlib.suppress(OSError):  # else the write below fails, and says so
            os.makedirs(os.path.dirname(original.cached), exist_ok=True)
        if _put(original.cached, data):
            self.written = real
        return self.written == real

    def restore(self) -> None:
        """The bytecode file last written as it was before the runs (or none)."""
        if self.written:
            original = self._originals[self.written]
            assert original is not None
            if original.bytecode is not None:
                _put(original.cached, original.bytecode)
            else:
                with contextlib.suppress(OSError):  # the run removed it already
                    os.unlink(original.cached)
            self.written = ""


def _pyc(code: types.CodeType, seconds: int, size: int) -> bytes:
    """A bytecode file of `code` that CPython takes for a source of that time and size (PEP 552)."""
    header = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
    header += (seconds & 0xFFFFFFFF).to_bytes(4, "little") + (size & 0xFFFFFFFF).to_bytes(
        4, "little"
    )
    return header + marshal.dumps(code)


def _put(path: str, data: bytes) -> bool:
    """`data` written over `path` (made if missing) in place, from offset 0 and cut to its length.

    Never truncated to nothing first: on ext4 that flushes the file at its close
    (``auto_da_alloc``), some twenty times slower.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            done = 0
            while done < len(data):
                done += os.pwrite(fd, data[done:], done)
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)
    except OSError:
        return False
    return True
