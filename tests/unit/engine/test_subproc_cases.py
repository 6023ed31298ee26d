"""engine/subproc.py's `stop_inherited`: the stop a forked child runs on its parent's measurement."""

from __future__ import annotations

from pytest_quest.engine.subproc import stop_inherited


class FakeCoverage:
    def __init__(self, fails: bool = False) -> None:
        self._auto_save = True
        self.stopped = 0
        self.fails = fails

    def stop(self) -> None:
        self.stopped += 1
        if self.fails:
            raise RuntimeError("not started")


def test_stop_inherited_stops_without_saving() -> None:
    cov = FakeCoverage()
    stop = stop_inherited(cov)
    assert cov.stopped == 0
    assert cov._auto_save is True
    stop()
    assert cov.stopped == 1
    assert cov._auto_save is False


def test_stop_inherited_swallows_a_failing_stop() -> None:
    cov = FakeCoverage(fails=True)
    stop_inherited(cov)()
    assert cov.stopped == 1
    assert cov._auto_save is False
