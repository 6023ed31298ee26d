"""The mutation child's own work around each run (plugin/mutation_child.py `_Reach`) runs
the original code of the functions swapped, whatever mutant is in place for the tests."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from pytest_quest.plugin import mutation_child
from pytest_quest.plugin.mutation_child import _Reach


def judged(value: int) -> int:
    return value + 1


def _mutant(value: int) -> int:
    raise RuntimeError("the mutant ran")


class _Remote:
    """Arms a run as engine/remote_mutant.py does, calling a function of the project judged."""

    def __init__(self, marks: Path) -> None:
        self.marks = marks
        self.seen: list[int] = []

    def arm(self, file: str, start: int, index: int | None) -> str:
        self.seen.append(judged(1))
        return str(self.marks)

    def disarm(self) -> None:
        self.seen.append(judged(2))


def test_the_childs_work_around_a_run_runs_the_original_and_counts_no_reach(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = _Remote(tmp_path / "marks")
    monkeypatch.setattr(mutation_child, "REMOTE", [remote])
    original = judged.__code__
    tracker = _Reach(__file__, 1)
    assert isinstance(judged, types.FunctionType)
    tracker.swapped = [(judged, original)]
    judged.__code__ = _mutant.__code__
    try:
        tracker.begin("tests/test_x.py::test_x", 0)
        assert judged.__code__ is _mutant.__code__  # the test runs the mutant
        tracker.end()
        assert judged.__code__ is _mutant.__code__
    finally:
        judged.__code__ = original
    assert remote.seen == [2, 3]
    assert tracker.by == set()  # no marks file: the test's run reached nothing
