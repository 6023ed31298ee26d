"""Starting and stopping the gate's child processes: their environment, own session, group kill."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from pytest_quest.engine import reaper

# Variables through which a parent's coverage would leak into our child.
_COVERAGE_ENV = (
    "COVERAGE_PROCESS_START",
    "COVERAGE_PROCESS_CONFIG",
    "COV_CORE_SOURCE",
    "COV_CORE_CONFIG",
    "COV_CORE_DATAFILE",
    "COV_CORE_BRANCH",
    "COV_CORE_CONTEXT",
)

# Seconds a shim gets to kill its tree after SIGTERM before its group gets SIGKILL.
GRACE = 2.0
# Seconds a child that has sent its whole report gets to exit before its tree is
# stopped: what runs after the report (a test's pool finalizer deadlocked at
# exit, a process the tests left) can neither change the report nor hold the
# verdict until --quest-timeout.
REPORTED_GRACE = 10.0
# A whole suite's run (check, scan, audit) shows what the child prints after its
# report: pytest-cov saving, combining and writing its reports can outlast 10 s.
SUITE_GRACE = 300.0

# Set in the judge only (`become_judge`): it adopts and kills what its children leave.
_REAPING: list[bool] = []


def become_judge() -> bool:
    """Make this process the judge: a subreaper that kills its children's leftovers after each run.

    Never called in a process that is not the clean judge (an in-process
    ``pytest.main()`` caller keeps its own children).  False where the
    platform has no subreaper (the shims still kill their process groups).
    """
    _REAPING[:] = [True]
    return reaper.become_subreaper()


def judging() -> bool:
    """Whether this process is the judge (it kills every descendant left after each run)."""
    return bool(_REAPING)


# The gate children running now (several at once: audit -n), to stop them all on Ctrl-C.
_RUNNING: set[subprocess.Popen[bytes]] = set()
_RUNNING_LOCK = threading.Lock()


def stop_running() -> None:
    """Stop every gate child still running (another thread's too), and its tree."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for process in running:
        if process.poll() is None:
            stop_tree(process)


def reap_leftovers() -> int:
    """In the judge: kill every descendant still alive (what a run's tests left); how many.

    A gate child still running (one started alongside, engine/prestart.py) and
    its processes are spared: they are its run's, not left over.
    """
    if not _REAPING:
        return 0
    found = 0
    for _ in range(200):
        # Looked at again each round: a running child's tree may have grown.
        with _RUNNING_LOCK:
            running = [process.pid for process in _RUNNING]
        spared = set(running)
        for pid in running:
            spared.update(reaper.descendants(pid))
        killed = reaper.kill_descendants(spare=frozenset(spared), rounds=1)
        if not killed:
            break
        found += killed
    return found


def child_env() -> dict[str, str]:
    """The environment of a gate child: the user's coverage and PYTEST_ADDOPTS left out.

    A user's coverage must not measure the tests under judgment (the child
    measures on its own).  `PYTEST_QUEST_SELFCOV=1` keeps coverage.py's
    subprocess measurement on: this project's own test run uses it to measure
    pytest-quest in the children, where much of it runs.
    """
    keep = os.environ.get("PYTEST_QUEST_SELFCOV") == "1"
    env = {k: v for k, v in os.environ.items() if keep or k not in _COVERAGE_ENV}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_QUEST_JUDGE", None)  # the judge's handover is the judge's only
    env.pop("PYTEST_XDIST_WORKER", None)  # a gate child is never an xdist worker itself
    env.pop("PYTEST_QUEST_SANDBOX_ENGINES", None)  # the judge's choice of sandbox, its own
    return env


def run_in_own_session(
    command: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    log_path: Path,
    timeout: float,
    channel: tuple[int, int] | None = None,
    on_start: Callable[[], None] | None = None,
    reported: threading.Event | None = None,
    finished: threading.Event | None = None,
    grace: float | None = None,
) -> int | None:
    """Run `command` in its own session, output to `log_path`; its exit status, or None.

    None means it exceeded `timeout` seconds and its whole tree was killed.
    Once `reported` is set the child has `grace` seconds (`REPORTED_GRACE` when
    None) to exit before its tree is stopped (the report stands); once `finished` is set it
    is stopped at once.  It runs under the reaping shim (engine/reaper.py), and
    an interruption kills its tree first.  `channel` is the child's at
    `CHILD_FDS`; `on_start` runs once it started.
    """
    try:
        with open(log_path, "wb") as log:
            return _run_shimmed(
                command,
                cwd=cwd,
                env=env,
                log=log,
                timeout=timeout,
                channel=channel,
                on_start=on_start,
                reported=reported,
                finished=finished,
                grace=grace,
            )
    finally:
        reap_leftovers()


def _run_shimmed(
    command: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    log: IO[bytes],
    timeout: float,
    channel: tuple[int, int] | None,
    on_start: Callable[[], None] | None,
    reported: threading.Event | None,
    finished: threading.Event | None = None,
    grace: float | None = None,
) -> int | None:
    process = subprocess.Popen(
        reaper.shim_command(command, channel),
        cwd=str(cwd),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        pass_fds=channel or (),
    )
    with _RUNNING_LOCK:
        _RUNNING.add(process)
    try:
        if on_start is not None:
            on_start()
        # Without a report to wait for (an Event never set), only the exit or the timeout ends it.
        return _wait_reported(
            process,
            log,
            timeout=timeout,
            reported=reported or threading.Event(),
            finished=finished,
            grace=grace,
        )
    except subprocess.TimeoutExpired:
        stop_tree(process)
        return None
    except BaseException:
        stop_tree(process)
        raise
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(process)


EXITED, OVERSTAYED, TIMED_OUT = "exited", "overstayed", "timed out"
FINISHED = "finished"


def wait_for_exit(
    exited: Callable[[float], bool],
    reported: threading.Event,
    timeout: float,
    finished: threading.Event | None = None,
    grace: float | None = None,
) -> str:
    """How a child ended: EXITED, FINISHED, OVERSTAYED or TIMED_OUT; nothing is stopped here.

    `exited(seconds)` waits up to that long for the exit and says whether it
    came.  FINISHED: `finished` is set, so nothing the child does now can
    reach the judge.  OVERSTAYED: still running `grace` seconds (`REPORTED_GRACE`
    when None) after `reported`.  TIMED_OUT: `timeout` seconds went by first.
    """
    deadline = time.monotonic() + timeout
    grace_end: float | None = None
    while True:
        now = time.monotonic()
        if finished is not None and finished.is_set():
            return FINISHED
        if grace_end is None and reported.is_set():
            grace_end = now + (REPORTED_GRACE if grace is None else grace)
        if now >= deadline:
            return TIMED_OUT
        if grace_end is not None and now >= grace_end:
            return OVERSTAYED
        end = deadline if grace_end is None else min(deadline, grace_end)
        # Looked at every 10 ms when the channel can end the wait: its end is the child's.
        if exited(min(0.05 if finished is None else 0.01, end - now)):
            return EXITED


def popen_exited(process: subprocess.Popen[bytes]) -> Callable[[float], bool]:
    """`wait_for_exit`'s `exited` for a child started here."""

    def exited(seconds: float) -> bool:
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    return exited


def pidfd_exited(pidfd: int) -> Callable[[float], bool]:
    """`wait_for_exit`'s `exited` for a process known by its pidfd (readable once it ended)."""

    def exited(seconds: float) -> bool:
        ready, _, _ = select.select([pidfd], [], [], seconds)
        return bool(ready)

    return exited


def pidfd_kill(pidfd: int) -> None:
    """SIGKILL to the process of `pidfd`, if it has not ended already."""
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except OSError:
        pass  # ended already


def _wait_reported(
    process: subprocess.Popen[bytes],
    log: IO[bytes],
    *,
    timeout: float,
    reported: threading.Event,
    finished: threading.Event | None = None,
    grace: float | None = None,
) -> int:
    """`process`'s exit status, its tree stopped `grace` s after `reported` if still running.

    Stopped at once when `finished`.  Raises TimeoutExpired past `timeout`
    seconds, as ``Popen.wait`` does.
    """
    grace = REPORTED_GRACE if grace is None else grace
    ended = wait_for_exit(popen_exited(process), reported, timeout, finished, grace)
    if ended == FINISHED:
        stop_tree(process)
    if ended == TIMED_OUT:
        raise subprocess.TimeoutExpired(process.args, timeout)
    if ended == OVERSTAYED:
        log.write(
            f"\npytest-quest: the child sent its report but had not exited {grace:g}s"
            " later; it and every process it started were stopped\n".encode()
        )
        log.flush()
        stop_tree(process)
    return process.wait()


def stop_tree(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to a shimmed child (it kills its tree), SIGKILL to its group after `GRACE` seconds."""
    try:
        process.send_signal(signal.SIGTERM)
    except OSError:
        pass
    deadline = time.monotonic() + GRACE
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    kill_group(process)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill `process` and its process group (it runs in its own session), then reap it.

    Its pipes, if any, are drained for at most 5 seconds: a grandchild that
    left the group may hold them open, and is then left alone.
    """
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    try:
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pass  # a grandchild left the process group and holds the pipes: leave it
