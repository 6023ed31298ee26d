"""Nothing a judged test starts outlives its run: a reaping shim around each gate child.

Each gate child runs under a small shim (``SHIM``) that is a Linux child
subreaper: when the child ends, or the shim is told to stop, or the judge
dies (``PR_SET_PDEATHSIG``), it kills and reaps every descendant, detached
ones included.  The judge is a subreaper too and sweeps what is left after
each run (`kill_descendants`), in case the tests killed the shim.  Without
``prctl`` only the process group is killed: docs/judge.md, "The trust boundary".
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

from pytest_quest.engine.channel import MOVE_CHANNEL

PR_SET_CHILD_SUBREAPER = 36

# The shim, run as `python -I -c SHIM <judge pid> <channel ends W,R or -> -- command...`.
# It imports nothing of pytest-quest or the project, so it starts fast; the command
# gets the channel at engine/channel.py's CHILD_FDS.
SHIM = (
    MOVE_CHANNEL
    + r"""
import ctypes, os, signal, sys, time

def prctl(option, value):
    # The program's own symbols hold libc's prctl: no `ldconfig -p` run (find_library's).
    for name in (None, "libc.so.6"):
        try:
            libc = ctypes.CDLL(name, use_errno=True)
            return libc.prctl(option, value, 0, 0, 0) == 0
        except (OSError, AttributeError):
            continue
    return False

def children_of(pid):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found

def descendants(pid):
    out, todo = [], [pid]
    while todo:
        kids = children_of(todo.pop())
        out += kids
        todo += kids
    return out

def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return

def kill_all(child):
    try:
        os.killpg(child, signal.SIGKILL)
    except OSError:
        pass
    me = os.getpid()
    for _ in range(200):
        found = descendants(me) if os.path.isdir("/proc") else []
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)
        reap()
    reap()

judge = int(sys.argv[1])
ends = "" if sys.argv[2] == "-" else sys.argv[2]
command = sys.argv[4:]
subreaper = prctl(36, 1)
prctl(1, signal.SIGTERM)
if os.getppid() != judge:
    sys.exit(75)  # the judge is already gone: no run, no verdict
child = 0

def stop(signum, frame):
    if child:
        kill_all(child)
    os._exit(128 + signum)

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, stop)
child = os.fork()
if child == 0:
    os.setpgid(0, 0)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    try:
        if ends:
            move_channel(ends, "")
        os.execvp(command[0], command)
    finally:
        os._exit(127)
# The descriptors passed down are the command's: a channel end held here would
# not reach end of file when the command closes it.
os.closerange(3, 1 << 16)
while True:
    try:
        _, status = os.waitpid(child, 0)
        break
    except InterruptedError:
        continue
kill_all(child)
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""
)


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    for name in (None, "libc.so.6"):
        try:
            libc = ctypes.CDLL(name, use_errno=True)
            return bool(libc.prctl(option, value, 0, 0, 0) == 0)
        except (OSError, AttributeError):
            continue
    return False


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux); False where it cannot."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def shim_command(command: list[str], channel: tuple[int, int] | None = None) -> list[str]:
    """`command` wrapped in the reaping shim (the judge's pid lets it notice an early death).

    `channel`: the ends of a judge channel (engine/channel.py) passed to the shim, which
    the command gets at `CHILD_FDS`, every other inherited descriptor closed.

    ``-S``: no ``.pth`` hook of the environment runs in the shim, only in `command`.
    """
    ends = "-" if channel is None else f"{channel[0]},{channel[1]}"
    return [sys.executable, "-I", "-S", "-c", SHIM, str(os.getpid()), ends, "--", *command]


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is `pid` (from /proc; empty where there is none)."""
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == pid and fields[0] != b"Z":
            found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`, parents before their children."""
    out: list[int] = []
    todo = [pid]
    while todo:
        kids = children_of(todo.pop())
        out += kids
        todo += kids
    return out


def kill_descendants(*, spare: frozenset[int] = frozenset(), rounds: int = 200) -> int:
    """SIGKILL every descendant of this process except `spare` (and theirs); how many were found.

    Orphans of killed processes are reparented to this process when it is a
    subreaper, so the sweep repeats until none is left (bounded by `rounds`).
    """
    me = os.getpid()
    killed: set[int] = set()
    for _ in range(rounds):
        found = [pid for pid in descendants(me) if pid not in spare]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
            killed.add(pid)
        time.sleep(0.01)
        _reap(found)
    return len(killed)


def _reap(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        except OSError:
            continue
