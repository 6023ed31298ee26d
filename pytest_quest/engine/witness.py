"""Who wrote the ratchet file: writers announce their journal lines to running guards, and the kernel names the sender.

Linux only (abstract Unix sockets, ``SO_PEERCRED``); elsewhere nothing is announced or vouched for.
"""

from __future__ import annotations

import hashlib
import os
import socket
import struct
import sys
import threading
from pathlib import Path

PREFIX = "pytest-quest-guard-"
_TIMEOUT = 2.0
_MAX_LINE = 4096


def available() -> bool:
    return sys.platform.startswith("linux") and hasattr(socket, "SO_PEERCRED")


def _key(path: Path) -> str:
    return hashlib.sha256(os.path.realpath(path).encode("utf-8")).hexdigest()[:24]


class Witness:
    """A judge's listener: the journal lines announced to it, split by who sent them.

    A line counts as vouched for when the process that sent it (named by the
    kernel, not by the line) is not the judge's descendant: a process the
    judged tests started is one, as long as it is not orphaned away from the
    judge (the judge is a child subreaper, engine/reaper.py, so orphans of
    its children are reparented to it).
    """

    def __init__(self, path: Path) -> None:
        self.vouched: set[str] = set()
        self.refused: dict[str, int] = {}
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind("\0" + f"{PREFIX}{_key(path)}-{os.getpid()}")
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="quest-witness")
        self._thread.start()

    @classmethod
    def start(cls, path: Path) -> Witness | None:
        if not available():
            return None
        try:
            return cls(path)
        except OSError:
            return None

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                try:
                    self._receive(conn)
                except OSError:
                    continue

    def _receive(self, conn: socket.socket) -> None:
        conn.settimeout(_TIMEOUT)
        raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid = struct.unpack("3i", raw)[0]
        data = b""
        while not data.endswith(b"\n") and len(data) < _MAX_LINE:
            chunk = conn.recv(_MAX_LINE)
            if not chunk:
                break
            data += chunk
        line = data.decode("utf-8", errors="replace")
        # Checked while the sender waits for the answer: it is alive, its pid is its own.
        judged = descends_from(pid, os.getpid())
        with self._lock:
            if judged:
                self.refused[line] = pid
            else:
                self.vouched.add(line)
        conn.sendall(b"ok\n")

    def snapshot(self) -> tuple[set[str], dict[str, int]]:
        with self._lock:
            return set(self.vouched), dict(self.refused)

    def close(self) -> None:
        self._stop.set()
        try:
            # Wakes the listener blocked in accept() now (a close alone leaves it
            # there until its 0.2 s timeout, which every submit waited for).
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass
        self._thread.join(timeout=1.0)


def descends_from(pid: int, ancestor: int) -> bool:
    """True when `pid` is a descendant of `ancestor` (not `ancestor` itself), by /proc."""
    seen = 0
    while pid > 1 and seen < 4096:
        parent = _parent(pid)
        if parent is None:
            return False
        if parent == ancestor:
            return True
        pid, seen = parent, seen + 1
    return False


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None


def announce(path: Path, line: str) -> None:
    """Tell every guard watching `path` about this journal line (and wait for each to hear it)."""
    if not available():
        return
    wanted = "@" + PREFIX + _key(path) + "-"
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as handle:
            names = {row.split()[-1] for row in handle if wanted in row}
    except OSError:
        return
    for name in sorted(names):
        if not name.startswith(wanted):
            continue
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(_TIMEOUT)
                sock.connect("\0" + name[1:])
                sock.sendall(line.encode("utf-8"))
                sock.recv(16)
        except OSError:
            continue
