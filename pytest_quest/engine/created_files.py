"""Files a judged run created, read back by a later run: an audit hook in the gate's children.

A test comparing with answers it saved on its first run kills every mutant.  Each gate
child logs the files a judged process creates (`CREATED_ENV`); a test that reads one in a
probe or mutant run before writing it is REVIEW (``mutation.stale_read``).  Limits:
docs/judge.md, "Files the judged run created, read back".
"""

from __future__ import annotations

import os
import sys
from typing import Any

# The judge names the file where each file created by a judged process leaves a line.
CREATED_ENV = "PYTEST_QUEST_CREATED"

# Audit events whose second argument is a name they create (os.replace raises "os.rename").
_MADE_BY_NAME = frozenset({"os.rename", "os.link", "os.symlink"})
_HYPOTHESIS = os.sep + ".hypothesis" + os.sep
_WRITE = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def _writing(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return mode is None and isinstance(flags, int) and bool(flags & _WRITE)


class CreatedFiles:
    """This process's side: log what it creates; in a run, note reads of what earlier runs created."""

    def __init__(self, log: str) -> None:
        self.log = log
        self.current = ""
        self.known: set[str] = set()
        self.written: set[str] = set()
        self.found: dict[str, str] = {}
        self._busy = False

    def begin(self, nodeid: str) -> None:
        """A run of test `nodeid` starts: files created before it (any process) are known."""
        self.known = set(_read_lines(self.log))
        self.written = set()
        self.current = nodeid

    def end(self) -> None:
        self.current = ""

    def _seen(self, path: Any, mode: Any, flags: Any) -> None:
        writing = _writing(mode, flags)
        if not isinstance(path, (str, bytes)) or not (writing or self.current):
            return
        name = os.fsdecode(path)
        if "__pycache__" in name or name.endswith(".pyc") or _HYPOTHESIS in name:
            # Hypothesis's own folder (its example database, its caches): replaying
            # a saved example in a later run is what it is for.
            return
        real = os.path.realpath(name)
        if real == os.path.realpath(self.log):
            return
        if writing:
            if self.current:
                self.written.add(real)
            if not os.path.exists(real):
                fd = os.open(self.log, os.O_WRONLY | os.O_APPEND)
                try:
                    os.write(fd, (real + "\n").encode("utf-8", "surrogateescape"))
                finally:
                    os.close(fd)
        elif self.current and real in self.known and real not in self.written:
            self.found.setdefault(
                self.current, f"read {real}, a file an earlier run of this submission created"
            )

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self._busy:
            return
        if event == "open" and len(args) >= 3:
            seen = args[:3]
        elif event in _MADE_BY_NAME and len(args) >= 2:
            # A snapshot written beside and renamed (os.replace) or linked into
            # place creates its name just as an open does.
            seen = (args[1], "w", None)
        else:
            return
        self._busy = True
        try:
            self._seen(*seen)
        except Exception:  # a hook must not break the test it watches
            pass
        finally:
            self._busy = False


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "surrogateescape").splitlines()
    except OSError:
        return []


# The one watcher of this process (an audit hook cannot be removed).
_CREATED: list[CreatedFiles] = []


def track_created() -> CreatedFiles | None:
    """In a judged process: log the files it creates (`CREATED_ENV`); None without the variable."""
    if _CREATED:
        return _CREATED[0]
    log = os.environ.get(CREATED_ENV)
    if not log:
        return None
    _CREATED.append(CreatedFiles(log))
    sys.addaudithook(_CREATED[0].hook)
    return _CREATED[0]
