"""Progress of long work: nothing drawn off a terminal, one transient bar on one."""

from __future__ import annotations

import io
import sys
from typing import Any

import pytest

from pytest_quest.report.progress import _Bar, _Silent, no_steps, terminal_steps


def test_silent_steps_draw_nothing_and_return_nothing() -> None:
    silent = _Silent()
    silent.total(5)
    silent.advance()
    silent.advance(3)
    assert vars(silent) == {}
    with no_steps("audit", 4) as step:
        assert type(step) is _Silent
    with no_steps("audit") as step:
        assert type(step) is _Silent


class _Progress:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def update(self, task: object, **fields: object) -> None:
        self.calls.append(("update", task, fields))

    def advance(self, task: object, count: int) -> None:
        self.calls.append(("advance", task, count))


def test_a_bar_passes_totals_and_steps_to_its_task() -> None:
    progress = _Progress()
    bar = _Bar(progress, 7)
    assert (bar.progress, bar.task) == (progress, 7)
    bar.total(40)
    bar.advance()
    bar.advance(5)
    assert progress.calls == [("update", 7, {"total": 40}), ("advance", 7, 1), ("advance", 7, 5)]


def test_terminal_steps_draw_a_bar_that_is_erased_when_done() -> None:
    stream = io.StringIO()
    steps = terminal_steps(stream, markup=False)
    with steps("audit [mutants]", 3) as step:
        assert type(step) is _Bar
        task = step.progress.tasks[0]
        assert (task.description, task.total, task.completed) == ("audit [mutants]", 3, 0)
        step.total(4)
        step.advance(2)
        assert (task.total, task.completed) == (4, 2)
        step.progress.refresh()
    drawn = stream.getvalue()
    # The cursor is hidden, the bar drawn in place, then shown again and the line erased.
    assert drawn.startswith("\x1b[?25l")
    assert drawn.endswith("\n\x1b[?25h\r\x1b[1A\x1b[2K")
    last = drawn.split("\r\x1b[2K")[-2]  # the last frame drawn
    assert "audit [mutants] " in last  # a description is not read as markup
    assert " 2/4 " in last
    assert "\x1b[3" not in drawn  # no colour asked: no foreground colour codes


def test_terminal_steps_without_a_total_and_with_markup() -> None:
    stream = io.StringIO()
    with terminal_steps(stream)("scan") as step:
        task = step.progress.tasks[0]  # type: ignore[attr-defined]
        assert (task.description, task.total) == ("scan", None)
        step.progress.refresh()  # type: ignore[attr-defined]
    drawn = stream.getvalue()
    assert drawn.endswith("\n\x1b[?25h\r\x1b[1A\x1b[2K")
    assert "\x1b[32m0/?\x1b[0m" in drawn  # coloured, no total: the count alone


def test_terminal_steps_leave_the_processs_own_output_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stream = io.StringIO()
    with terminal_steps(stream, markup=False)("work", 1) as step:
        print("printed while the bar runs")
        print("warned while the bar runs", file=sys.stderr)
        step.advance()
    assert "printed" not in stream.getvalue() and "warned" not in stream.getvalue()
    assert capsys.readouterr() == ("printed while the bar runs\n", "warned while the bar runs\n")
