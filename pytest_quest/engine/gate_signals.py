"""The tests under judgment cannot kill the gate's processes: an audit hook in their process.

A child killed by a signal the gate did not send is no verdict, so a test killing its
own runner would turn a FAIL into "try again".  The audit hook (PEP 578) refuses
``os.kill``, ``os.killpg`` and ``signal.pthread_kill`` of a signal that would end or
stop this process or an ancestor, and logs each refusal to `SIGNALS_ENV`: REVIEW.
Limits: docs/gate.md.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from pytest_quest.core.environment import OUTSIDE_SIGNALS, signal_name

# The judge names the file where each refused signal leaves a line.
SIGNALS_ENV = "PYTEST_QUEST_SIGNALS"

# Signals whose default action ends no process: the only ones the tests may send the gate.
HARMLESS = frozenset(
    {0}
    | {
        int(getattr(signal, name))
        for name in ("SIGCHLD", "SIGWINCH", "SIGURG", "SIGCONT")
        if hasattr(signal, name)
    }
)


def ancestors(pid: int) -> list[int]:
    """The parent chain of `pid` from /proc, init left out (just the parent where /proc is missing)."""
    found: list[int] = []
    current = pid
    while len(found) < 64:
        try:
            with open(f"/proc/{current}/stat", "rb") as handle:
                stat = handle.read()
            parent = int(stat[stat.rfind(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            if current == pid and not found:
                found.append(os.getppid())
            break
        if parent <= 1:
            break
        found.append(parent)
        current = parent
    return found


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def deadly_target(event: str, args: tuple[Any, ...], gate: set[int]) -> str:
    """What a signal call would end among this process and the `gate` pids ("" when nothing)."""
    if event == "signal.pthread_kill":
        target, number, own = "this process", int(args[1]), True
    else:
        who, number = int(args[0]), int(args[1])
        if event == "os.killpg" or who < -1:
            group = os.getpgrp() if event == "os.killpg" and who == 0 else abs(who)
            own = group == os.getpgrp()
            target = "its own process group" if own else f"process group {group}"
            if not own and group not in {_group_of(pid) for pid in gate}:
                return ""
        elif who in (0, -1, os.getpid()):
            own, target = (
                True,
                {0: "its own process group", -1: "every process"}.get(who, "its own process"),
            )
        elif who in gate:
            own, target = False, f"the gate's process {who}"
        else:
            return ""
    if not own:
        return target if number not in HARMLESS else ""
    if number == signal.SIGKILL:
        return target
    if number in OUTSIDE_SIGNALS and signal.getsignal(number) == signal.SIG_DFL:
        return target
    return ""


def refuse_gate_signals() -> None:
    """In a judged process: refuse signals that would end it or the gate (logged to `SIGNALS_ENV`)."""
    log = os.environ.get(SIGNALS_ENV)
    if not log:
        return
    gate = set(ancestors(os.getpid()))

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in ("os.kill", "os.killpg", "signal.pthread_kill"):
            return
        try:
            target = deadly_target(event, args, gate)
        except (TypeError, ValueError):
            return
        if not target:
            return
        what = f"send {signal_name(int(args[1]))} to {target}"
        try:
            fd = os.open(log, os.O_WRONLY | os.O_APPEND)
            os.write(fd, f"{os.getpid()} {what}\n".encode())
            os.close(fd)
        except OSError:
            pass
        raise PermissionError(f"pytest-quest: tests under judgment cannot {what}")

    sys.addaudithook(hook)
