"""The pytest plugin of the gate's children: baseline runs, then each mutant swapped in and tried.

Loaded in both children (``-p``); it checks mutants only when its judge's channel asks it to.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import random
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from _pytest.runner import runtestprotocol

from pytest_quest.core.model import Fact, FunctionFacts, Verdict
from pytest_quest.core.mutants import (
    CHANGED,
    REACHED,
    Mutant,
    changed_value,
    mutated_tree,
    plan_mutants,
    probe_tree,
)
from pytest_quest.core.run import CollectionError, RunReport
from pytest_quest.engine.codec import loads
from pytest_quest.engine.guard import protect_from_env
from pytest_quest.engine.remote_mutant import RemoteMutants
from pytest_quest.engine.swap import CodeSwap, SwapError, SwapMissError, cache_wrappers
from pytest_quest.plugin import child_channel
from pytest_quest.plugin.observe_child import Watch, observed
from pytest_quest.plugin.reaching import Reaching
from pytest_quest.verify.adapters import answer_to_dict, hook_verifiers, request_from_dict


class _MutantTimeout(BaseException):
    """Raised in a test running a mutant past its time budget (the mutant counts as killed)."""


def _outcome(reports: list[pytest.TestReport]) -> str:
    outcome = "passed"
    for report in reports:
        if hasattr(report, "wasxfail"):
            return "xfailed" if report.skipped else "xpassed"
        if report.failed:
            return "failed" if report.when == "call" else "error"
        if report.skipped:
            outcome = "skipped"
    return outcome


class MutationChild:
    """The pytest plugin of the mutation child (registered when its judge asks for a check)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.results: list[dict[str, Any]] | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        by_id = {item.nodeid: item for item in session.items}
        _quiet_hypothesis()
        results = []
        for function in self.spec["functions"]:
            result: dict[str, Any] = {
                "runs": [],
                "run_seconds": [],
                "mutants": [],
                "problem": "",
                "original_reached": [],
                "detects_run": [],
                "probed": False,
            }
            started = time.monotonic()
            items = [by_id[n] for n in function["nodeids"] if n in by_id]
            try:
                if session.testsfailed:
                    result["problem"] = "the covering tests could not be collected again"
                elif len(items) < len(function["nodeids"]):
                    result["problem"] = "some covering tests were not found again"
                else:
                    self._run(function, items, result)
            except Exception as exc:
                result["problem"] = f"the mutation runner failed: {type(exc).__name__}: {exc}"
            result["seconds"] = round(time.monotonic() - started, 4)
            results.append(result)
        self.results = results
        return True

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # The one message to the judge, then the channel is closed: nothing
        # that runs later (atexit, other plugins' hooks) can add to it.
        if self.results is not None:
            message: dict[str, Any] = {"functions": self.results}
            l1 = self.spec.get("l1")
            if l1:
                message["l1"] = l1_results(session.config, l1)
                if l1.get("verify"):
                    message["answers"] = verifier_answers(session.config, l1)
            child_channel.send(message)
        child_channel.close()

    def _run(
        self, function: dict[str, Any], items: list[pytest.Item], result: dict[str, Any]
    ) -> None:
        source = Path(function["file"]).read_text(encoding="utf-8")
        start = int(function["start"])
        for _ in range(2):
            # Found before each baseline run: the module may be imported by the first.
            _CACHES[:] = cache_wrappers(function["file"], source, start)
            started = time.monotonic()
            result["runs"].append({item.nodeid: _outcome(_run_item(item)) for item in items})
            result["run_seconds"].append(time.monotonic() - started)
        if not self.spec.get("mutants", True):
            return
        stable = [
            item
            for item in items
            if result["runs"][0][item.nodeid] == result["runs"][1][item.nodeid] == "passed"
        ]
        if not stable:
            return  # nothing passes twice: the parent sees why in the runs
        operators = function.get("operators")
        mutants = plan_mutants(source, start, None if operators is None else tuple(operators))
        only = function.get("only")
        if only is not None:
            mutants = [m for m in mutants if m.id in set(only)]
        swap = CodeSwap(function["file"], source, start)
        tracker = _Reach(function["file"], start)
        budget = max(2.0, 10 * max(result["run_seconds"]))
        setattr(builtins, CHANGED, tracker.changed)
        setattr(builtins, REACHED, tracker.mark)
        try:
            schedule = _schedule(len(mutants), str(function.get("seed", "")))
            reaching = Reaching(source, start, function.get("line_tests"))
            for slot in schedule:
                if slot is None:
                    _probe(swap, source, start, stable, budget, tracker, result)
                else:
                    mutant = mutants[slot]
                    tests = reaching.tests(mutant.line, stable)
                    result["mutants"].append(
                        _mutant(mutant, swap, source, start, tests, budget, tracker)
                    )
        finally:
            delattr(builtins, CHANGED)
            delattr(builtins, REACHED)
        original = set(result["original_reached"])
        for entry in result["mutants"]:
            _credit(entry, original)


class _Reach:
    """Which test ran the swapped-in code: the mark functions the mutated code calls.

    In this process, and in the processes the test starts (`REMOTE`: the
    same mutant applied there, a marks file per run).
    """

    def __init__(self, file: str = "", start: int = 0) -> None:
        self.current = ""
        self.by: set[str] = set()
        self.file = file
        self.start = start
        self.index: int | None = None
        self._marks = ""

    def begin(self, nodeid: str, index: int | None) -> None:
        """The next run: test `nodeid` against mutant `index` (None: the probe)."""
        self.current, self.by = nodeid, set()
        if REMOTE and self.file:
            self._marks = REMOTE[0].arm(self.file, self.start, index)

    def end(self) -> None:
        """After the run: a process the test started that reached the code counts too."""
        if self._marks:
            if os.path.exists(self._marks):
                self.by.add(self.current)
            REMOTE[0].disarm()
            self._marks = ""

    def mark(self, value: Any) -> Any:
        self.by.add(self.current)
        return value

    def changed(self, value: Any) -> Any:
        self.by.add(self.current)
        return changed_value(value)


PROBES = 2


def _schedule(count: int, seed: str) -> list[int | None]:
    """The mutants' indices in order, with `PROBES` runs of the original (None) among them.

    Placed at random, seeded by `seed` (the quest id): the same every time.
    """
    rng = random.Random(hashlib.sha256(seed.encode("utf-8")).hexdigest())
    order: list[int | None] = list(range(count))
    for _ in range(PROBES):
        order.insert(rng.randint(0, len(order)), None)
    return order


def _probe(
    swap: CodeSwap,
    source: str,
    start: int,
    stable: list[pytest.Item],
    budget: float,
    tracker: _Reach,
    result: dict[str, Any],
) -> None:
    """Every stable test against the original (with a reach mark): each must pass and reach it."""
    try:
        applied = swap.apply(probe_tree(source, start))
    except SwapError:
        applied = 0
    try:
        if not applied and not REMOTE:
            return  # the mutants say why (not applied)
        detects, reached = [], []
        for item in stable:
            tracker.begin(item.nodeid, None)
            try:
                outcome = _try_mutant([item], budget)
            finally:
                tracker.end()
            if outcome["status"] != "survived":
                detects.append(item.nodeid)
            if item.nodeid in tracker.by:
                reached.append(item.nodeid)
        if not applied and not reached:
            return  # applied nowhere, not even in a process a test started: as above
        result["probed"] = True
        for name, found in (("detects_run", detects), ("original_reached", reached)):
            result[name] += [nodeid for nodeid in found if nodeid not in result[name]]
    finally:
        swap.restore()


def _mutant(
    mutant: Mutant,
    swap: CodeSwap,
    source: str,
    start: int,
    stable: list[pytest.Item],
    budget: float,
    tracker: _Reach,
) -> dict[str, Any]:
    entry = asdict(mutant)
    began = time.monotonic()
    missed = ""
    try:
        applied = swap.apply(mutated_tree(source, start, mutant.index))
    except SwapMissError as exc:
        swap.restore()
        if not REMOTE:
            entry.update(status="not_applied", reason=str(exc), seconds=0.0, reached_by=[])
            return entry
        # Not in this process: perhaps in the processes the tests start.
        applied, missed = 0, str(exc)
    except SwapError as exc:
        # A mutant the swap cannot express (closure variables): a limit of the plan.
        swap.restore()
        entry.update(status="skipped", reason=str(exc), seconds=0.0, reached_by=[])
        return entry
    if not applied and not REMOTE:
        swap.restore()
        entry.update(
            status="not_applied",
            reason="no live function took the mutant",
            seconds=0.0,
            reached_by=[],
        )
        return entry
    reached: set[str] = set()
    watch = Watch(swap.path, source, start, lambda item: _try_mutant([item], budget))
    witness, with_mutant = None, None
    try:
        for item in stable:
            tracker.begin(item.nodeid, mutant.index)
            try:
                outcome = _try_mutant([item], budget)
            finally:
                tracker.end()
            reached |= tracker.by
            if outcome["status"] != "survived":
                entry.update(outcome)
                break
        else:
            entry.update(status="survived", killed_by="", how="")
            # What it makes the function do, on the first test that reached it.
            witness = next((item for item in stable if item.nodeid in reached), None)
            if witness is not None and applied:
                with_mutant = watch.calls(witness)
    finally:
        swap.restore()
    if witness is not None and with_mutant:
        seen = observed(witness, with_mutant, watch.calls(witness), watch.calls(witness))
        if seen is not None:
            entry["observed"] = seen
    if not applied and not reached:
        # Applied nowhere: neither here nor in a process a test started.
        entry.update(
            status="not_applied",
            reason=missed or "no live function took the mutant",
            seconds=0.0,
            reached_by=[],
        )
        for key in ("killed_by", "how"):
            entry.pop(key, None)
        return entry
    entry["reached_by"] = sorted(reached)
    entry["seconds"] = round(time.monotonic() - began, 4)
    return entry


def _credit(entry: dict[str, Any], original: set[str]) -> None:
    """A kill or a survival counts only by a test that ran the mutant and the original."""
    if entry["status"] not in ("killed", "survived"):
        return
    witnesses = set(entry["reached_by"]) & original
    if entry["status"] == "killed":
        witnesses &= {entry["killed_by"]}
    if not witnesses:
        entry["status"] = "unreached"


def l1_results(config: pytest.Config, evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """The project's ``pytest_quest_l1_check`` hooks on the judge's evidence, as plain dicts.

    Only FAIL and REVIEW are kept (the judge keeps only those too); a hook
    that raises is one REVIEW fact (``l1.error``).
    """

    quest_id = evidence["quest"]
    try:
        ratchet = loads(Path(evidence["ratchet"]).read_bytes(), evidence["ratchet"])
        quest = ratchet.quests[quest_id]
        function = dict(evidence["function"])
        function["missing_branches"] = [tuple(arc) for arc in function["missing_branches"]]
        run = dict(evidence["run"])
        run["collection_errors"] = [CollectionError(**e) for e in run["collection_errors"]]
        results = config.hook.pytest_quest_l1_check(
            quest=quest, function=FunctionFacts(**function), run=RunReport(**run)
        )
        found = []
        for checks in results:
            for verdict, fact in checks or []:
                if Verdict(verdict) is not Verdict.PASS:
                    found.append({"verdict": Verdict(verdict).value, "fact": asdict(fact)})
        return found
    except Exception as exc:
        error = Fact(
            check="l1.error",
            field=quest_id,
            expected="the pytest_quest_l1_check hooks run",
            actual=f"{type(exc).__name__}: {exc}",
            message=f"could not confirm: an L1 check raised {type(exc).__name__}: {exc}",
        )
        return [{"verdict": Verdict.REVIEW.value, "fact": asdict(error)}]


def verifier_answers(config: pytest.Config, evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """The project's plugin verifiers (``pytest_quest_verify``) asked here, one answer each."""

    ratchet = loads(Path(evidence["ratchet"]).read_bytes(), evidence["ratchet"])
    request, prompt = request_from_dict(evidence["verify"], ratchet.quests[evidence["quest"]])
    rootdir = Path(str(config.rootpath))
    return [
        answer_to_dict(v(request, prompt)) for v in hook_verifiers(config.pluginmanager, rootdir)
    ]


def _try_mutant(items: list[pytest.Item], budget: float) -> dict[str, Any]:
    """Run `items` against the mutant in place until one does not pass."""
    timed_out = []

    def alarm(signum: int, frame: Any) -> None:
        timed_out.append(True)
        raise _MutantTimeout(f"mutant ran longer than {budget:g}s")

    previous = signal.signal(signal.SIGALRM, alarm)
    # Repeats, in case a test swallows the first one and loops on.
    signal.setitimer(signal.ITIMER_REAL, budget, 0.5)
    try:
        for item in items:
            try:
                outcome = _outcome(_run_item(item))
            except _MutantTimeout:
                # Stopped outside the test's own phases (in a hook): still a kill.
                return {"status": "killed", "killed_by": item.nodeid, "how": "timeout"}
            if timed_out:
                return {"status": "killed", "killed_by": item.nodeid, "how": "timeout"}
            if outcome != "passed":
                return {"status": "killed", "killed_by": item.nodeid, "how": outcome}
        return {"status": "survived", "killed_by": "", "how": ""}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ``functools.lru_cache``/``cache`` wrappers of the function: cleared before
# every test, so that each run executes the function (and each mutant).
_CACHES: list[Any] = []


def _run_item(item: pytest.Item) -> list[pytest.TestReport]:
    for cache in _CACHES:
        cache.cache_clear()

    # nextitem=None tears every fixture down after each test, so a test can be
    # run again (and stopped early) with its fixtures set up afresh.
    return runtestprotocol(item, log=False, nextitem=None)


def _quiet_hypothesis() -> None:
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


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # Before any conftest of the tests under judgment is imported: the
    # instructions and nonce are read and their pipe closed here.
    argument = getattr(early_config.known_args_namespace, "quest_channel", None)
    if not argument:
        return
    instructions = child_channel.open_channel(str(argument))
    if instructions.get("role") == "check":
        protect_from_env()
        folder = instructions.get("remote_dir")
        if instructions.get("subprocesses", True) and isinstance(folder, str) and folder:
            _start_remote(folder)


# The mutants in the processes the tests start (engine/remote_mutant.py), when on.
REMOTE: list[RemoteMutants] = []
# Variables through which another coverage configuration would take the tests' processes.
_REMOTE_CLEARED = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_FILE", "COVERAGE_RCFILE")


def _start_remote(folder: str) -> None:
    """Before any conftest: the tests' processes will read our rcfile at start-up."""
    remote = RemoteMutants(folder)
    REMOTE[:] = [remote]
    for name in _REMOTE_CLEARED:
        os.environ.pop(name, None)
    os.environ["COVERAGE_PROCESS_START"] = remote.rcfile


def pytest_configure(config: pytest.Config) -> None:
    spec = child_channel.instructions()
    if spec.get("role") == "check":
        config.pluginmanager.register(MutationChild(spec), "quest-mutation-child")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    child_channel.close()  # never left open for atexit handlers
    for remote in REMOTE:
        remote.close()
    REMOTE.clear()


__all__ = ["MutationChild", "pytest_configure", "pytest_load_initial_conftests"]
