"""Which thread's arcs a test is credited with: its own thread, and threads started while it ran.

The rule and its limits: docs/gate.md ("Which tests cover a function").
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class ThreadFence:
    """Keeps the arcs of threads older than the running test out of its data.

    coverage.py's per-thread tracers share one dict.  The fence wraps the
    collector's ``_start_tracer`` to learn each thread's tracer, and when a
    test starts points every other live thread's at `stray`: a thread started
    before the test is not its doing.  pytest's main thread is never fenced.
    """

    def __init__(self, collector: Any) -> None:
        self.collector = collector
        self.stray: dict[str, set[Any]] = {}
        self.tracers: dict[int, Any] = {}
        self.installed = self._install()

    def _install(self) -> bool:
        start: Callable[[], Any] | None = getattr(self.collector, "_start_tracer", None)
        if start is None or not hasattr(self.collector, "tracers"):
            return False
        tracers = self.tracers
        collector = self.collector

        def start_tracer() -> Any:
            trace = start()
            if collector.tracers:
                tracers[threading.get_ident()] = collector.tracers[-1]
            return trace

        collector._start_tracer = start_tracer
        return True

    def test_starts(self) -> None:
        """A test starts, in the calling thread: every other live thread is older than it."""
        alive = {thread.ident for thread in threading.enumerate()}
        runner = threading.get_ident()
        for ident, tracer in list(self.tracers.items()):
            if ident not in alive:
                del self.tracers[ident]
            elif ident != runner and getattr(tracer, "data", None) is not self.stray:
                try:
                    tracer.data = self.stray
                except (AttributeError, TypeError):
                    continue

    def take_stray(self) -> dict[str, set[Any]]:
        """The arcs fenced off so far (they never count), taken out of `stray`."""
        taken = {}
        for name, live in list(self.stray.items()):
            if live:
                snapshot = live.copy()
                live.difference_update(snapshot)
                taken[name] = snapshot
        return taken
