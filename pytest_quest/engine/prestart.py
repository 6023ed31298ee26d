"""A mutation child started alongside the measuring run, before its functions are known.

Its start-up needs nothing of the measuring run, so the judge starts both at once; the
child waits before any conftest for the rest of its instructions (engine/channel.py,
``MORE``), sent when steps 1-3 pass (`Prestarted.run`), else it is stopped having loaded
no project code (`Prestarted.close`).  Only under bwrap, and never past `MAX_WAIT`:
docs/judge.md.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_quest.engine import sandbox
from pytest_quest.engine.channel import JudgeChannel, Received
from pytest_quest.engine.runner import ChannelRun, child_command, overlay_key, run_over_channel


@dataclass(frozen=True)
class Launch:
    """What a mutation child is started with: its command's parts and what it starts before conftests."""

    rootdir: Path
    inifile: Path | None
    plugin_args: tuple[str, ...]
    cwd: Path
    subprocesses: bool
    mutants: bool
    confirm: bool = True
    #: The code under test's folders (plugin/rewrite.py reads them before any conftest).
    sources: tuple[str, ...] = ()


class Prestarted:
    """One mutation child started before its work is known, until it is given it or stopped."""

    def __init__(self, launch: Launch, timeout: float) -> None:
        self.launch = launch
        self.remote_dir = (
            tempfile.mkdtemp(prefix="pytest-quest-children-") if launch.subprocesses else ""
        )
        # What the child's start needs (plugin/child_start.py): the rest comes with its work.
        first = {
            "role": "check",
            "mutants": launch.mutants,
            "subprocesses": bool(self.remote_dir),
            "remote_dir": self.remote_dir,
            "confirm": launch.confirm,
            "sources": list(launch.sources),
            # Given with the first part: `run_over_channel` cannot add it to a channel made here.
            **overlay_key(launch.cwd),
        }
        self.channel = JudgeChannel(None, first)
        self.ran: ChannelRun | None = None
        self.started = time.monotonic()
        self._used = False
        # Its own limit covers the wait for its work too; `run` holds it to `--quest-timeout` from then.
        self._thread = threading.Thread(
            target=self._run, args=(2 * timeout + 60,), daemon=True, name="quest-prestarted"
        )
        self._thread.start()

    def _run(self, limit: float) -> None:
        launch = self.launch
        try:
            self.ran = run_over_channel(
                {},
                lambda argument: child_command(
                    rootdir=launch.rootdir,
                    inifile=launch.inifile,
                    plugin_args=list(launch.plugin_args),
                    channel=argument,
                ),
                cwd=launch.cwd,
                timeout=limit,
                bound=(self.remote_dir,),
                channel=self.channel,
            )
        except Exception:
            self.ran = None  # not started: the caller starts one as it would have

    def run(self, instructions: dict[str, Any], timeout: float) -> ChannelRun | None:
        """Give it its work; how it ended, as `run_over_channel` says it (None: it never started).

        `timeout` counts from now; past it, it is stopped and its returncode is None.
        """
        self._used = True
        if not self.channel.running.wait(timeout=60) or not self._thread.is_alive():
            self._thread.join()
            return self.ran if self.ran is not None and self.channel.running.is_set() else None
        given = time.monotonic()
        self.channel.instruct(instructions)
        self._thread.join(timeout)
        if self._thread.is_alive():
            self.channel.abandon()
            self._thread.join()
            output = self.ran.output if self.ran is not None else ""
            return ChannelRun(None, Received(), output, time.monotonic() - given)
        ran = self.ran
        if ran is None:
            return None
        # Its time is its work's: the wait for it is the measuring run's.
        waited = given - self.started
        return ChannelRun(ran.returncode, ran.received, ran.output, max(0.0, ran.duration - waited))

    def close(self) -> None:
        """Stop it if it was never given its work; its folder removed."""
        if not self._used:
            self.channel.abandon()
        self._thread.join()
        if self.remote_dir:
            shutil.rmtree(self.remote_dir, ignore_errors=True)


_WAITING: list[Prestarted] = []
#: Seconds a child may wait for its work and still be given it (fresh_kill.MAX_HOLD's bound).
MAX_WAIT = 1.5


def hides_runs() -> bool:
    """Whether this judgement's sandbox keeps two runs from seeing each other's processes and files."""
    engine = sandbox.active()
    return engine is not None and engine.contains_signals and engine.throwaway


@contextmanager
def prestarted(launch: Launch, timeout: float) -> Iterator[Prestarted | None]:
    """A mutation child started now with `launch`, for `take` within; stopped at the end if unused."""
    if not hides_runs():
        yield None
        return
    started = Prestarted(launch, timeout)
    _WAITING.append(started)
    try:
        yield started
    finally:
        if started in _WAITING:
            _WAITING.remove(started)
        started.close()


def take(launch: Launch) -> Prestarted | None:
    """The child started with `launch` and waiting (once), or None (none, or one that waited
    longer than `MAX_WAIT`: stopped now)."""
    for started in _WAITING:
        if started.launch == launch:
            _WAITING.remove(started)
            if time.monotonic() - started.started > MAX_WAIT:
                started.close()
                return None
            return started
    return None
