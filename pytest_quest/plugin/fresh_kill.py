"""A kill confirmed in a fresh process: the mutant in place before any test module is imported.

A test module that computed the function's answers at import (``EXPECTED = f(3)``)
"kills" every mutant swapped in later.  So once every mutant is killed, the killing
tests run again in a fresh pytest with a mutant in place from the start; one that
passes there is REVIEW ``mutation.kill_unconfirmed``.  `Parked` starts that process
early.  Why and limits: docs/judge.md, "Kills confirmed in a fresh process".
"""

from __future__ import annotations

import builtins
import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from pytest_quest.core.kills import IMPORTED_BEFORE_SIGN, RUNAWAY, describe, killers, pilot
from pytest_quest.core.mutant_ast import CHANGED, REACHED
from pytest_quest.engine import processes, remote_mutant
from pytest_quest.engine.channel import CHILD_ARGUMENT, JudgeChannel, moved_command
from pytest_quest.engine.memory_cap import capped
from pytest_quest.plugin import child_channel
from pytest_quest.plugin.child_runs import outcome_of, own_alarm

ROLE = "fresh"
# The code under test's folders, from the mutation child's instructions, handed to its fresh
# runs: each gate child leaves their modules to the import system (plugin/rewrite.py).
SOURCES: list[str] = []
# The mutation child's environment as it started, before any conftest or test
# module ran: the fresh run gets it, not what the tests have set since (a
# variable set at import would tell it apart from the gate's children).
START_ENV: dict[str, str] = {}
# In a fresh run: the module of the mutant's file when a plugin imported it
# before any conftest, without the mutant (engine/remote_mutant.py); else "".
IMPORTED_BEFORE: list[str] = []


class FreshRecorder:
    """In the fresh process: each test's outcome, and whether it ran the mutant."""

    def __init__(
        self,
        quiet: Callable[[], None],
        only: list[str] | None = None,
        budgets: dict[str, float] | None = None,
    ) -> None:
        self.quiet = quiet
        self.only = set(only or [])
        # Per test, the seconds it may run here (as against a mutant in the
        # mutation child); one stopped there is "timeout", which confirms only a
        # kill that ran away in the mutation child too (RUNAWAY).
        self.budgets = dict(budgets or {})
        self.timed_out: set[str] = set()
        self.reports: dict[str, list[pytest.TestReport]] = {}
        self.reached: set[str] = set()
        self.current = ""
        # Whether the mutant was put in place here (coverage.py's start-up
        # hook ran engine/remote_mutant.py), and whether a module failed to import.
        self.applied = False
        self.collect_error = False

    def pytest_configure(self, config: pytest.Config) -> None:
        for name in (REACHED, CHANGED):
            inner = getattr(builtins, name, None)
            if callable(inner):
                self.applied = True
                setattr(builtins, name, self._counted(inner))

    def _counted(self, inner: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def mark(value: Any) -> Any:
            if self.current:
                self.reached.add(self.current)
            return inner(value)

        return mark

    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """Only the tests the channel named run (the command line names all the child's)."""
        kept = [item for item in items if item.nodeid in self.only]
        dropped = [item for item in items if item.nodeid not in self.only]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.quiet()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        self.current = item.nodeid
        budget = self.budgets.get(item.nodeid)
        budget = budget if isinstance(budget, (int, float)) and budget > 0 else None
        previous = None
        if budget:

            def on_time() -> None:
                self.timed_out.add(item.nodeid)
                pytest.fail(f"ran longer than {budget:g}s with the mutant", pytrace=False)

            previous = signal.signal(signal.SIGALRM, own_alarm(budget, on_time))
            signal.setitimer(signal.ITIMER_REAL, budget, 0.5)  # again, if swallowed
        try:
            with capped() if budget else contextlib.nullcontext():
                yield
        finally:
            if budget:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
            self.current = ""

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_error = True

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports.setdefault(report.nodeid, []).append(report)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        outcomes = {
            nodeid: "timeout" if nodeid in self.timed_out else outcome_of(reports)
            for nodeid, reports in self.reports.items()
        }
        child_channel.send(
            {
                "outcomes": outcomes,
                "reached": sorted(self.reached),
                "applied": self.applied,
                "collect_error": self.collect_error,
                "imported_before": IMPORTED_BEFORE[0] if IMPORTED_BEFORE else "",
            }
        )
        child_channel.close()


def fresh_arguments(args: tuple[str, ...] | list[str], channel: str) -> list[str]:
    """The mutation child's own pytest arguments, tests included, with `channel` for its own.

    The same command line: the tests to run come over the channel (a command
    line naming only the killing tests told the fresh run apart).
    """
    kept: list[str] = []
    swap = False
    for index, arg in enumerate(args):
        if swap:
            kept.append(channel)
            swap = False
        elif arg == "--":
            return [*kept, *args[index:]]
        elif arg == "--quest-channel":
            kept.append(arg)
            swap = True
        elif arg.startswith("--quest-channel="):
            kept.append(f"--quest-channel={channel}")
        else:
            kept.append(arg)
    return kept


class Fresh(NamedTuple):
    """What a fresh run reports: outcomes, tests that reached the mutant, and two flags."""

    outcomes: dict[str, str]
    reached: set[str]
    applied: bool = True
    collect_error: bool = False
    # The module of the mutant's file, imported there before the mutant could be in place.
    imported_before: str = ""


# Starts the fresh run detached (prints its pid, then ends): its parent is then the
# nearest subreaper, as the gate children's is, never the mutation child, whose
# tests would see it among their process's children (and wait for it).
_DETACH = (
    "import os, subprocess, sys; fds = [int(f) for f in sys.argv[1].split(',')]; "
    "p = subprocess.Popen(sys.argv[2:], pass_fds=fds, stdin=subprocess.DEVNULL, "
    "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid, flush=True); os._exit(0)"
)


class Parked:
    """A fresh run started at the mutation child's start, held before any conftest is imported.

    Its start (the interpreter, pytest and the plugins) goes on while the
    mutants run; once every mutant is killed it is told which tests to run,
    reads the run record (the mutant, as one started then would) and goes
    on.  Not used: it is stopped, having run nothing of the project.
    """

    def __init__(self, args: tuple[str, ...] | list[str], cwd: str) -> None:
        self.channel = JudgeChannel(None)
        self.pidfd = -1
        self.started = time.monotonic()
        command = [sys.executable, "-m", "pytest", *fresh_arguments(args, CHILD_ARGUMENT)]
        command = moved_command(command, self.channel.child_fds, child_channel.output_file())
        fds = ",".join(str(fd) for fd in self.channel.child_fds)
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-S", "-c", _DETACH, fds, *command],
                cwd=cwd, env=dict(START_ENV) if START_ENV else None, pass_fds=self.channel.child_fds,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                timeout=30, check=True,
            )  # fmt: skip
            self.pidfd = os.pidfd_open(int(done.stdout))
        except (OSError, ValueError, subprocess.SubprocessError):
            self.pidfd = -1
        self.channel.started()

    def age(self) -> float:
        return time.monotonic() - self.started

    def alive(self) -> bool:
        if self.pidfd < 0:
            return False
        ready, _, _ = select.select([self.pidfd], [], [], 0)
        return not ready  # a pidfd is readable once its process ended

    def resume(self, nodeids: list[str], timeout: float) -> Fresh | str | None:
        """Its outcomes as `run_fresh`'s; None when it came too late (run afresh then)."""
        self.channel.instruct(
            {
                "role": ROLE,
                "only": list(nodeids),
                "budgets": _budgets(nodeids),
                "resume": True,
                "sources": SOURCES,
            }
        )
        try:
            if self.pidfd >= 0:
                # Reported and still running (its exit, a hang there): stopped, its report stands.
                ended = processes.wait_for_exit(
                    processes.pidfd_exited(self.pidfd),
                    self.channel.reported,
                    timeout,
                    self.channel.finished,
                )
                if ended != processes.EXITED:
                    processes.pidfd_kill(self.pidfd)
                if ended == processes.TIMED_OUT:
                    return f"the fresh run took longer than {timeout:g}s"
                received = self.channel.receive()
            else:
                received = self.channel.receive(wait=timeout)
        finally:
            self.stop()
        if received.tampered == "the channel was still held open after the run ended":
            return f"the fresh run took longer than {timeout:g}s"
        payload = received.payload if not received.tampered else None
        if isinstance(payload, dict) and payload.get("late") is True:
            return None
        return _fresh(payload, "the fresh run sent no report")

    def stop(self) -> None:
        self.channel.close()
        if self.pidfd >= 0:
            processes.pidfd_kill(self.pidfd)
            os.close(self.pidfd)
            self.pidfd = -1


# The mutation child's fresh run started early, until used or stopped.
PARKED: list[Parked] = []
# Per covering test, the seconds it may run in a fresh run (set by the mutation child:
# its budget against a mutant); a test over it there is stopped, its outcome "timeout".
BUDGETS: dict[str, float] = {}


def _budgets(nodeids: list[str]) -> dict[str, float]:
    return {nodeid: BUDGETS[nodeid] for nodeid in nodeids if nodeid in BUDGETS}


# A fresh run held longer than `MAX_HOLD` seconds would be much older than one
# started afresh when its tests import the function (which would tell it
# apart): it is stopped, and one is started when the rest of the check is
# estimated at most `LEAD` seconds (about a pytest start here).
MAX_HOLD = 1.5
LEAD = 1.0


def can_park() -> bool:
    """Whether a held run can be stopped for sure (a pidfd: Linux 5.3+); else none is held."""
    return hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal")


def park_early(instructions: dict[str, Any], config: pytest.Config) -> None:
    """In the mutation child, before any conftest: a fresh run started now when one may be needed."""
    functions = instructions.get("functions") or []
    if not can_park():
        return
    # A first part of the instructions (the functions not known yet) says whether kills are confirmed.
    confirm = instructions.get("confirm", any(f.get("confirm", True) for f in functions))
    if instructions.get("mutants", True) and confirm:
        params = config.invocation_params
        PARKED[:] = [Parked(params.args, str(params.dir))]


def park_when_due(config: pytest.Config, remaining: float, survived: bool) -> None:
    """Before each mutant's (or probe's) runs: the fresh run stopped when it is not needed (a
    mutant survived) or would be held too long, started when due (`remaining`: the estimated
    seconds of the rest of the check)."""
    if PARKED and (survived or PARKED[0].age() + remaining > MAX_HOLD):
        PARKED.pop().stop()
    if PARKED or survived or remaining > LEAD or not can_park():
        return
    params = config.invocation_params
    PARKED[:] = [Parked(params.args, str(params.dir))]


def unpark() -> Parked | None:
    """The fresh run started early, once (None: none, or it was used)."""
    return PARKED.pop() if PARKED else None


def resume_here() -> None:
    """In a fresh run started early, on its instructions: the mutant in place now, or too late.

    Too late (the function's module imported before this point): it says so
    and ends, and the mutation child starts a fresh run afresh.
    """
    if not remote_mutant.apply_again():
        child_channel.send({"late": True})
        os._exit(0)


def run_fresh(
    config: pytest.Config, nodeids: list[str], timeout: float, parked: Parked | None = None
) -> Fresh | str:
    """`nodeids` in a fresh pytest process: their outcomes and which reached the mutant, or why not.

    In `parked` when it is still waiting (and was not too late), else in one started now.
    """
    if parked is not None:
        if parked.alive():
            found = parked.resume(nodeids, timeout)
            if found is not None:
                return found
        parked.stop()
    channel = JudgeChannel(
        {"role": ROLE, "only": list(nodeids), "budgets": _budgets(nodeids), "sources": SOURCES}
    )
    try:
        command = [sys.executable, "-m", "pytest"]
        command += fresh_arguments(config.invocation_params.args, CHILD_ARGUMENT)
        process = subprocess.Popen(
            moved_command(command, channel.child_fds, child_channel.output_file()),
            cwd=str(config.invocation_params.dir),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(START_ENV) if START_ENV else None,
            pass_fds=channel.child_fds,
        )
        channel.started()
        ended = processes.wait_for_exit(
            processes.popen_exited(process), channel.reported, timeout, channel.finished
        )
        if ended != processes.EXITED:
            process.kill()
            process.wait()
        if ended == processes.TIMED_OUT:
            return f"the fresh run took longer than {timeout:g}s"
        received = channel.receive()
    finally:
        channel.close()
    payload = received.payload if not received.tampered else None
    return _fresh(payload, f"the fresh run sent no report (exit status {process.returncode})")


def _fresh(payload: dict[str, Any] | None, none: str) -> Fresh | str:
    if not isinstance(payload, dict):
        return none
    outcomes = payload.get("outcomes")
    reached = payload.get("reached")
    if not isinstance(outcomes, dict) or not isinstance(reached, list):
        return "the fresh run's report is not one"
    return Fresh(
        {str(k): str(v) for k, v in outcomes.items()},
        {str(n) for n in reached},
        payload.get("applied") is True,
        payload.get("collect_error") is True,
        str(payload.get("imported_before") or ""),
    )


def unconfirmed_kills(
    config: pytest.Config,
    mutants: list[dict[str, Any]],
    arm: Callable[[int], str],
    disarm: Callable[[], None],
    timeout: float,
    parked: Parked | None = None,
    alongside: list[str] | None = None,
) -> dict[str, str]:
    """Killing tests whose kill does not hold in a fresh process with the mutant: test -> why.

    One fresh process runs every killing test with one mutant (``return
    None``); a test that passes there is run again with the first mutant it
    killed.  The first run is `parked`'s when one was started early.  The
    tests `alongside` run too, unjudged, so the run looks like the child's.
    """
    chosen = killers(mutants)
    if not chosen:
        if parked is not None:
            parked.stop()
        return {}
    rounds = _Rounds(mutants, chosen, alongside or [])
    # A round: a mutant, the tests judged by their own outcome with it, and the tests
    # whose kill of it holds when any stable covering test fails with it in place.
    todo: list[tuple[int, list[str], list[str]]] = [
        (pilot(mutants, chosen), list(rounds.first), [])
    ]
    while todo:
        index, tests, by_any = todo.pop(0)
        marks = arm(index)
        try:
            everything = list(dict.fromkeys([*(alongside or []), *tests, *by_any]))
            ran = run_fresh(config, everything, timeout, parked)
            parked = None
        finally:
            disarm()
            if marks and os.path.exists(marks):
                os.unlink(marks)
        again = rounds.judge(index, tests, by_any, ran)
        todo += [(i, tests_, any_) for i, (tests_, any_) in sorted(again.items())]
    return rounds.found


class _Rounds:
    """What the fresh runs decided so far, and which kills each run's outcomes leave open."""

    def __init__(
        self, mutants: list[dict[str, Any]], chosen: dict[int, list[str]], alongside: list[str]
    ) -> None:
        self.first = {test: index for index, tests in chosen.items() for test in tests}
        self.by_index = {int(entry["index"]): entry for entry in mutants}
        # Per test, the mutants it was the first to kill (by a failure): each must hold.
        self.owned: dict[str, list[int]] = {}
        for entry in mutants:
            if entry.get("status") == "killed" and entry.get("how") not in RUNAWAY:
                killer = str(entry.get("killed_by") or "")
                self.owned.setdefault(killer, []).append(int(entry["index"]))
        self.witnesses = set(alongside) | set(self.first)
        self.found: dict[str, str] = {}

    def judge(
        self, index: int, tests: list[str], by_any: list[str], ran: Fresh | str
    ) -> dict[int, tuple[list[str], list[str]]]:
        """Record the kills `ran` (mutant `index` in place) does not confirm; the rounds left."""
        what = describe(self.by_index[index])
        if isinstance(ran, str):
            for test in [*by_any, *tests]:
                self.found[test] = f"{what}: {ran}"
            return {}
        failing = {
            t for t, o in ran.outcomes.items() if t in self.witnesses and o in ("failed", "error")
        }
        for test in by_any:
            if ran.applied and not failing:
                self.found[test] = _unconfirmed(what, ran, test, "no covering test fails")
        again: dict[int, tuple[list[str], list[str]]] = {}
        if not ran.applied:
            return again  # no start-up hook in this environment: nothing to say
        for test in tests:
            # Not run: with a module that failed to import under the mutant,
            # a kill; else the test is not there with the mutant in place
            # (its parameters or name were computed by the function).
            outcome = ran.outcomes.get(test, "error" if ran.collect_error else "not collected")
            if outcome in ("failed", "error"):
                continue
            if outcome == "timeout" and self.by_index[index].get("how") in RUNAWAY:
                continue  # it runs away there too: the same mutant, the same kill
            if self.first[test] != index:
                again.setdefault(self.first[test], ([], []))[0].append(test)
                continue
            if failing - {test} and not ran.imported_before:
                # Another covering test (one that passed on the original) fails with
                # this mutant in place from the start: the kill holds. So must the
                # kills of the other mutants this test was the first to kill.
                for other in self.owned.get(test, []):
                    if other != index:
                        again.setdefault(other, ([], []))[1].append(test)
                continue
            self.found[test] = _unconfirmed(what, ran, test, f"its outcome is: {outcome}")
        return again


def _unconfirmed(what: str, ran: Fresh, test: str, outcome: str) -> str:
    """Why a kill by `test` does not hold in the fresh run `ran` with mutant `what` in place."""
    if ran.imported_before:
        how = (
            "is the start-up hook that puts the mutant in place there: it runs before any mutant"
            if ran.imported_before == remote_mutant.__name__
            else "is imported there before any conftest (by a pytest plugin), without the mutant"
        )
        return (
            f"{what} killed it among the mutant runs, but a fresh process {IMPORTED_BEFORE_SIGN}: "
            f"module {ran.imported_before} {how}"
        )
    return (
        f"{what} killed it among the mutant runs, but in a fresh process with the "
        f"same mutant in place from the start {outcome}"
        + ("" if test in ran.reached else " (without running the function there)")
    )
