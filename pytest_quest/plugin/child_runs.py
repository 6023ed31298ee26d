"""In the mutation child: running one test (against a mutant, with a time budget), and the baseline runs.

Part of the mutation child's plugin (plugin/mutation_child.py).
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
from _pytest.runner import runtestprotocol

from pytest_quest.core.budget import mutant_budget
from pytest_quest.engine.memory_cap import capped
from pytest_quest.engine.swap import ModuleState, cache_wrappers_of

_T = TypeVar("_T")


def again_on_ast_race(make: Callable[[], _T]) -> _T:
    """`make()`, made once more after CPython 3.11's "AST constructor recursion depth mismatch".

    Most likely a race: the ``ast`` module's recursion counter is shared by the threads: a
    thread a test left running that formats a traceback (``traceback``
    parses source lines) while this one parses the function's module makes
    the parse fail.  Nothing of the function's check has run yet.
    """
    try:
        return make()
    except SystemError as exc:
        if "recursion depth mismatch" not in str(exc):
            raise
        return make()


class MutantTimeout(BaseException):
    """Raised in a test running a mutant past its time budget (the mutant counts as killed)."""


def outcome_of(reports: list[pytest.TestReport]) -> str:
    outcome = "passed"
    for report in reports:
        if hasattr(report, "wasxfail"):
            return "xfailed" if report.skipped else "xpassed"
        if report.failed:
            return "failed" if report.when == "call" else "error"
        if report.skipped:
            outcome = "skipped"
    return outcome


def own_alarm(budget: float, on_time: Callable[[], None]) -> Callable[[int, Any], None]:
    """A watchdog's SIGALRM handler that believes only its own timer: `on_time` once `budget` is spent.

    A SIGALRM that comes earlier is not the watchdog's (a test's own
    ``signal.alarm``/``setitimer``, a signal it sends itself): the watchdog
    is armed again for the time left and the test goes on, so a test that
    sets a short timer cannot pass a mutant off as one that ran too long.
    The time is measured here, with the monotonic clock.
    """
    start = time.monotonic()

    def alarm(signum: int, frame: Any) -> None:
        left = budget - (time.monotonic() - start)
        if left > 0:
            signal.setitimer(signal.ITIMER_REAL, left, 0.5)
            return
        on_time()

    return alarm


def try_mutant(items: list[pytest.Item], budget: float) -> dict[str, Any]:
    """Run `items` against the mutant in place until one does not pass, all of them
    within `budget` seconds (a test stopped at it: killed, ``how: timeout``)."""
    timed_out = []
    stopped = {"how": "timeout", "budget": round(budget, 3)}

    def on_time() -> None:
        timed_out.append(True)
        raise MutantTimeout(f"mutant ran longer than {budget:g}s")

    # The thread's signal mask is the process's, not a module's: one a mutant left
    # blocked would decide the runs after it (the next mutants', the original's probes).
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    previous = signal.signal(signal.SIGALRM, own_alarm(budget, on_time))
    # Repeats, in case a test swallows the first one and loops on.
    signal.setitimer(signal.ITIMER_REAL, budget, 0.5)
    try:
        # A loop in C never lets the alarm run: its memory is capped (engine/memory_cap.py).
        with capped():
            for item in items:
                try:
                    reports = run_item(item)
                except MutantTimeout:
                    # Stopped outside the test's own phases (in a hook): still a kill.
                    return {"status": "killed", "killed_by": item.nodeid, **stopped}
                if timed_out:
                    return {"status": "killed", "killed_by": item.nodeid, **stopped}
                outcome = outcome_of(reports)
                if outcome != "passed":
                    how = "memory" if ran_out_of_memory(reports) else outcome
                    return {"status": "killed", "killed_by": item.nodeid, "how": how}
        return {"status": "survived", "killed_by": "", "how": ""}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def ran_out_of_memory(reports: list[pytest.TestReport]) -> bool:
    """Whether the test failed on a MemoryError (the mutant's run hit the memory cap)."""
    return any(r.failed and "MemoryError" in r.longreprtext for r in reports)


# ``functools.lru_cache``/``cache`` wrappers of the function: cleared before
# every test, so that each run executes the function (and each mutant).
CACHES: list[Any] = []
# The judged modules as collection left them (`ModuleState`): put back before every
# test of a mutant or probe run when it was shown safe (`module_resets`).
RESETS: list[ModuleState] = []


class _Logged:
    """The reports logged while one test runs: its subtests' (``self.subTest``, the
    ``subtests`` fixture) go to the hook only, never into runtestprotocol's list."""

    def __init__(self) -> None:
        self.reports: list[pytest.TestReport] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports.append(report)


# A doctest's namespace as collected, by node id: doctest's runner clears it
# after each run (``clear_globs``), so a second run of the same item would fail
# with a NameError that no code under test caused.
_DOCTEST_NAMESPACES: dict[str, dict[str, Any]] = {}


def fresh_doctest(item: pytest.Item) -> None:
    """Give a doctest item the namespace it had when collected, before each of its runs."""
    namespace = getattr(getattr(item, "dtest", None), "globs", None)
    if not isinstance(namespace, dict):
        return
    saved = _DOCTEST_NAMESPACES.setdefault(item.nodeid, dict(namespace))
    namespace.clear()
    namespace.update(saved)


def error_line(reports: list[pytest.TestReport]) -> str:
    """The first failing report's error, one line (the exception and its message), or ""."""
    for report in reports:
        if report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            message = getattr(crash, "message", None)
            lines = [line for line in report.longreprtext.splitlines() if line.strip()]
            text = message if isinstance(message, str) and message else (lines[-1] if lines else "")
            return text.splitlines()[0][:300] if text else report.when
    return ""


class _SessionOnly:
    """Stands for the next test in pytest's teardown: every fixture is torn down but the
    session's, kept for the whole run as pytest keeps them (a session fixture that makes a
    fixed-name folder fails when set up a second time)."""

    def __init__(self, session: pytest.Session) -> None:
        self.session = session

    def listchain(self) -> list[pytest.Session]:
        return [self.session]


def run_item(item: pytest.Item) -> list[pytest.TestReport]:
    """The test's reports, then its failed subtests' (one fails the test, as in pytest; a
    skipped subtest does not make the test skipped)."""
    for cache in CACHES:
        cache.cache_clear()
    for state in RESETS:
        state.restore()
    fresh_doctest(item)

    logged = _Logged()
    item.config.pluginmanager.register(logged)
    try:
        # Every fixture but the session's is torn down after each test, so a test can
        # be run again (and stopped early) with its fixtures set up afresh.
        stand_in = cast(pytest.Item, _SessionOnly(item.session))
        reports = runtestprotocol(item, log=False, nextitem=stand_in)
    finally:
        item.config.pluginmanager.unregister(logged)
    return reports + [r for r in logged.reports if r.nodeid == item.nodeid and r.failed]


class Baseline:
    """The covering tests of every function run twice against the original, once for the child.

    Each test runs twice in a row whatever number of functions it covers
    (the original code is the same for all of them); each function gets the
    outcomes and times of its own tests.  The ``lru_cache`` wrappers of every
    function are cleared before each test, as they are for one function.
    """

    RUNS = 2

    def __init__(self, functions: list[dict[str, Any]], by_id: dict[str, pytest.Item]) -> None:
        order = list(dict.fromkeys(n for f in functions for n in f["nodeids"] if n in by_id))
        sources = {f["file"]: Path(f["file"]).read_text(encoding="utf-8") for f in functions}
        self.outcomes: list[dict[str, str]] = []
        self.seconds: list[dict[str, float]] = []
        # Per test, the first error line of each run where it did not pass ("" else).
        self.errors: dict[str, list[str]] = {}
        # Taken before any test ran: what a fresh process gives each test.
        self.files = list(sources)
        self.modules = ModuleState(self.files)
        for _ in range(self.RUNS):
            # Found before each run: the module may be imported by the first.
            CACHES[:] = again_on_ast_race(
                lambda: cache_wrappers_of(
                    [(f["file"], sources[f["file"]], int(f["start"])) for f in functions]
                )
            )
            outcomes, seconds = {}, {}
            for nodeid in order:
                started = time.monotonic()
                reports = run_item(by_id[nodeid])
                outcomes[nodeid] = outcome_of(reports)
                self.errors.setdefault(nodeid, []).append(error_line(reports))
                seconds[nodeid] = time.monotonic() - started
            self.outcomes.append(outcomes)
            self.seconds.append(seconds)
        # A test's own time: the faster of its runs (the other had a cold start, perhaps).
        self.fastest = {n: min(run[n] for run in self.seconds) for n in order}

    def fill(self, items: list[pytest.Item], result: dict[str, Any]) -> None:
        """A function's baseline runs: its tests' outcomes, and their time, per run."""
        for outcomes, seconds in zip(self.outcomes, self.seconds):
            result["runs"].append({item.nodeid: outcomes[item.nodeid] for item in items})
            result["run_seconds"].append(sum(seconds[item.nodeid] for item in items))
        result["errors"] = {
            item.nodeid: self.errors[item.nodeid]
            for item in items
            if any(self.errors.get(item.nodeid, []))
        }
        result["phases"]["baseline"] = sum(result["run_seconds"])

    def budgets(self, items: list[pytest.Item]) -> dict[str, float]:
        """Per test of `items`, the seconds it may run against a mutant (core/budget.py):
        from its own baseline runs, whatever its siblings take."""
        return {
            item.nodeid: mutant_budget(run[item.nodeid] for run in self.seconds) for item in items
        }

    def fastest_first(self, items: list[pytest.Item]) -> list[pytest.Item]:
        """`items`, the fastest first (a mutant stops at its first killing test); ties kept."""
        return sorted(items, key=lambda item: self.fastest.get(item.nodeid, 0.0))


def module_resets(
    baseline: Baseline, stable: list[pytest.Item], budget: float
) -> list[ModuleState]:
    """The judged modules' state to put back before each test of the mutant runs, or none.

    Nothing when the baseline runs left the modules as collection did.  Else the
    stable tests run once more against the original, each from that state: a
    test that then fails needs what an earlier run left (a session fixture's
    registration in a module's dict, say), and the mutant runs go on from the
    state the baseline left, as they did without it.
    """
    if not baseline.modules.changed():
        return []
    left = ModuleState(baseline.files)
    RESETS[:] = [baseline.modules]
    try:
        outcome = try_mutant(stable, budget)
    finally:
        RESETS.clear()
    if outcome["status"] == "survived":
        return [baseline.modules]
    left.restore()
    return []


def quiet_hypothesis() -> None:
    """Make Hypothesis tests repeatable here, and keep their database untouched."""
    hypothesis = sys.modules.get("hypothesis")
    if hypothesis is None:
        return
    settings = hypothesis.settings
    current = settings.default
    settings.register_profile(
        "pytest-quest-mutants",
        settings(current, database=None, derandomize=True, deadline=None),
    )
    settings.load_profile("pytest-quest-mutants")
