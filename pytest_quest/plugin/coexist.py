"""Measuring alongside pytest-xdist and pytest-cov.

pytest-xdist: every worker measures its own tests with its own
:class:`Measurer` (started early, as in a serial run, and switching one
context per test).  The controller hands each worker a private folder
through ``workerinput`` (``pytest_configure_node``); at the end of its
session a worker copies its data file there as ``.coverage.<workerid>``,
before xdist's ``workerfinished`` event, and runs no command.  The
controller combines those files into its own data (coverage.py's
``combine``, which keeps the per-test contexts) before ``analyze()``.  Test
outcomes reach the controller through ``pytest_runtest_logreport``, as in a
serial run, so the same quests, facts and verdicts come out.

pytest-cov: two tracers in one process do not work (coverage.py keeps a
stack of collectors; stopping out of order raises).  When ``--cov`` is
given, pytest-quest starts no tracer and borrows pytest-cov's
``cov_controller.cov``, switching a context per test on it.  That needs
branch measurement, and pytest-quest's own contexts: ``--cov`` without
branch coverage, ``--cov-context`` and ``--cov`` with xdist's ``-n`` are
refused with a message saying which flag to change.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.engine.measure import Measurer, quiet_coverage, relpath

WORKERINPUT_KEY = "pytest_quest_data_dir"
DATA_NAME = ".coverage"


# -- pytest-xdist ----------------------------------------------------------------


class XdistHooks:
    """Hooks of the xdist controller; registered only when pytest-xdist is present."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def pytest_configure_node(self, node: Any) -> None:
        folder = self.session.workers_dir()
        if folder is not None:
            node.workerinput[WORKERINPUT_KEY] = folder

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # JSON mode moves pytest's terminal reporter to stderr (plugin.py), but
        # xdist took the old one at configure: its "created: 2/2 workers"
        # would land on stdout, which must carry one JSON object only.
        if not self.session.options.json:
            return
        manager = session.config.pluginmanager
        reporter = manager.get_plugin("terminalreporter")
        dsession = manager.get_plugin("dsession")
        if dsession is not None and getattr(dsession, "terminal", None) is not None:
            dsession.terminal = reporter
        distreporter = manager.get_plugin("terminaldistreporter")
        if distreporter is not None and hasattr(distreporter, "tr"):
            distreporter.tr = reporter


def register(config: pytest.Config, session: Any) -> None:
    """Wire `session` (a ``QuestSession``) to xdist when xdist is loaded."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get(WORKERINPUT_KEY):
        session.worker_dir = str(workerinput[WORKERINPUT_KEY])
        session.worker_id = str(workerinput.get("workerid", f"pid{os.getpid()}"))
    if config.pluginmanager.hasplugin("xdist") and workerinput is None:
        config.pluginmanager.register(XdistHooks(session), "quest-xdist")


def controller_folder(measurer: Measurer | None) -> str | None:
    """The private folder the workers of this controller copy their data into."""
    data_dir = getattr(measurer, "data_dir", None)
    if not data_dir:
        return None
    folder = os.path.join(data_dir, "workers")
    os.makedirs(folder, exist_ok=True)
    return folder


def hand_over(measurer: Measurer, folder: str, worker_id: str) -> None:
    """A worker's last act: its (saved) data file into the controller's folder."""
    source = measurer.cov.get_data().data_filename()
    if os.path.exists(source):
        target = os.path.join(folder, f"{DATA_NAME}.{worker_id}")
        shutil.copyfile(source, target + ".tmp")
        os.replace(target + ".tmp", target)
    # The controller may end this process before its pytest_unconfigure runs.
    data_dir = getattr(measurer, "data_dir", None)
    if data_dir:
        shutil.rmtree(data_dir, ignore_errors=True)


def combine_workers(measurer: Measurer, folder: str) -> int:
    """Combine the workers' data into the controller's; returns how many files were combined."""
    files = sorted(
        name
        for name in os.listdir(folder)
        if name.startswith(DATA_NAME + ".") and not name.endswith(".tmp")
    )
    if not files:
        return 0
    with quiet_coverage():
        measurer.cov.combine([os.path.join(folder, name) for name in files], keep=False)
        measurer.cov.save()
    return len(files)


# -- pytest-cov ------------------------------------------------------------------


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


class BorrowedCoverage(Measurer):
    """pytest-cov's coverage object, seen through the :class:`Measurer` interface.

    pytest-cov starts, stops and saves it; we only switch contexts.  The
    object is looked up on each use: on an xdist worker pytest-cov creates it
    at session start, and its controller swaps in the combined data at the end.
    """

    def __init__(self, config: pytest.Config, sources: list[Path]) -> None:
        self.config = config
        self.rootdir = Path(str(config.rootpath))
        self.sources = [str(s) for s in sources]
        self.started = True

    @property
    def cov(self) -> Any:  # type: ignore[override]
        plugin = self.config.pluginmanager.get_plugin("_cov")
        controller = getattr(plugin, "cov_controller", None)
        cov = getattr(controller, "cov", None)
        if cov is None:
            raise QuestUsageError(
                "pytest-cov is active but has no coverage object; drop --cov for this run"
            )
        return cov

    def start(self) -> None:
        return None

    def switch_context(self, context: str, passed: bool | None = None) -> None:
        # pytest-cov's data keeps plain per-test contexts: `passed` is not needed.
        plugin = self.config.pluginmanager.get_plugin("_cov")
        controller = getattr(plugin, "cov_controller", None)
        cov = getattr(controller, "cov", None)
        if cov is not None:
            cov.switch_context(context)

    def stop(self) -> None:
        return None

    def only_files(self) -> list[str] | None:
        """pytest-cov may measure more than the code under test: analyze only that."""
        if not self.sources:
            return None
        roots = [Path(s).resolve() for s in self.sources]
        with quiet_coverage():
            measured = self.cov.get_data().measured_files()
        wanted = []
        for filename in measured:
            path = Path(filename).resolve()
            if any(path == root or root in path.parents for root in roots):
                wanted.append(relpath(filename, self.rootdir))
        return sorted(wanted)


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
    borrowed = BorrowedCoverage(config, sources)
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
    return borrowed


__all__ = [
    "BorrowedCoverage",
    "XdistHooks",
    "borrow_pytest_cov",
    "combine_workers",
    "hand_over",
    "pytest_cov_requested",
    "register",
]
