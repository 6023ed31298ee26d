"""Starting and stopping the gate's child processes: their environment, own session, group kill."""

from __future__ import annotations

import os
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
    """In the judge: kill every descendant still alive (what a run's tests left); how many."""
    if not _REAPING:
        return 0
    return reaper.kill_descendants()


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
    return env


def run_in_own_session(
    command: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    log_path: Path,
    timeout: float,
    pass_fds: tuple[int, ...] = (),
    on_start: Callable[[], None] | None = None,
) -> int | None:
    """Run `command` in its own session, output to `log_path`; its exit status, or None.

    None means it exceeded `timeout` seconds and its whole tree was killed.
    The command runs under the reaping shim (engine/reaper.py), which kills
    every process it started, detached ones included, when it ends.
    Interrupted (Ctrl-C, SIGTERM in the judge), the tree is killed too before
    the interruption goes on: nothing else would stop a child in its own session.
    `pass_fds` are inherited by the child (through the shim); `on_start` runs once it started.
    """
    try:
        with open(log_path, "wb") as log:
            return _run_shimmed(
                command,
                cwd=cwd,
                env=env,
                log=log,
                timeout=timeout,
                pass_fds=pass_fds,
                on_start=on_start,
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
    pass_fds: tuple[int, ...],
    on_start: Callable[[], None] | None,
) -> int | None:
    process = subprocess.Popen(
        reaper.shim_command(command),
        cwd=str(cwd),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        pass_fds=pass_fds,
    )
    with _RUNNING_LOCK:
        _RUNNING.add(process)
    try:
        if on_start is not None:
            on_start()
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_tree(process)
        return None
    except BaseException:
        stop_tree(process)
        raise
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(process)


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


__all__ = [
    "GRACE",
    "become_judge",
    "child_env",
    "judging",
    "kill_group",
    "reap_leftovers",
    "run_in_own_session",
    "stop_running",
    "stop_tree",
]
