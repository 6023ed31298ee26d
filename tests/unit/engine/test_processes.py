"""How the judge waits for a gate child (engine/processes.py `wait_for_exit`): exit, report, time."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from pytest_quest.engine import processes


class Child:
    """A fake child: it exits `exit_after` seconds in (never when None); `exited` as the judge calls it."""

    def __init__(self, exit_after: float | None) -> None:
        self.started = time.monotonic()
        self.exit_after = exit_after

    def exited(self, seconds: float) -> bool:
        time.sleep(seconds)
        return self.exit_after is not None and time.monotonic() - self.started >= self.exit_after


def reported_after(seconds: float) -> threading.Event:
    event = threading.Event()
    threading.Timer(seconds, event.set).start()
    return event


@pytest.fixture(autouse=True)
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "REPORTED_GRACE", 0.3)


def test_a_child_that_exits_has_exited_with_or_without_a_report() -> None:
    assert processes.wait_for_exit(Child(0.1).exited, threading.Event(), 5) == processes.EXITED
    assert processes.wait_for_exit(Child(0.2).exited, reported_after(0.05), 5) == processes.EXITED


def test_a_child_still_running_after_its_report_overstays_at_the_grace_not_the_timeout() -> None:
    start = time.monotonic()
    assert (
        processes.wait_for_exit(Child(None).exited, reported_after(0.1), 30) == processes.OVERSTAYED
    )
    assert 0.4 <= time.monotonic() - start < 5


def test_a_child_given_a_longer_grace_exits_within_it_and_overstays_past_it() -> None:
    # A whole suite's run (pytest-cov's reports after the report): its own grace, not 0.3 s.
    child = Child(0.8)
    assert processes.wait_for_exit(child.exited, reported_after(0.05), 30, None, 2.0) == (
        processes.EXITED
    )
    start = time.monotonic()
    ended = processes.wait_for_exit(Child(None).exited, reported_after(0.05), 30, None, 0.6)
    assert ended == processes.OVERSTAYED
    assert 0.6 <= time.monotonic() - start < 5


def test_without_a_whole_report_a_running_child_has_its_whole_time() -> None:
    start = time.monotonic()
    assert (
        processes.wait_for_exit(Child(None).exited, threading.Event(), 1.0) == processes.TIMED_OUT
    )
    assert time.monotonic() - start >= 1.0


def test_a_report_just_before_the_timeout_is_still_a_timeout() -> None:
    # The grace never extends a child's time past --quest-timeout.
    start = time.monotonic()
    assert (
        processes.wait_for_exit(Child(None).exited, reported_after(0.9), 1.0) == processes.TIMED_OUT
    )
    assert time.monotonic() - start < 1.2


def test_pidfd_helpers_see_a_real_process_end_and_kill_it() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    pidfd = os.pidfd_open(process.pid)
    try:
        exited = processes.pidfd_exited(pidfd)
        assert not exited(0.05)
        processes.pidfd_kill(pidfd)
        assert exited(5)
        process.wait()
        processes.pidfd_kill(pidfd)  # ended already: no error
    finally:
        os.close(pidfd)


def test_a_child_whose_channel_is_finished_is_not_waited_for() -> None:
    # Its report in and its channel closed: nothing it does now reaches the judge.
    start = time.monotonic()
    finished = reported_after(0.05)
    ended = processes.wait_for_exit(Child(None).exited, finished, 30, finished)
    assert ended == processes.FINISHED
    assert time.monotonic() - start < 0.3  # the grace (0.3 s here) is not waited for
