"""Measuring under pytest-xdist: each worker measures its own tests, the controller combines them.

The controller hands each worker a private folder for its data file (docs/ci.md, pytest-xdist).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

from pytest_quest.engine.measure import Measurement, quiet_coverage
from pytest_quest.plugin.loaded import xdist_loaded

WORKERINPUT_KEY = "pytest_quest_data_dir"
DATA_NAME = ".coverage"


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
    if workerinput is None and xdist_loaded(config.pluginmanager):
        config.pluginmanager.register(XdistHooks(session), "quest-xdist")


def controller_folder(measurer: Measurement | None) -> str | None:
    """The private folder the workers of this controller copy their data into."""
    if measurer is None or not measurer.data_dir:
        return None
    folder = os.path.join(measurer.data_dir, "workers")
    os.makedirs(folder, exist_ok=True)
    return folder


def hand_over(measurer: Measurement, folder: str, worker_id: str) -> None:
    """A worker's last act: its (saved) data file into the controller's folder."""
    source = measurer.cov.get_data().data_filename()
    if os.path.exists(source):
        target = os.path.join(folder, f"{DATA_NAME}.{worker_id}")
        shutil.copyfile(source, target + ".tmp")
        os.replace(target + ".tmp", target)
    # The controller may end this process before its pytest_unconfigure runs.
    if measurer.data_dir:
        shutil.rmtree(measurer.data_dir, ignore_errors=True)


def combine_workers(measurer: Measurement, folder: str) -> int:
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
