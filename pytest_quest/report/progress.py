"""Progress of long work (audit's mutants, the analysis after a scan's or check's run).

Drawn on a terminal only, as one transient rich bar that leaves no line behind;
in JSON mode, off a terminal or with ``-p no:terminal`` nothing is drawn
(`no_steps`), so what a script or an agent reads is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol, TextIO


class Tracker(Protocol):
    """What a piece of work reports as it goes."""

    def total(self, count: int) -> None:
        """The work has `count` steps (known once it has started)."""

    def advance(self, count: int = 1) -> None:
        """`count` more steps are done."""


class Steps(Protocol):
    """Starts a tracker for one piece of work: ``with ctx.progress("audit", 40) as step:``."""

    def __call__(
        self, description: str, total: int | None = None
    ) -> AbstractContextManager[Tracker]: ...


class _Silent:
    def total(self, count: int) -> None:
        return None

    def advance(self, count: int = 1) -> None:
        return None


@contextmanager
def no_steps(description: str, total: int | None = None) -> Iterator[Tracker]:
    """Progress that draws nothing."""
    yield _Silent()


class _Bar:
    def __init__(self, progress: Any, task: Any) -> None:
        self.progress, self.task = progress, task

    def total(self, count: int) -> None:
        self.progress.update(self.task, total=count)

    def advance(self, count: int = 1) -> None:
        self.progress.advance(self.task, count)


def terminal_steps(stream: TextIO, *, markup: bool = True) -> Steps:
    """Progress drawn on `stream`, a terminal: spinner, bar, count and time, erased when done."""

    @contextmanager
    def steps(description: str, total: int | None = None) -> Iterator[Tracker]:
        from rich.console import Console  # only for work worth a bar (start-up time)
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console(file=stream, force_terminal=True, no_color=not markup, highlight=False)
        progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            # The work's own children write through pipes: nothing of this process to move.
            redirect_stdout=False,
            redirect_stderr=False,
        )
        task = progress.add_task(description, total=total)
        with progress:
            yield _Bar(progress, task)

    return steps
