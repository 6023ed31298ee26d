"""pytest-cov's coverage object behind the `Measurement` protocol: it measures, we switch contexts.

Two tracers in one process do not work, so with ``--cov`` pytest-quest starts none of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.engine.measure import quiet_coverage
from pytest_quest.engine.source import relpath

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
        return None

    def switch_context(self, context: str, passed: bool | None = None) -> None:
        # pytest-cov's data keeps plain per-test contexts: `passed` is not needed.
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


__all__ = ["BorrowedCoverage"]
