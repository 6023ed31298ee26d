"""Measuring alongside pytest-cov: with ``--cov``, pytest-quest borrows pytest-cov's tracer.

With xdist too, each worker's; what cannot work is refused with a message naming the flag
(docs/ci.md, pytest-cov).
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.engine.borrowed import BorrowedCoverage
from pytest_quest.engine.measure import tracing_core
from pytest_quest.plugin.options import recorded_subprocesses


def pytest_cov_requested(config: pytest.Config) -> bool:
    """``--cov`` is given and not switched off by ``--no-cov``.

    Works before and after pytest-cov's own ``pytest_load_initial_conftests``
    (their order is not fixed): once it ran, its plugin is registered as
    ``_cov`` (and it has rewritten ``cov_source`` in the namespace).
    """
    plugin = config.pluginmanager.get_plugin("_cov")
    if plugin is not None:
        return not getattr(plugin, "_disabled", False)
    namespace = config.known_args_namespace
    return bool(getattr(namespace, "cov_source", None)) and not getattr(namespace, "no_cov", False)


def distributed(config: pytest.Config) -> bool:
    """This process is an xdist controller: its workers run the tests."""
    if getattr(config, "workerinput", None) is not None:
        return False
    return bool(getattr(config.option, "numprocesses", None)) or (
        getattr(config.option, "dist", "no") != "no"
    )


def use_tracing_core() -> None:
    """Make the tracer pytest-cov is about to start one that keeps per-test contexts.

    ``COVERAGE_CORE`` wins over ``[run] core``, so a project configured for
    the sys.monitoring core (which records a line for the first test only)
    still measures per test; xdist workers inherit it. Only the core changes:
    what is measured, and pytest-cov's report, stay the same. A tracing core
    chosen already (``COVERAGE_CORE=pytrace``) is kept.
    """
    if os.environ.get("COVERAGE_CORE") not in ("ctrace", "pytrace"):
        os.environ["COVERAGE_CORE"] = tracing_core()


def borrow_pytest_cov(config: pytest.Config, sources: list[Path]) -> BorrowedCoverage:
    """pytest-cov's measurement for a quest command, or a usage error saying which flag to drop.

    Under xdist each worker borrows its own pytest-cov tracer and switches its
    contexts; pytest-cov combines the workers' data in the controller, which
    judges from it.
    """
    if getattr(config.option, "cov_context", None):
        raise QuestUsageError(
            f"--cov-context={config.option.cov_context} cannot be combined with a measuring "
            "quest command: pytest-quest switches one context per test itself; drop --cov-context"
        )

    def find_cov() -> Any:
        plugin = config.pluginmanager.get_plugin("_cov")
        controller = getattr(plugin, "cov_controller", None)
        return getattr(controller, "cov", None)

    borrowed = BorrowedCoverage(Path(str(config.rootpath)), [str(s) for s in sources], find_cov)
    worker = getattr(config, "workerinput", None) is not None
    if not worker:
        cov = borrowed.cov
        if not cov.get_option("run:branch"):
            raise QuestUsageError(
                "--cov measures lines only, and pytest-quest needs branches: add --cov-branch "
                "or set branch = true in coverage.py's [run] section, or drop --cov"
            )
        core = dict(cov.sys_info()).get("core")
        if core == "SysMonitor":
            raise QuestUsageError(
                "pytest-cov's tracer is coverage.py's sys.monitoring core, which records a line "
                "for the first test only, so a function's tests cannot be told apart: run "
                f"with COVERAGE_CORE={tracing_core()} (it wins over [run] core) or drop --cov"
            )
    # The tests' processes are measured as without --cov (engine/subproc.py), by
    # the process that runs the tests: not by an xdist controller.
    if recorded_subprocesses(config, Path(str(config.rootpath))) and not distributed(config):
        if worker:  # pytest-cov starts a worker's tracer at its session start
            config.pluginmanager.register(_MeasureChildren(borrowed), "quest-cov-children-start")
        else:
            borrowed.measure_children()
        config.pluginmanager.register(_FoldChildren(borrowed), "quest-cov-children")
    return borrowed


class _MeasureChildren:
    """On an xdist worker: measures the tests' processes once pytest-cov's tracer exists."""

    def __init__(self, borrowed: BorrowedCoverage) -> None:
        self.borrowed = borrowed

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.borrowed.measure_children()


class _FoldChildren:
    """Folds the tests' processes' data into pytest-cov's before pytest-cov stops and reports."""

    def __init__(self, borrowed: BorrowedCoverage) -> None:
        self.borrowed = borrowed

    # trylast: inside pytest-cov's own wrapper, which stops, saves and reports after it.
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        try:
            return (yield)
        finally:
            self.borrowed.fold_children()
