"""Measuring alongside pytest-cov: with ``--cov``, pytest-quest borrows pytest-cov's tracer.

What cannot work is refused with a message naming the flag (docs/ci.md, pytest-cov).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.engine.borrowed import BorrowedCoverage
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


def borrow_pytest_cov(config: pytest.Config, sources: list[Path]) -> BorrowedCoverage:
    """pytest-cov's measurement for a quest command, or a usage error saying which flag to drop."""
    if getattr(config.option, "cov_context", None):
        raise QuestUsageError(
            f"--cov-context={config.option.cov_context} cannot be combined with a measuring "
            "quest command: pytest-quest switches one context per test itself; drop --cov-context"
        )
    if getattr(config.option, "numprocesses", None) or getattr(config.option, "dist", "no") != "no":
        # Measured on this machine: with pytest-cov's own worker handling, some
        # per-test arcs were lost in its combine (example_project: 8 of 30
        # functions had fewer covering tests, 2 lost their PASS); a ratchet
        # cannot rest on that.
        raise QuestUsageError(
            "--cov cannot be combined with xdist (-n/--dist) for a measuring quest command: "
            "drop --cov (pytest-quest measures the workers itself), or drop -n"
        )

    def find_cov() -> Any:
        plugin = config.pluginmanager.get_plugin("_cov")
        controller = getattr(plugin, "cov_controller", None)
        return getattr(controller, "cov", None)

    borrowed = BorrowedCoverage(Path(str(config.rootpath)), [str(s) for s in sources], find_cov)
    if getattr(config, "workerinput", None) is None:
        cov = borrowed.cov
        if not cov.get_option("run:branch"):
            raise QuestUsageError(
                "--cov measures lines only, and pytest-quest needs branches: add --cov-branch "
                "(or branch = true in coverage.py's [run] section), or drop --cov"
            )
        core = cov.get_option("run:core")
        if core == "sysmon":
            raise QuestUsageError(
                "coverage.py's sysmon core cannot tell tests apart: unset COVERAGE_CORE "
                "(or [run] core), or drop --cov"
            )
        if recorded_subprocesses(config, Path(str(config.rootpath))):
            # The tests' processes are measured as without --cov (engine/subproc.py).
            borrowed.measure_children()
            config.pluginmanager.register(_FoldChildren(borrowed), "quest-cov-children")
    return borrowed


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


__all__ = ["borrow_pytest_cov", "pytest_cov_requested"]
