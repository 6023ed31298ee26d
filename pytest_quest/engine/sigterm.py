"""SIGTERM stops the measuring pytest as Ctrl-C does; the processes its tests fork keep theirs.

The judge raises KeyboardInterrupt on SIGTERM (plugin/hooks.py).  A forked
child inheriting that would not end on SIGTERM (a fork pool's ``terminate()``
then hangs), so it gets back the handler SIGTERM had before ours.  SIGTERM is
blocked across the fork and unblocked in the child once the handler is back:
one arriving in between is delivered then, never lost.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

# The handler SIGTERM had before ours, put back in forked children (one entry).
_BEFORE: list[Any] = []
# Per forking thread: whether SIGTERM was blocked here (and so is left blocked after).
_BLOCKED_BEFORE: dict[int, bool] = {}


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def sigterm_is_ctrl_c() -> None:
    """SIGTERM raises KeyboardInterrupt in this process, in none it forks.

    ``pytest.main()`` in a thread other than the main one: left as it was.
    """
    try:
        previous = signal.signal(signal.SIGTERM, _terminated)
    except ValueError:
        return
    if _BEFORE:
        return  # a second session in this process: the first kept the handler to put back
    _BEFORE.append(signal.SIG_DFL if previous is None or previous is _terminated else previous)
    os.register_at_fork(before=_block, after_in_parent=_unblock, after_in_child=_in_child)


def _block() -> None:
    try:
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    except (OSError, ValueError):
        return
    _BLOCKED_BEFORE[threading.get_ident()] = signal.SIGTERM in mask


def _unblock() -> None:
    if not _BLOCKED_BEFORE.pop(threading.get_ident(), True):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _in_child() -> None:  # pragma: no cover - runs in forked children only
    # The forking thread is the child's main thread: signal.signal works there.
    try:
        if signal.getsignal(signal.SIGTERM) is _terminated:
            signal.signal(signal.SIGTERM, _BEFORE[0])
    finally:
        blocked = _BLOCKED_BEFORE.pop(threading.get_ident(), True)
        _BLOCKED_BEFORE.clear()
        if not blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
