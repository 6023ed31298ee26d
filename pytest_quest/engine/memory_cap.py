"""A cap on the memory a mutant's run may add to its process (the mutation child, the fresh run).

The time budget's SIGALRM runs only between bytecodes, so a C loop that
allocates forever (``list(chain(items, repeat(x)))``) would grow until the
out-of-memory killer ends the child; under the cap it ends in MemoryError
and the alarm fires: killed (docs/gate.md).

The cap is the soft ``RLIMIT_DATA``: the data size at the run's start plus
`headroom`, never above the hard limit nor looser than a soft limit already
set, put back after the run; nothing is capped where it cannot be set.  Not
``RLIMIT_AS``: a JVM or Go program a test starts reserves far more address
space than it uses, and would fail to start.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

try:
    import resource
except ImportError:  # not on this platform (the gate needs Linux anyway)
    resource = None  # type: ignore[assignment]

#: The least a mutant's run may add to the process's data size.
MIN_HEADROOM = 2 << 30


def _field(path: str, name: str) -> int | None:
    """A ``kB`` field of a /proc status file, in bytes; None when absent."""
    try:
        with open(path, encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith(name + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def headroom() -> int:
    """What a run may add: a quarter of the memory available now, at least `MIN_HEADROOM`."""
    available = _field("/proc/meminfo", "MemAvailable")
    return max(MIN_HEADROOM, (available or 0) // 4)


def limit_for(size: int, room: int, soft: int, hard: int, infinity: int) -> int | None:
    """The soft limit to set for a run (None: leave it), from the process's `size` now."""
    cap = size + room
    if hard != infinity:
        cap = min(cap, hard)
    if soft != infinity and soft <= cap:
        return None  # already as tight
    return cap


@contextlib.contextmanager
def capped() -> Iterator[None]:
    """The data size capped for the run inside the block (see the module's text)."""
    restore = None
    size = _field(f"/proc/{os.getpid()}/status", "VmData")
    if resource is not None and size is not None:
        with contextlib.suppress(OSError, ValueError):
            soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
            cap = limit_for(size, headroom(), soft, hard, resource.RLIM_INFINITY)
            if cap is not None:
                resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
                restore = (soft, hard)
    try:
        yield
    finally:
        if restore is not None:
            with contextlib.suppress(OSError, ValueError):
                resource.setrlimit(resource.RLIMIT_DATA, restore)
