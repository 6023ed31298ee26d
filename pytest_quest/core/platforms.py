"""Where pytest-quest's commands run: POSIX systems (Linux, macOS).

The judge relies on POSIX facilities with no Windows counterpart that keeps
the same guarantees: record locks that claim a quest while it is judged
(``fcntl``), process groups killed as one (``os.killpg``), a clean judge that
replaces the current process (``os.execve``) and a controlling terminal for
person actions (``/dev/tty``).  Rather than judge with some of them silently
missing, every command refuses to run on Windows with a message saying so;
plain ``pytest`` runs (no quest command) are not affected.
"""

from __future__ import annotations

UNSUPPORTED = ("win32", "cygwin")


def unsupported_reason(platform: str) -> str | None:
    """Why the quest commands cannot run on `platform` (``sys.platform``), or None when they can."""
    if platform not in UNSUPPORTED:
        return None
    return (
        f"pytest-quest's commands need a POSIX system (Linux or macOS); this is {platform}. "
        "The judge needs POSIX record locks, process groups and a controlling terminal, "
        "and will not judge without them: run pytest-quest under WSL or in a Linux container "
        "(plain pytest runs without --quest are not affected)"
    )
