"""The pytest plugin of the mutation child: baseline runs, then each mutant swapped in and tried.

Loaded only in that child (``-p pytest_quest.plugin.mutation_child``), which reads its spec file.
"""

from __future__ import annotations

import builtins
import json
import os
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from _pytest.runner import runtestprotocol

from pytest_quest.engine.guard import protect_from_env
from pytest_quest.core.mutants import (
    CHANGED,
    REACHED,
    Mutant,
    changed_value,
    mutated_tree,
    plan_mutants,
)
from pytest_quest.engine.mutation import SPEC_ENV
from pytest_quest.engine.swap import CodeSwap, SwapError, cache_wrappers


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
    """The pytest plugin of the mutation child (``-p pytest_quest.plugin.mutation_child``)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        out = Path(self.spec["out"])
        by_id = {item.nodeid: item for item in session.items}
        _quiet_hypothesis()
        results = []
        for function in self.spec["functions"]:
            result: dict[str, Any] = {"runs": [], "run_seconds": [], "mutants": [], "problem": ""}
            started = time.monotonic()
            items = [by_id[n] for n in function["nodeids"] if n in by_id]
            try:
                if session.testsfailed:
                    result["problem"] = "the covering tests could not be collected again"
                elif len(items) < len(function["nodeids"]):
                    result["problem"] = "some covering tests were not found again"
                else:
                    self._run(function, items, result)
            except Exception as exc:  # noqa: BLE001 - reported to the parent as an environment problem
                result["problem"] = f"the mutation runner failed: {type(exc).__name__}: {exc}"
            result["seconds"] = round(time.monotonic() - started, 4)
            results.append(result)
        written: dict[str, Any] = {"functions": results}
        if self.spec.get("l1"):
            written["l1"] = l1_results(session.config, self.spec["l1"])
            if self.spec["l1"].get("verify"):
                written["answers"] = verifier_answers(session.config, self.spec["l1"])
        out.write_text(json.dumps(written), encoding="utf-8")
        return True

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
        mutants = plan_mutants(source, start)
        swap = CodeSwap(function["file"], source, start)
        budget = max(2.0, 10 * max(result["run_seconds"]))
        reached: list[bool] = []

        def mark(value: Any) -> Any:
            reached.append(True)
            return value

        def changed(value: Any) -> Any:
            reached.append(True)
            return changed_value(value)

        setattr(builtins, CHANGED, changed)
        setattr(builtins, REACHED, mark)
        try:
            self._mutants(
                mutants,
                swap=swap,
                source=source,
                start=start,
                stable=stable,
                budget=budget,
                reached=reached,
                result=result,
            )
        finally:
            delattr(builtins, CHANGED)
            delattr(builtins, REACHED)
        ran = [m for m in result["mutants"] if m["status"] != "skipped"]
        if ran and all(m["status"] == "unreached" for m in ran):
            result["problem"] = (
                "the covering tests did not execute the function when run again "
                "in one process; could not check them"
            )

    @staticmethod
    def _mutants(
        mutants: list[Mutant],
        *,
        swap: CodeSwap,
        source: str,
        start: int,
        stable: list[pytest.Item],
        budget: float,
        reached: list[bool],
        result: dict[str, Any],
    ) -> None:
        for mutant in mutants:
            entry = asdict(mutant)
            began = time.monotonic()
            try:
                swap.apply(mutated_tree(source, start, mutant.index))
            except SwapError as exc:
                swap.restore()
                entry.update(status="skipped", reason=str(exc), seconds=0.0)
                result["mutants"].append(entry)
                continue
            reached.clear()
            try:
                entry.update(_try_mutant(stable, budget))
            finally:
                swap.restore()
            if entry["status"] == "survived" and not reached:
                # Not run again here (state kept from an earlier run, say a warm
                # cache): nothing is known of this mutant.
                entry["status"] = "unreached"
            entry["seconds"] = round(time.monotonic() - began, 4)
            result["mutants"].append(entry)


def l1_results(config: pytest.Config, evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """The project's ``pytest_quest_l1_check`` hooks on the judge's evidence, as plain dicts.

    Only FAIL and REVIEW are kept (the judge keeps only those too); a hook
    that raises is one REVIEW fact (``l1.error``).
    """
    from pytest_quest.core.model import Fact, FunctionFacts, Verdict
    from pytest_quest.core.run import CollectionError, RunReport
    from pytest_quest.engine.codec import loads

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
    except Exception as exc:  # noqa: BLE001 - a broken check cannot confirm a PASS
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
    from pytest_quest.engine.codec import loads
    from pytest_quest.verify.adapters import (
        answer_to_dict,
        hook_verifiers,
        request_from_dict,
    )

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
    # Before any conftest of the tests under judgment is imported.
    if os.environ.get(SPEC_ENV):
        protect_from_env()


def pytest_configure(config: pytest.Config) -> None:
    raw = os.environ.get(SPEC_ENV)
    if raw:
        spec = json.loads(Path(raw).read_text(encoding="utf-8"))
        config.pluginmanager.register(MutationChild(spec), "quest-mutation-child")


__all__ = ["MutationChild", "pytest_configure", "pytest_load_initial_conftests"]
