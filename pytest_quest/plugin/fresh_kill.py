"""A kill confirmed in a fresh process: the mutant in place before any test module is imported.

The mutation child swaps a mutant into the live function after collection:
whatever a test module computed from the function before (a table of
expected values built at import, ``parametrize`` arguments, a memo filled
on the test's first run) holds the ORIGINAL's answers, so comparing the
function with them "kills" every mutant and agrees with the probes,
without checking anything (``EXPECTED = f(3)`` then ``assert f(3) == EXPECTED``).

So, once every mutant is killed, each killing test is run once more in a
fresh pytest process started by the mutation child, with one mutant it
killed applied there from the start: coverage.py's start-up hook loads
engine/remote_mutant.py, which imports the function's module from the
mutated tree, before any conftest or test module.  An honest test fails
there as it did in the mutation child; a test whose expectations came from
the function passes.  Each such test is named in the child's report and the
judge makes it REVIEW (``mutation.kill_unconfirmed``, app/trust.py); so is
a fresh run that ends without its report.

The fresh process reports over a channel of its own (engine/channel.py,
role ``fresh``), like a gate child: its outcomes and which tests reached
the mutant.  Limits: it needs the processes the tests start to be measured
(coverage.py's start-up hook, the ``subprocesses`` policy on); without it
nothing is confirmed, as before, and a fresh run where the mutant was not
applied (no start-up hook in that environment) says nothing either.  A
mutant that was killed by the time budget (it loops) is not used.  A test that tells the
fresh process from the gate's children (its parent is the mutation child)
can fail there on purpose.  `pytest --quest audit` (the project's own
tests, no submitter) does not run it.
"""

from __future__ import annotations

import builtins
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from pytest_quest.core.mutants import CHANGED, REACHED
from pytest_quest.engine.channel import JudgeChannel
from pytest_quest.plugin import child_channel
from pytest_quest.plugin.child_runs import outcome_of

ROLE = "fresh"
# The mutation child's environment as it started, before any conftest or test
# module ran: the fresh run gets it, not what the tests have set since (a
# variable set at import would tell it apart from the gate's children).
START_ENV: dict[str, str] = {}


class FreshRecorder:
    """In the fresh process: each test's outcome, and whether it ran the mutant."""

    def __init__(self, quiet: Callable[[], None], only: list[str] | None = None) -> None:
        self.quiet = quiet
        self.only = set(only or [])
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

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
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
        try:
            yield
        finally:
            self.current = ""

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_error = True

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports.setdefault(report.nodeid, []).append(report)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        outcomes = {nodeid: outcome_of(reports) for nodeid, reports in self.reports.items()}
        child_channel.send(
            {
                "outcomes": outcomes,
                "reached": sorted(self.reached),
                "applied": self.applied,
                "collect_error": self.collect_error,
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


def killers(mutants: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Per mutant index, the killing tests to confirm with it: each test once, its first kill."""
    chosen: dict[int, list[str]] = {}
    seen: set[str] = set()
    for entry in mutants:
        if entry.get("status") != "killed" or entry.get("how") == "timeout":
            continue
        test = str(entry.get("killed_by") or "")
        if test and test not in seen:
            seen.add(test)
            chosen.setdefault(int(entry["index"]), []).append(test)
    return chosen


class Fresh(NamedTuple):
    """What a fresh run reports: outcomes, tests that reached the mutant, and two flags."""

    outcomes: dict[str, str]
    reached: set[str]
    applied: bool = True
    collect_error: bool = False


def run_fresh(config: pytest.Config, nodeids: list[str], timeout: float) -> Fresh | str:
    """`nodeids` in a fresh pytest process: their outcomes and which reached the mutant, or why not."""
    channel = JudgeChannel({"role": ROLE, "only": list(nodeids)})
    try:
        command = [sys.executable, "-m", "pytest"]
        command += fresh_arguments(config.invocation_params.args, channel.argument)
        process = subprocess.Popen(
            command,
            cwd=str(config.invocation_params.dir),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(START_ENV) if START_ENV else None,
            pass_fds=channel.child_fds,
        )
        channel.started()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return f"the fresh run took longer than {timeout:g}s"
        received = channel.receive()
    finally:
        channel.close()
    payload = received.payload if not received.tampered else None
    if not isinstance(payload, dict):
        return f"the fresh run sent no report (exit status {process.returncode})"
    outcomes = payload.get("outcomes")
    reached = payload.get("reached")
    if not isinstance(outcomes, dict) or not isinstance(reached, list):
        return "the fresh run's report is not one"
    return Fresh(
        {str(k): str(v) for k, v in outcomes.items()},
        {str(n) for n in reached},
        payload.get("applied") is True,
        payload.get("collect_error") is True,
    )


def _pilot(mutants: list[dict[str, Any]], chosen: dict[int, list[str]]) -> int:
    """The mutant every killing test is first tried with: ``return None`` when it was killed."""
    for entry in mutants:
        if entry.get("operator") == "body.return_none" and entry.get("status") == "killed":
            if entry.get("how") != "timeout":
                return int(entry["index"])
    return next(iter(chosen))


def _describe(entry: dict[str, Any]) -> str:
    return f"mutant {entry.get('id', '')} `{entry.get('original')}` -> `{entry.get('mutated')}`"


def unconfirmed_kills(
    config: pytest.Config,
    mutants: list[dict[str, Any]],
    arm: Callable[[int], str],
    disarm: Callable[[], None],
    timeout: float,
) -> dict[str, str]:
    """Killing tests whose kill does not hold in a fresh process with the mutant: test -> why.

    One fresh process runs every killing test with one mutant (``return
    None``, which an honest test of the results fails); a test that passes
    there is run again with the first mutant it killed itself.
    """
    chosen = killers(mutants)
    if not chosen:
        return {}
    first = {test: index for index, tests in chosen.items() for test in tests}
    by_index = {int(entry["index"]): entry for entry in mutants}
    pilot = _pilot(mutants, chosen)
    rounds: list[tuple[int, list[str]]] = [(pilot, list(first))]
    found: dict[str, str] = {}
    while rounds:
        index, tests = rounds.pop(0)
        what = _describe(by_index[index])
        marks = arm(index)
        try:
            ran = run_fresh(config, tests, timeout)
        finally:
            disarm()
            if marks and os.path.exists(marks):
                os.unlink(marks)
        again: dict[int, list[str]] = {}
        for test in tests:
            if isinstance(ran, str):
                found[test] = f"{what}: {ran}"
                continue
            if not ran.applied:
                continue  # no start-up hook in this environment: nothing to say
            # Not run: with a module that failed to import under the mutant,
            # a kill; else the test is not there with the mutant in place
            # (its parameters or name were computed by the function).
            outcome = ran.outcomes.get(test, "error" if ran.collect_error else "not collected")
            if outcome in ("failed", "error"):
                continue
            if first[test] != index:
                again.setdefault(first[test], []).append(test)
                continue
            found[test] = (
                f"{what} killed it among the mutant runs, but in a fresh process with the "
                f"same mutant in place from the start its outcome is: {outcome}"
                + ("" if test in ran.reached else " (without running the function there)")
            )
        rounds += sorted(again.items())
    return found


__all__ = ["ROLE", "Fresh", "FreshRecorder", "fresh_arguments", "killers", "run_fresh", "unconfirmed_kills"]
