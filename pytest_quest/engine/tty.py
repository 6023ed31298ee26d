"""The controlling terminal of this process, where a person types a confirmation.

Read from ``/dev/tty``, never stdin: ``echo ID | pytest ...`` confirms nothing.
"""

from __future__ import annotations

import os
import sys

if sys.platform != "win32":
    import termios

_TTY = "/dev/tty"
_MAX_ANSWER = 4096


def _open() -> int | None:
    """A descriptor on the controlling terminal, or None when there is none to ask."""
    try:
        # ENXIO when the process has no controlling terminal (a new session,
        # a daemon, most CI runners and agent shells).
        fd = os.open(_TTY, os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None
    try:
        # A background job would be stopped by SIGTTIN on read: refuse instead.
        if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


class ControllingTerminal:
    """This process's controlling terminal, in the foreground: one question, one typed line."""

    def ask(self, prompt: str) -> str:
        """Write `prompt` to the terminal and read one line typed after it ("" on end of file)."""
        fd = _open()
        if fd is None:
            return ""
        try:
            if sys.platform != "win32":
                try:
                    # Only what is typed after the question counts, not type-ahead.
                    termios.tcflush(fd, termios.TCIFLUSH)
                except OSError:
                    pass
            os.write(fd, prompt.encode("utf-8", "replace"))
            answer = b""
            while not answer.endswith(b"\n") and len(answer) < _MAX_ANSWER:
                chunk = os.read(fd, _MAX_ANSWER)
                if not chunk:
                    break
                answer += chunk
            return answer.decode("utf-8", "replace").strip()
        finally:
            os.close(fd)


def controlling_terminal() -> ControllingTerminal | None:
    """The terminal a person can confirm at, or None (no controlling terminal, or a background job)."""
    fd = _open()
    if fd is None:
        return None
    os.close(fd)
    return ControllingTerminal()
