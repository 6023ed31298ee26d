"""Starting and stopping the gate's child processes: their environment, own session, group kill."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

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

    None means it exceeded `timeout` seconds and its whole process group was
    killed.  Interrupted (Ctrl-C), the group is killed too before the
    interruption goes on: nothing else would stop a child in its own session.
    `pass_fds` are inherited by the child; `on_start` runs once it has started.
    """
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command,
            cwd=str(cwd),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=pass_fds,
        )
        try:
            if on_start is not None:
                on_start()
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(process)
            return None
        except BaseException:
            kill_group(process)
            raise


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


__all__ = ["child_env", "kill_group", "run_in_own_session"]
