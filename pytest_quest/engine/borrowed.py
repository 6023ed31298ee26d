"""pytest-cov's coverage object behind the `Measurement` protocol: it measures, we switch contexts.

Two tracers in one process do not work, so with ``--cov`` pytest-quest starts none of its own.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.engine.measure import quiet_coverage
from pytest_quest.engine.source import relpath
from pytest_quest.engine.subproc import ChildMeasurement, stop_inherited

if TYPE_CHECKING:
    from coverage import Coverage


class BorrowedCoverage:
    """pytest-cov's coverage object, seen through the `Measurement` protocol.

    pytest-cov starts, stops and saves it; we only switch contexts.  The
    object is looked up on each use (`find_cov`): on an xdist worker
    pytest-cov creates it at session start, and its controller swaps in the
    combined data at the end.
    """

    def __init__(
        self, rootdir: Path, sources: list[str], find_cov: Callable[[], Coverage | None]
    ) -> None:
        self.rootdir = rootdir
        self.sources = sources
        self.data_dir: str | None = None  # pytest-cov owns the data file
        self._find_cov = find_cov
        # The processes the tests start: measured by us as without --cov (engine/subproc.py).
        self.children: ChildMeasurement | None = None
        self._folded = False

    @property
    def notes(self) -> list[str]:
        """What was left out of the child processes' data, and why (one line per test)."""
        return list(self.children.notes) if self.children is not None else []

    def measure_children(self) -> None:
        """From now on, measure the processes the tests start, one data file name per test."""
        cov = self.cov
        value = cov.get_option("run:source")
        source = [str(item) for item in value] if isinstance(value, list) else []
        source = source or self.sources
        self.children = ChildMeasurement(
            root=tempfile.mkdtemp(prefix="pytest-quest-children-"),
            source=[str(self.rootdir / item) if not Path(item).is_absolute()
                    and (self.rootdir / item).exists() else item for item in source],
            stop_parent=stop_inherited(cov),
        )  # fmt: skip
        self.children.start()

    def fold_children(self) -> None:
        """Add the processes' data to pytest-cov's, under each test's context; remove their folder.

        Called before pytest-cov stops and saves (its report counts them too).
        """
        children = self.children
        if children is None or self._folded:
            return
        self._folded = True
        children.stop()
        cov = self._find_cov()
        try:
            if cov is not None:
                with quiet_coverage():
                    children.fold(cov.get_data())
        finally:
            shutil.rmtree(children.root, ignore_errors=True)

    @property
    def cov(self) -> Coverage:
        cov = self._find_cov()
        if cov is None:
            raise QuestUsageError(
                "pytest-cov is active but has no coverage object; drop --cov for this run"
            )
        return cov

    def start(self) -> None:
        return None

    def stop(self) -> None:
        # Folded already before pytest-cov saved (plugin/pytest_cov.py), unless the loop never ran.
        self.fold_children()

    def switch_context(self, context: str, passed: bool | None = None) -> None:
        # pytest-cov's data keeps plain per-test contexts: `passed` is not needed.
        if self.children is not None:
            self.children.switch(context)
        cov = self._find_cov()
        if cov is not None:
            cov.switch_context(context)

    def end_test(self, passed: bool, *, failed: bool = False) -> None:
        self.switch_context("")

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
