"""The pytest plugin of the gate's children: baseline runs, then each mutant swapped in and tried.

Loaded in both children (``-p``); it checks mutants only when its judge's channel asks it to.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import os
import random
import secrets
import time
import types
from collections.abc import Generator, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.kills import describe
from pytest_quest.core.mutant_ast import mark_names
from pytest_quest.core.mutant_module import FunctionTrees
from pytest_quest.core.mutants import (
    Mutant,
    changed_value,
    find_function,
    plan_mutants,
)
from pytest_quest.engine.created_files import CreatedFiles, track_created
from pytest_quest.engine.own_copy import CopyWatch, copy_watch
from pytest_quest.engine.seeds import MAX_CALLS, encode
from pytest_quest.engine.swap import (
    CodeSwap,
    LiveIndex,
    SwapError,
    SwapMissError,
)
from pytest_quest.plugin import child_channel, child_start, fresh_kill, selection
from pytest_quest.plugin.child_l1 import l1_results, verifier_answers
from pytest_quest.plugin.child_runs import (
    CACHES,
    RESETS,
    Baseline,
    again_on_ast_race,
    module_resets,
    quiet_hypothesis,
    try_mutant,
)
from pytest_quest.plugin.child_start import REMOTE
from pytest_quest.plugin.fresh_kill import ROLE as FRESH_ROLE
from pytest_quest.plugin.fresh_kill import FreshRecorder, unconfirmed_kills
from pytest_quest.plugin.observe_child import Watch, live_function, observed, searched
from pytest_quest.plugin.reaching import Reaching


class MutationChild:
    """The pytest plugin of the mutation child (registered when its judge asks for a check)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.results: list[dict[str, Any]] | None = None
        # The marks' names in builtins are this child's own (`mark_names`): the
        # tests' code may set or remove the public ones (the runner's own code
        # and its tests do, when the project judged is the runner).
        self.marks = secrets.token_hex(6)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        by_id = {item.nodeid: item for item in session.items}
        quiet_hypothesis()
        results = []
        functions = self.spec["functions"]
        baseline: Baseline | str = "the covering tests could not be collected again"
        if not session.testsfailed:
            try:
                baseline = Baseline(functions, by_id)
            except Exception as exc:
                baseline = f"the mutation runner failed: {type(exc).__name__}: {exc}"
        # The live functions of every file checked here: one walk of the heap for all.
        index = LiveIndex(str(function["file"]) for function in functions)
        for function in functions:
            result: dict[str, Any] = {
                "runs": [],
                "run_seconds": [],
                "mutants": [],
                "problem": "",
                "original_reached": [],
                "detects_run": [],
                # Covering tests that made their own copy of the function
                # while it was judged (engine/own_copy.py): test -> how.
                "own_copy": {},
                # Killing tests whose kill did not hold in a fresh process
                # with the mutant in place from the start (plugin/fresh_kill.py).
                "kill_unconfirmed": {},
                # Killing tests that failed as well with the original function in this
                # process while its file held the mutant (`_outside`): test -> mutant.
                "kill_outside": {},
                # Covering tests that read, in a probe or mutant run, a file an
                # earlier run created (engine/created_files.py): test -> what.
                "stale_reads": {},
                "probed": False,
                # Seconds per phase (baseline, plan, probe, killed, survived,
                # observe, outside): where the check's time goes (benchmarks/audit_cost.py).
                "phases": {},
            }
            started = time.monotonic()
            items = [by_id[n] for n in function["nodeids"] if n in by_id]
            try:
                if isinstance(baseline, str):
                    result["problem"] = baseline
                elif len(items) < len(function["nodeids"]):
                    result["problem"] = "some covering tests were not found again"
                else:
                    baseline.fill(items, result)
                    self._run(function, items, result, baseline, session, index)
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
        self,
        function: dict[str, Any],
        items: list[pytest.Item],
        result: dict[str, Any],
        baseline: Baseline,
        session: pytest.Session,
        index: LiveIndex | None = None,
    ) -> None:
        source = Path(function["file"]).read_text(encoding="utf-8")
        start = int(function["start"])
        if not self.spec.get("mutants", True):
            return
        stable = [
            item
            for item in items
            if result["runs"][0][item.nodeid] == result["runs"][1][item.nodeid] == "passed"
        ]
        if not stable:
            return  # nothing passes twice: the parent sees why in the runs
        phases = result["phases"]
        planned = time.monotonic()
        operators = function.get("operators")
        mutants, swap, trees, reaching = again_on_ast_race(
            lambda: (
                plan_mutants(source, start, None if operators is None else tuple(operators)),
                CodeSwap(function["file"], source, start, self.marks),
                FunctionTrees(source, start, function["file"]),
                Reaching(source, start, function.get("line_tests")),
            )
        )
        phases["plan"] = time.monotonic() - planned
        only = function.get("only")
        if only is not None:
            mutants = [m for m in mutants if m.id in set(only)]
        # This function's own caches, cleared before each of its mutants' tests.
        CACHES[:] = swap.prepare(index)
        tracker = _tracker(function["file"], start, trees)
        tracker.swapped = swap.swapped
        # Each test's own time budget against a mutant (core/budget.py).
        budgets = baseline.budgets(stable)
        watch = Watch(
            swap.path, source, start, lambda item: try_mutant([item], budgets[item.nodeid])
        )
        # The code this child swaps in calls its own names; a module loaded again from its
        # bytecode file (engine/ondisk.py: a reload) calls the public ones: both reach here.
        for reach_name, change_name in (mark_names(self.marks), mark_names("")):
            setattr(builtins, change_name, tracker.changed)
            setattr(builtins, reach_name, tracker.mark)
        RESETS[:] = module_resets(baseline, stable, sum(budgets.values()))
        try:
            schedule = _schedule(len(mutants), str(function.get("seed", "")))
            costs = [_cost(slot, mutants, reaching, stable, baseline) for slot in schedule]
            for position, slot in enumerate(schedule):
                if REMOTE and function.get("confirm", True):
                    survived = any(e["status"] == "survived" for e in result["mutants"])
                    fresh_kill.park_when_due(session.config, sum(costs[position:]), survived)
                began = time.monotonic()
                if slot is None:
                    _probe(swap, trees, stable, budgets, tracker, result)
                    phase = "probe"
                else:
                    mutant = mutants[slot]
                    tests = reaching.tests(mutant.line, stable)
                    entry = _mutant(
                        mutant, swap, trees, tests, budgets, tracker, phases,
                        run_order=baseline.fastest_first(tests), watch=watch,
                    )  # fmt: skip
                    result["mutants"].append(entry)
                    status = entry["status"]
                    phase = status if status in ("killed", "survived") else "other"
                phases[phase] = phases.get(phase, 0.0) + time.monotonic() - began
        finally:
            RESETS.clear()
            for name in (*mark_names(self.marks), *mark_names("")):
                vars(builtins).pop(name, None)
        _tracked(tracker, result)
        _confirm(session, function, start, budgets, result)


def _tracker(file: str, start: int, trees: FunctionTrees) -> _Reach:
    """The reach marks, and the watches on created files and copies of the function."""
    tracker = _Reach(file, start)
    tracker.created = track_created()
    if tracker.created is not None:
        tracker.created.found = {}
    found = find_function(trees.tree, start)
    if found is not None:
        tracker.copies = copy_watch()
        tracker.copies.watch(file, found[1], written=bool(REMOTE) and REMOTE[0].writes(file))
    return tracker


def _tracked(tracker: _Reach, result: dict[str, Any]) -> None:
    """What the watches saw, and each mutant credited to the tests that ran the original."""
    if tracker.copies is not None:
        result["own_copy"] = dict(tracker.copies.found)
    if tracker.created is not None:
        result["stale_reads"] = dict(tracker.created.found)
    original = set(result["original_reached"])
    for entry in result["mutants"]:
        _credit(entry, original)
        if entry["status"] == "killed":
            for nodeid in entry.get("outside_by", ()):
                result["kill_outside"].setdefault(nodeid, describe(entry))


def _confirm(
    session: pytest.Session,
    function: dict[str, Any],
    start: int,
    budgets: dict[str, float],
    result: dict[str, Any],
) -> None:
    """Every mutant killed: does each kill hold with the mutant in place before the
    tests were imported? (a saved oracle's does not)

    `budgets`: per stable covering test, its time budget against a mutant, which it gets
    in the fresh run too."""
    statuses = {entry["status"] for entry in result["mutants"]}
    if REMOTE and statuses == {"killed"} and function.get("confirm", True):
        confirming = time.monotonic()
        remote = REMOTE[0]
        fresh_kill.BUDGETS.update(budgets)
        result["kill_unconfirmed"] = unconfirmed_kills(
            session.config,
            result["mutants"],
            lambda index: remote.arm(function["file"], start, index),
            remote.disarm,
            timeout=max(60.0, 20 * max(result["run_seconds"])),
            parked=fresh_kill.unpark(),
            alongside=list(budgets),
        )
        result["phases"]["confirm"] = time.monotonic() - confirming
    left = fresh_kill.unpark()  # started early, not needed: every mutant was not killed
    if left is not None:
        left.stop()


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
        self.copies: CopyWatch | None = None
        self.created: CreatedFiles | None = None
        # The functions swapped and their original code (`CodeSwap.swapped`): the
        # child's own work around each run runs the originals (`_unswapped`).
        self.swapped: list[tuple[types.FunctionType, types.CodeType]] = []

    def begin(self, nodeid: str, index: int | None) -> None:
        """The next run: test `nodeid` against mutant `index` (None: the probe)."""
        self.by = set()
        with _unswapped(self.swapped):
            if REMOTE and self.file:
                # Before the watches start: writing the mutant into its file (engine/ondisk.py)
                # parses the source, which is not the test's doing.
                self._marks = REMOTE[0].arm(self.file, self.start, index)
            if self.copies is not None:
                self.copies.begin(nodeid)
            if self.created is not None:
                self.created.begin(nodeid)
        self.current = nodeid

    def end(self) -> None:
        """After the run: a process the test started that reached the code counts too."""
        if self.copies is not None:
            self.copies.end()  # first: the child's own reads of the code are not the test's
        current, self.current = self.current, ""
        with _unswapped(self.swapped):
            if self.created is not None:
                self.created.end()
            if self._marks:
                if os.path.exists(self._marks):
                    self.by.add(current)
                REMOTE[0].disarm()
                self._marks = ""
        self.current = current

    def run(self, item: pytest.Item, index: int | None, budget: float) -> dict[str, Any]:
        """One run of `item` against mutant `index` (None: the probe), within `budget` seconds."""
        self.begin(item.nodeid, index)
        try:
            return try_mutant([item], budget)
        finally:
            self.end()

    def read_code(self) -> bool:
        """Whether the test of the last run read the judged function's code object."""
        return self.copies is not None and self.copies.read_code

    def mark(self, value: Any) -> Any:
        self.by.add(self.current)
        return value

    def changed(self, value: Any) -> Any:
        self.by.add(self.current)
        return changed_value(value)


@contextlib.contextmanager
def _unswapped(swapped: list[tuple[types.FunctionType, types.CodeType]]) -> Iterator[None]:
    """The original code in the swapped functions for a while, the mutant's back after.

    When pytest-quest judges itself, the child's own work between runs would
    otherwise run the mutant and count its calls as the test's.
    """
    mutated = [(function, function.__code__) for function, _ in swapped]
    for function, code in swapped:
        function.__code__ = code
    try:
        yield
    finally:
        for function, code in mutated:
            function.__code__ = code


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
    trees: FunctionTrees,
    stable: list[pytest.Item],
    budgets: dict[str, float],
    tracker: _Reach,
    result: dict[str, Any],
) -> None:
    """Every stable test against the original (with a reach mark), each within its own budget
    as against a mutant: each must pass and reach it."""
    try:
        applied = swap.apply(trees.probe())
    except SwapError:
        applied = 0
    try:
        if not applied and not REMOTE:
            return  # the mutants say why (not applied)
        detects, reached = [], []
        for item in stable:
            outcome = tracker.run(item, None, budgets[item.nodeid])
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


def _swap_in(
    mutant: Mutant, swap: CodeSwap, trees: FunctionTrees, entry: dict[str, Any]
) -> tuple[int, str] | None:
    """The mutant swapped in: (functions it took, why none here); None when `entry` says
    why it could not be (not applied anywhere, or a mutant the swap cannot express)."""
    missed = ""
    try:
        applied = swap.apply(trees.mutant(mutant.index))
    except SwapMissError as exc:
        swap.restore()
        if not REMOTE:
            entry.update(status="not_applied", reason=str(exc), seconds=0.0, reached_by=[])
            return None
        # Not in this process: perhaps in the processes the tests start.
        applied, missed = 0, str(exc)
    except SwapError as exc:
        # A mutant the swap cannot express (closure variables): a limit of the plan.
        swap.restore()
        entry.update(status="skipped", reason=str(exc), seconds=0.0, reached_by=[])
        return None
    if not applied and not REMOTE:
        swap.restore()
        entry.update(
            status="not_applied",
            reason="no live function took the mutant",
            seconds=0.0,
            reached_by=[],
        )
        return None
    return applied, missed


def _what_it_does(
    entry: dict[str, Any],
    watch: Watch,
    witness: pytest.Item,
    with_mutant: Any,
    live_applied: tuple[tuple[Any, Any] | None, bool],
    phases: dict[str, float] | None,
    watched: float,
) -> None:
    """A survivor's difference on the witness test's own calls, else the witness search's."""
    live, applied = live_applied
    if with_mutant:
        seen = observed(witness, with_mutant, *watch.original(witness))
        if seen is not None:
            entry["observed"] = seen
    if phases is not None:
        phases["observe"] = phases.get("observe", 0.0) + time.monotonic() - watched
    if "observed" in entry:
        return
    # No call of the tests tells them apart: the witness search (engine/witness_search.py).
    searching = time.monotonic()
    entry["search"] = searched(watch, witness, live if applied else None, applied)
    searchable = applied and not entry["search"].get("problem")
    _hints(entry, live if searchable else None, watch.kept.get(witness.nodeid))
    if phases is not None:
        phases["search"] = phases.get("search", 0.0) + time.monotonic() - searching


def _mutant(
    mutant: Mutant,
    swap: CodeSwap,
    trees: FunctionTrees,
    stable: list[pytest.Item],
    budgets: dict[str, float],
    tracker: _Reach,
    phases: dict[str, float] | None = None,
    run_order: list[pytest.Item] | None = None,
    watch: Watch | None = None,
) -> dict[str, Any]:
    """Mutant `mutant` against the `stable` tests until one does not pass, each within
    its own time budget (`budgets`, by node id).

    They run in `run_order` (the fastest first); the witness of what a
    survivor does is the first of `stable`, in their given order, that ran it.
    """
    entry = asdict(mutant)
    began = time.monotonic()
    swapped = _swap_in(mutant, swap, trees, entry)
    if swapped is None:
        return entry
    applied, missed = swapped
    reached: set[str] = set()
    if watch is None:
        watch = Watch(
            swap.path,
            trees.source,
            trees.start,
            lambda item: try_mutant([item], budgets[item.nodeid]),
        )
    witness, with_mutant = None, None
    live: tuple[Any, Any] | None = None
    try:
        order = stable if run_order is None else run_order
        outcome, code_read, outside = _tried(
            mutant.index, order, (swap, trees), budgets, tracker, reached, applied, phases
        )
        if outside:
            entry["outside_by"] = outside
        if outcome is not None:
            entry.update(outcome)
        else:
            entry.update(status="survived", killed_by="", how="")
            if code_read:
                entry["code_read_by"] = code_read
            # What it makes the function do, on the first test that reached it.
            witness = next((item for item in stable if item.nodeid in reached), None)
            watched = time.monotonic()
            if witness is not None and applied:
                with_mutant = watch.calls(witness)
                live = live_function(swap)
    finally:
        swap.restore()
    if witness is not None:
        _what_it_does(entry, watch, witness, with_mutant, (live, bool(applied)), phases, watched)
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


def _tried(
    index: int,
    order: list[pytest.Item],
    swapping: tuple[CodeSwap, FunctionTrees],
    budgets: dict[str, float],
    tracker: _Reach,
    reached: set[str],
    applied: int,
    phases: dict[str, float] | None = None,
) -> tuple[dict[str, Any] | None, list[str], list[str]]:
    """Mutant `index`, in place, against the tests in `order` until one kills it: (its kill or
    None, the tests whose kill proves nothing as they read the function's code, the tests whose
    kill is not the function's doing here); `reached` gets the tests that ran it.

    A kill counts unless `_outside` says it is not the function's doing; when none
    counts, the first such kill is returned and the judge makes it REVIEW.
    """
    code_read: list[str] = []
    outside: list[str] = []
    first_outside: dict[str, Any] | None = None
    for item in order:
        outcome = tracker.run(item, index, budgets[item.nodeid])
        reached |= tracker.by
        if outcome["status"] == "survived":
            continue
        if tracker.read_code():
            # The test read the function's code in this run: the code tells a
            # mutant from the original whatever it does, so its kill proves nothing.
            code_read.append(item.nodeid)
        elif applied and _outside(item, index, swapping, budgets[item.nodeid], tracker, phases):
            outside.append(item.nodeid)
            first_outside = first_outside or outcome
        else:
            return outcome, code_read, []
    return first_outside, code_read, outside


def _outside(
    item: pytest.Item,
    index: int,
    swapping: tuple[CodeSwap, FunctionTrees],
    budget: float,
    tracker: _Reach,
    phases: dict[str, float] | None = None,
) -> bool:
    """Whether `item`, which failed with mutant `index`, fails as well with the original
    function in this process while what lies outside it holds the mutant (the module's
    bytecode file, the record the processes the test starts read: engine/remote_mutant.py),
    and the mutant's code ran nowhere (no mark of it: not loaded again here, not run in a
    process the test started).

    Such a failure is not the mutant's doing: the test read which run it is in.  A test
    whose process runs the mutant (a command-line test, a module reloaded) keeps its kill.
    """
    swap, trees = swapping
    began = time.monotonic()
    swap.restore()
    try:
        outcome = tracker.run(item, index, budget)
    finally:
        swap.apply(trees.mutant(index))
        if phases is not None:  # part of the mutant's own phase too (killed, survived)
            phases["outside"] = phases.get("outside", 0.0) + time.monotonic() - began
    return outcome["status"] != "survived" and item.nodeid not in tracker.by


def _hints(entry: dict[str, Any], live: tuple[Any, Any] | None, kept: Any) -> None:
    """The calls and module name the judge's own search may start from (engine/clean_search.py).

    Hints only: the judge imports, checks and searches in a clean process.
    """
    if live is not None and "witness" not in entry["search"]:
        entry["seeds"] = encode(kept)
        entry["seeds_seen"] = min(len(kept or []), MAX_CALLS)  # the calls seen, sent or not
        entry["module"] = str(getattr(live[0], "__module__", "") or "")


def _cost(slot: int | None, mutants: list[Mutant], reaching: Reaching, stable: list[pytest.Item],
          baseline: Baseline) -> float:  # fmt: skip
    """Roughly what `slot` takes: the probe runs every stable test; a killed mutant, its fastest."""
    tests = stable if slot is None else reaching.tests(mutants[slot].line, stable)
    times = [baseline.fastest.get(item.nodeid, 0.0) + 0.005 for item in tests]
    return sum(times) if slot is None else min(times, default=0.0)


def _credit(entry: dict[str, Any], original: set[str]) -> None:
    """A kill or a survival counts only by a test that ran the mutant and the original."""
    if entry["status"] not in ("killed", "survived"):
        return
    witnesses = set(entry["reached_by"]) & original
    if entry["status"] == "killed":
        witnesses &= {entry["killed_by"]}
    if not witnesses:
        entry["status"] = "unreached"


def pytest_plugin_registered(plugin: object) -> None:
    # This plugin is named with -p: registered before the entry-point
    # plugins load, it is handed the config among the plugins already there
    # (a historic hook); the fresh run held from here overlaps their imports.
    if isinstance(plugin, pytest.Config):
        argument = child_start.channel_argument(plugin.invocation_params.args)
        if argument:
            child_start.begin(argument, plugin, early=True)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, object, object]:
    # Before any conftest of the tests under judgment is imported (and before
    # every other plugin's part of this hook, the measuring tracer's start
    # among them): the instructions and nonce are read and their pipe closed
    # here at the latest, and what the command line leaves out is set.
    argument = getattr(early_config.known_args_namespace, "quest_channel", None)
    if argument:
        child_start.begin(str(argument), early_config, early=False)
        given(early_config.known_args_namespace, child_channel.complete())
    return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, object, object]:
    # The full parse of the command line is done (it set the options from
    # argv again): the instructions' part set once more, before any plugin
    # configures or collects.
    if getattr(config.option, "quest_channel", None):
        spec = child_channel.instructions()
        given(config.option, spec)
        named = _selection(spec)
        if named is not None:
            chosen = selection.parse(named, Path(str(config.invocation_params.dir)))
            config.stash[selection.KEY] = chosen
            config.args = list(chosen.paths)
            config.args_source = pytest.Config.ArgsSource.ARGS
    return (yield)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The files named were collected whole: the tests the judge named kept among
    # them (plugin/selection.py), a named test that no longer collects reported.
    chosen = config.stash.get(selection.KEY, None)
    if chosen is None:
        return
    kept, dropped = selection.keep(chosen, items)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _selection(spec: dict[str, Any]) -> list[str] | None:
    """The tests a gate child collects: its instructions' (a fresh run's: the tests it reruns)."""
    selection = spec.get("selection")
    if selection is None and spec.get("role") == FRESH_ROLE:
        selection = spec.get("only")
    if not isinstance(selection, list):
        return None
    return [str(item) for item in selection]


def given(namespace: Any, spec: dict[str, Any]) -> None:
    """Set on `namespace` what the judge sent rather than put on the command line.

    Every gate child has the same command line (engine/runner.py
    `child_command`); which tests it runs, the sources it measures and the
    options of a mutation child come over its channel.
    """
    named = _selection(spec)
    if named is not None:
        namespace.file_or_dir = [entry.partition(selection.SEP)[0] for entry in named]
    if "sources" in spec:
        namespace.quest_source = [str(source) for source in spec.get("sources") or []] or None
    if "measure_only" in spec:
        namespace.quest_measure_only = [
            str(name) for name in spec.get("measure_only") or []
        ] or None
    if spec.get("no_cov"):
        namespace.no_cov = True
    if spec.get("no_xdist"):
        namespace.numprocesses = 0


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """The named test files a plain ``pytest`` of their folder would not collect (a
    conftest's ``collect_ignore``, ``norecursedirs``...) left out, as it leaves them out.

    pytest collects a file named on its command line whatever its folder's
    conftest says: a submit names every test file new since the scan,
    vendored projects the conftest keeps out among them.
    """
    config = session.config
    config.args[:] = [arg for arg in config.args if not _ignored(config, arg)]


def _ignored(config: pytest.Config, arg: str) -> bool:
    """Whether pytest would not collect `arg`'s file, or one of its folders, from the rootdir."""
    root = Path(str(config.rootpath)).resolve()
    path = (Path(str(config.invocation_params.dir)) / arg.split("::", maxsplit=1)[0]).resolve()
    if root not in path.parents:
        return False
    # From the rootdir down, as pytest walks: a conftest inside an ignored folder (a
    # vendored project's, which may not even import) is never read.
    for where in [*(p for p in reversed(path.parents) if root in p.parents), path]:
        try:
            if config.hook.pytest_ignore_collect(collection_path=where, config=config):
                return True
        except Exception:
            return False  # collected as named: pytest reports the error there
    return False


def pytest_configure(config: pytest.Config) -> None:
    spec = child_channel.instructions()
    if spec.get("role") == "check":
        config.pluginmanager.register(MutationChild(spec), "quest-mutation-child")
    elif spec.get("role") == FRESH_ROLE:
        only = spec.get("only")
        budgets = spec.get("budgets") if isinstance(spec.get("budgets"), dict) else {}
        recorder = FreshRecorder(quiet_hypothesis, only if isinstance(only, list) else [], budgets)
        config.pluginmanager.register(recorder, "quest-fresh-kill")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    child_channel.close()  # never left open for atexit handlers
    child_start.finish()
