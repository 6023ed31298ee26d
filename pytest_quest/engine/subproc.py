"""Measuring the processes the tests start: one private folder per test, folded in at the end.

What is measured across processes, how it is attributed and its limits:
docs/judge.md, "Across processes".

coverage.py's start-up hook is pointed at an rcfile of ours
(``COVERAGE_PROCESS_START``), rewritten at each test boundary with that test's
data file name, so every Python process a test starts measures itself into it;
forked processes restart measurement after the fork.  `fold` adds the files
under their test's context, so only a passing test's processes count.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_quest.core.words import counted

if TYPE_CHECKING:
    from coverage import CoverageData

# The user's variables that would send a child's data elsewhere (or start a
# second configuration): kept aside while we measure, put back after.
USER_ENV = (
    "COVERAGE_PROCESS_START",
    "COVERAGE_PROCESS_CONFIG",
    "COVERAGE_FILE",
    "COVERAGE_RCFILE",
    "COVERAGE_CONTEXT",
    "COV_CORE_SOURCE",
    "COV_CORE_CONFIG",
    "COV_CORE_DATAFILE",
    "COV_CORE_BRANCH",
    "COV_CORE_CONTEXT",
)

DATA_NAME = ".coverage"
RCFILE = "pytest-quest-child.rc"  # the name tells a process measured by us (`stop_auto_started`)
OUTSIDE = "outside"  # processes started between tests: measured, counted for no test

# Warnings a child's coverage would print on the stderr of the user's
# program (tests compare it): none is useful there.
_QUIET = (
    "already-imported",
    "couldnt-parse",
    "module-not-imported",
    "module-not-measured",
    "module-not-python",
    "no-ctracer",
    "no-data-collected",
    "include-ignored",
    "dynamic-conflict",
    "no-sysmon",
)

# The measurements active in this process, innermost last (the at-fork hook reads it).
_ACTIVE: list[ChildMeasurement] = []
_HOOKED: list[bool] = []


def _ini_list(values: list[str]) -> str:
    return "".join(f"\n    {value}" for value in values)


def rcfile_text(
    data_file: str, *, source: list[str], source_pkgs: list[str], omit: list[str]
) -> str:
    """The child processes' coverage configuration, writing to `data_file` (with a suffix)."""
    lines = [
        "[run]",
        "branch = True",
        "parallel = True",
        "concurrency = thread, multiprocessing",
        "patch = _exit",
        "data_file = " + data_file,
        "disable_warnings =" + _ini_list(list(_QUIET)),
    ]
    if source:
        lines.append("source =" + _ini_list(source))
    if source_pkgs:
        lines.append("source_pkgs =" + _ini_list(source_pkgs))
    if omit:
        lines.append("omit =" + _ini_list(omit))
    # `%` would be configparser interpolation in a path.
    return "\n".join(lines).replace("%", "%%") + "\n"


@dataclass
class TestData:
    """The data files of the processes started while one test ran: ``<prefix>.<suffix>``."""

    nodeid: str
    prefix: str
    ended: float | None = None


@dataclass(eq=False)
class ChildMeasurement:
    """Coverage of the processes the tests start, one data file name per test under `root`.

    The rcfile the children read at start-up (``COVERAGE_PROCESS_START``)
    is rewritten at each test boundary (atomically) with that test's data
    file: a process takes the test that runs when it starts, even when the
    environment it got was copied before (a module-level ``dict(os.environ)``).
    `stop_parent` stops the measuring process's own coverage in a forked
    child (its data is the parent's to save).
    """

    root: str
    source: list[str]
    source_pkgs: list[str] = field(default_factory=list)
    omit: list[str] = field(default_factory=list)
    stop_parent: Callable[[], None] | None = None
    tests: list[TestData] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _saved: dict[str, str | None] = field(default_factory=dict)
    _rcfile: str = ""
    _current: TestData | None = None
    _active: bool = False

    @property
    def outside(self) -> str:
        return os.path.join(self.root, DATA_NAME + "-" + OUTSIDE)

    def _point_at(self, data_file: str) -> None:
        # The rcfile is a symbolic link, swapped atomically to a file written once per
        # data file: replacing a regular file by rename makes ext4 flush the new one's
        # data first (auto_da_alloc), 2.7 ms a switch against 0.15 ms for a link.
        # Each step is tried, the rare case handled after it (no stat before it): a
        # switch makes the calls it needs and no more, twice per test.
        target = self._rcfile + "-" + os.path.basename(data_file)
        text = rcfile_text(
            data_file, source=self.source, source_pkgs=self.source_pkgs, omit=self.omit
        )
        try:
            with open(target, "x", encoding="utf-8") as handle:
                handle.write(text)
        except FileExistsError:
            pass  # written once per data file
        temporary = self._rcfile + ".next"
        try:
            os.symlink(os.path.basename(target), temporary)
        except FileExistsError:  # left by a process killed between these two calls
            os.unlink(temporary)
            os.symlink(os.path.basename(target), temporary)
        os.replace(temporary, self._rcfile)

    def start(self) -> None:
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        self._rcfile = os.path.join(self.root, RCFILE)
        self._point_at(self.outside)
        self._saved = {name: os.environ.pop(name, None) for name in USER_ENV}
        os.environ["COVERAGE_PROCESS_START"] = self._rcfile
        _ACTIVE.append(self)
        _install_fork_hook()
        self._active = True

    def switch(self, nodeid: str) -> None:
        """Processes started from now on measure for `nodeid` ("" between tests: for no test)."""
        if not self._active:
            return
        if self._current is not None:
            # The test's forkserver is its process: ended with it (its data saved
            # first); the next test that uses one starts its own.
            stop_forkserver()
            self._current.ended = time.time()
            self._current = None
        if not nodeid:
            self._point_at(self.outside)
            return
        self._current = TestData(nodeid, os.path.join(self.root, f"{DATA_NAME}-{len(self.tests)}"))
        self.tests.append(self._current)
        self._point_at(self._current.prefix)

    def stop(self) -> None:
        """Stop handing measurement to new processes; the user's variables are put back."""
        if not self._active:
            return
        self.switch("")
        self._active = False
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        for name in USER_ENV:
            os.environ.pop(name, None)
            value = self._saved.get(name)
            if value is not None:
                os.environ[name] = value

    def fold(self, data: CoverageData) -> int:
        """Add each test's child data to `data` under the test's context; how many files were added.

        A data file written after its test ended (a process that outlived
        it), or one that cannot be read, is left out with a note naming the test.
        """
        added = 0
        files = _data_files(self.root)
        for test in self.tests:
            arcs: dict[str, set[tuple[int, int]]] = {}
            late = unreadable = 0
            for path in files.get(os.path.basename(test.prefix), []):
                if test.ended is not None and os.stat(path).st_mtime > test.ended + 0.001:
                    late += 1
                    continue
                read = read_arcs(path)
                if read is None:
                    unreadable += 1
                    continue
                for name, file_arcs in read.items():
                    arcs.setdefault(name, set()).update(file_arcs)
                added += 1
            if late:
                self.notes.append(
                    f"{test.nodeid}: {counted(late, 'process', 'processes')} it started wrote their coverage data "
                    "after the test ended; what they executed counts for no test"
                )
            if unreadable:
                self.notes.append(
                    f"{test.nodeid}: the coverage data of {counted(unreadable, 'process', 'processes')} it started "
                    "is missing, partial or unreadable; left out"
                )
            if arcs:
                data.set_context(test.nodeid)
                data.add_arcs({name: sorted(found) for name, found in arcs.items()})
        outside: dict[str, set[tuple[int, int]]] = {}
        for path in files.get(os.path.basename(self.outside), []):
            for name, file_arcs in (read_arcs(path) or {}).items():
                outside.setdefault(name, set()).update(file_arcs)
        if outside:
            # Keeps the files measured (a function run only there is "not covered").
            data.set_context("")
            data.add_arcs({name: sorted(found) for name, found in outside.items()})
        data.set_context(None)
        return added


def _data_files(folder: str) -> dict[str, list[str]]:
    """The data files in `folder` by their name before the suffix (``.coverage-3``)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return {}
    found: dict[str, list[str]] = {}
    for name in names:
        base, dot, suffix = _split_name(name)
        if dot and suffix and not name.endswith(("-journal", ".tmp")):
            found.setdefault(base, []).append(os.path.join(folder, name))
    return found


def _split_name(name: str) -> tuple[str, str, str]:
    if not name.startswith(DATA_NAME + "-"):
        return name, "", ""
    head = DATA_NAME + "-"
    base, dot, suffix = name[len(head) :].partition(".")
    return head + base, dot, suffix


def read_arcs(path: str) -> dict[str, set[tuple[int, int]]] | None:
    """The arcs of one child's data file per measured file, or None if it cannot be read."""
    from coverage import CoverageData  # start-up time (engine/measure.py)

    if not os.path.isfile(path):
        return None
    try:
        data = CoverageData(basename=path, no_disk=False)
        data.read()
        if not data.has_arcs():
            return None if data.measured_files() else {}
        return {name: set(data.arcs(name) or ()) for name in data.measured_files()}
    except (sqlite3.Error, Exception):  # coverage's DataError, NoDataError, torn files
        return None


def stop_forkserver(grace: float = 5.0) -> bool:
    """End ``multiprocessing``'s forkserver of this process, if one runs; whether one did.

    The forkserver forks every later worker, so its measurement (and a
    mutant it imported) would pass on to later tests.  Its "alive" pipe is
    closed so it exits and saves; after `grace` seconds it gets SIGTERM, then
    SIGKILL.  The next use starts a new one.  The fields reset are those
    ``ForkServer._stop`` resets on Python 3.10 to 3.13.
    """
    module = sys.modules.get("multiprocessing.forkserver")
    server = getattr(module, "_forkserver", None)
    pid = getattr(server, "_forkserver_pid", None)
    if server is None or not isinstance(pid, int):
        return False
    with getattr(server, "_lock", None) or contextlib.nullcontext():
        alive = getattr(server, "_forkserver_alive_fd", None)
        if isinstance(alive, int):
            try:
                os.close(alive)
            except OSError:
                pass
            _wait_exit(pid, grace)
        _end_process(pid, grace)
        address = getattr(server, "_forkserver_address", None)
        if isinstance(address, str) and address and not address.startswith("\0"):
            try:
                os.unlink(address)
            except OSError:
                pass
        server._forkserver_pid = None
        server._forkserver_alive_fd = None
        server._forkserver_address = None
    return True


def _wait_exit(pid: int, grace: float) -> None:
    """Wait up to `grace` seconds for `pid` (a child of this process) to end; reap it if it did."""
    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                return
            time.sleep(0.005)
    except OSError:  # ChildProcessError: not ours, or reaped already
        return


def _end_process(pid: int, grace: float) -> None:
    """SIGTERM `pid` (a child of this process), then SIGKILL after `grace` seconds; reap it.

    A pid that is not (or no longer) a child of this process is never signalled.
    """
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                return
            time.sleep(0.005)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:  # ChildProcessError: not ours, or reaped already
        return


def _install_fork_hook() -> None:
    if _HOOKED:
        return
    _HOOKED.append(True)
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _after_fork_in_child() -> None:  # pragma: no cover - runs in forked children only
    """A forked child of the measuring process: measure it for the test that forked it."""
    if not _ACTIVE:
        return
    measurement = _ACTIVE[-1]
    _ACTIVE.clear()
    measurement._active = False
    try:
        if measurement.stop_parent is not None:
            measurement.stop_parent()
        import coverage

        coverage.process_startup(force=True)
    except Exception:
        pass


def stop_auto_started() -> bool:
    """Stop the measurement coverage.py's start-up hook began here from our rcfile; whether it did.

    A measuring pytest started by the tests of another (an xdist worker of
    a measuring controller) measures itself: two tracers cannot share a
    process.  A measurement started from any other configuration (the
    user's, this project's self-coverage) is left alone.
    """
    import coverage

    auto = getattr(coverage.process_startup, "coverage", None)
    config_file = str(getattr(getattr(auto, "config", None), "config_file", "") or "")
    if auto is None or os.path.basename(config_file) != RCFILE:
        return False
    stop_inherited(auto)()
    coverage.process_startup.coverage = None  # type: ignore[attr-defined]  # (not started again)
    return True


def stop_inherited(cov: Any) -> Callable[[], None]:
    """In a forked child: stop `cov` (the parent's measurement) without saving it."""

    def stop() -> None:
        cov._auto_save = False
        try:
            cov.stop()
        except Exception:
            pass

    return stop
