"""Where pytest-quest's commands run: POSIX systems (Linux, macOS).

The judge needs ``fcntl`` record locks, ``os.killpg``, ``os.execve`` and
``/dev/tty``, with no Windows equivalent, so every quest command refuses to
run on Windows; plain ``pytest`` runs are not affected.
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
