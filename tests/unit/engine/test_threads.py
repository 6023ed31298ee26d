"""The thread fence: threads older than the running test write elsewhere."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from pytest_quest.engine.threads import ThreadFence


class Collector:
    """coverage.py's collector as the fence sees it: tracers sharing one `data` dict."""

    def __init__(self) -> None:
        self.data: dict[str, set[int]] = {}
        self.tracers: list[SimpleNamespace] = [SimpleNamespace(data=self.data)]  # the main thread's

    def _start_tracer(self) -> str:
        self.tracers.append(SimpleNamespace(data=self.data))
        return "trace"


def started_thread(collector: Collector, release: threading.Event) -> threading.Thread:
    ready = threading.Event()

    def run() -> None:
        assert collector._start_tracer() == "trace"  # what coverage.py does in a new thread
        ready.set()
        release.wait(10)

    thread = threading.Thread(target=run)
    thread.start()
    assert ready.wait(10)
    return thread


def test_threads_alive_when_a_test_starts_are_fenced_the_main_thread_never() -> None:
    collector = Collector()
    fence = ThreadFence(collector)
    assert fence.installed
    release = threading.Event()
    old = started_thread(collector, release)
    main_tracer, old_tracer = collector.tracers
    fence.test_starts()
    assert old_tracer.data is fence.stray
    assert main_tracer.data is collector.data
    # A thread started during the test writes to the shared data, until the next test starts.
    new = started_thread(collector, release)
    assert collector.tracers[-1].data is collector.data
    fence.test_starts()
    assert collector.tracers[-1].data is fence.stray
    release.set()
    old.join()
    new.join()
    fence.test_starts()  # both ended: forgotten
    assert fence.tracers == {}


def test_the_stray_arcs_are_taken_out() -> None:
    fence = ThreadFence(Collector())
    fence.stray["m.py"] = {1, 2}
    fence.stray["n.py"] = set()
    assert fence.take_stray() == {"m.py": {1, 2}}
    assert fence.stray == {"m.py": set(), "n.py": set()}


def test_a_collector_without_the_hook_is_left_alone() -> None:
    fence = ThreadFence(SimpleNamespace(data={}))
    assert not fence.installed
    fence.test_starts()
    assert fence.take_stray() == {}


def test_a_tracer_that_refuses_the_sink_is_skipped() -> None:
    collector = Collector()
    fence = ThreadFence(collector)
    release = threading.Event()
    thread = started_thread(collector, release)

    class Frozen:
        __slots__ = ()

    fence.tracers[thread.ident] = Frozen()  # type: ignore[index]
    fence.test_starts()  # no error
    release.set()
    thread.join()
