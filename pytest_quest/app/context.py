"""What a use case needs from its invocation: options, the ratchet file, the run's data, hooks."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_quest.app.options import QuestOptions
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Ratchet
from pytest_quest.core.run import CollectionError
from pytest_quest.core.view import StatusView
from pytest_quest.engine import view_cache
from pytest_quest.engine.store import RatchetStore
from pytest_quest.engine.testfiles import FileSearch, as_recorded
from pytest_quest.report import text
from pytest_quest.report.progress import Steps, no_steps
from pytest_quest.report.text import summarised

if TYPE_CHECKING:
    from pytest_quest.engine.base import Base
    from pytest_quest.engine.changes import Changes
    from pytest_quest.engine.measure import MeasuredSource
    from pytest_quest.verify.adapters import Verifier

# ``pytest_quest_l1_check`` as pluggy calls it: keyword arguments quest,
# function and run; one list of (verdict, fact) pairs per implementation.
L1Check = Callable[..., list[Any]]


@dataclass(frozen=True)
class Terminal:
    """The terminal the text goes to (status draws a table to fit it)."""

    markup: bool = False
    width: int = 80
    # Not a terminal, or NO_COLOR / TERM=dumb: ASCII only (no box-drawing glyphs).
    ascii: bool = False


@dataclass(frozen=True)
class ChildSetup:
    """How to start a child pytest like the one the user ran (rootdir and cwd: the context's)."""

    inifile: Path | None = None
    plugin_args: list[str] = field(default_factory=list)
    has_xdist: bool = False
    has_cov: bool = False
    # Children that may run at once (xdist's ``-n``: audit checks its functions across them).
    workers: int = 1
    # The ini file's ``pythonpath`` folders, absolute: where the clean witness search
    # imports the code under test from (with the rootdir and the sources' parents).
    pythonpath: tuple[str, ...] = ()


@dataclass
class Inputs:
    """What a measuring command read and checked before its tests ran (app/preflight.py)."""

    ratchet: Ratchet | None = None
    base: Base | None = None
    changes: Changes | None = None


@dataclass
class RunData:
    """What this process's own test run left (the measuring commands: scan, check, audit)."""

    outcomes: dict[str, str] = field(default_factory=dict)
    # Each test's own time in this run (setup, call, teardown): how `audit -n`
    # deals the functions to its children.
    seconds: dict[str, float] = field(default_factory=dict)
    collection_errors: list[CollectionError] = field(default_factory=list)
    # The folders measured: after a collection error their syntax is checked,
    # to name the source file at fault rather than the test that imports it.
    measured_roots: list[str] = field(default_factory=list)
    # Analyses the measurement (what passing tests executed); called once, when needed.
    analyze: Callable[[], MeasuredSource] | None = None
    # What the command read before the tests ran (None: read it now, as combine does).
    inputs: Inputs | None = None
    # Tests the selection left out (``-k``, ``-m``, ``--deselect``): with none run, the
    # run is refused rather than read as a suite that covers nothing (app/preflight.py).
    deselected: int = 0


class PersonTerminal(Protocol):
    """Where a person confirms a person action: one question, one typed line."""

    def ask(self, prompt: str) -> str: ...


def _no_person_terminal() -> PersonTerminal | None:
    # A context built without one cannot take a person action: safe by default.
    return None


def _no_l1_checks(**_: Any) -> list[Any]:
    return []


def _no_verifiers() -> list[Verifier]:
    return []


@dataclass
class Context:
    """One command's invocation, as plain values and callables (no pytest session needed)."""

    options: QuestOptions
    rootdir: Path
    store: RatchetStore
    # Where pytest was run from: a relative --quest-export-to is taken from here.
    invocation_dir: Path
    tests: FileSearch
    child: ChildSetup = field(default_factory=ChildSetup)
    run: RunData = field(default_factory=RunData)
    terminal: Terminal = field(default_factory=Terminal)
    environ: Mapping[str, str] = field(default_factory=dict)
    l1_check: L1Check = _no_l1_checks
    # The configured L2 verifiers (commands, then plugins); raises QuestUsageError
    # for a setup that cannot work.
    verifiers: Callable[[], list[Verifier]] = _no_verifiers
    # The interactive terminal of the person running this command, or None
    # (no controlling terminal): person actions need one (app/person.py).
    person_terminal: Callable[[], PersonTerminal | None] = _no_person_terminal
    # Runs node ids in the gate's child measuring a quest's file (app/remeasure.py): `next`
    # measures again when tests changed. None: a caller that runs no child (facts as recorded).
    measure: Callable[..., tuple[Any, MeasuredSource | None]] | None = None
    # Progress of long work, drawn on a terminal only (report/progress.py).
    progress: Steps = no_steps

    def __post_init__(self) -> None:
        if self.store.after_write is None:
            self.store.after_write = functools.partial(keep_view, self.store)


def keep_view(
    store: RatchetStore,
    ratchet: Ratchet,
    data: bytes,
    view: StatusView | None = None,
    *,
    written: bool = True,
) -> None:
    """Keep the view `status` and `next` draw of `ratchet`, read or written as `data`
    (engine/view_cache.py): the next command on those bytes decodes no quest it does not show.
    A command that only read the file (`written` False) does not decode every quest's
    covering tests for it: `next` finds them when it needs them."""
    shown = view if view is not None else text.status_view(ratchet)
    more = view_cache.next_view(ratchet, data, recorded=written)
    view_cache.save(store.journal_path, data, str(store.root), shown, more)


def now_utc() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def load_ratchet(ctx: Context, *, lazy: bool = False) -> Ratchet:
    """The ratchet file, or a usage error saying to scan first (`lazy`: read only, lists on use).

    `ctx.tests` becomes the folders the scan searched when the command line names
    none: a bare command judges the tests the ratchet was scanned over.
    """
    if not ctx.store.exists():
        raise QuestUsageError(
            f"no ratchet file at {ctx.options.quest_file}: run `pytest --quest scan` first"
        )
    ratchet = ctx.store.load(lazy=lazy)
    ctx.tests = as_recorded(ctx.tests, ratchet.test_paths, ctx.rootdir)
    return ratchet


def measured(ctx: Context) -> MeasuredSource:
    """What this run measured; a usage error when its tests could not be collected."""
    refuse_collection_errors(ctx)
    if ctx.run.analyze is None:
        raise RuntimeError(f"the {ctx.options.command} command measured nothing")
    return ctx.run.analyze()


def refuse_collection_errors(ctx: Context) -> None:
    """A usage error naming the run's collection errors (a syntax error in the source first)."""
    run = ctx.run
    if run.collection_errors:
        from pytest_quest.engine.source import check_syntax  # only after a collection error

        check_syntax(run.measured_roots, ctx.rootdir)
        errors = run.collection_errors
        where = summarised(
            [(f"{e.file}:{e.line}" if e.line else e.file) + f": {e.message}" for e in errors]
        )
        if len(errors) == 1:
            raise QuestUsageError(
                f"collection error in the tests ({where}): fix it, then run the command again"
            )
        raise QuestUsageError(
            f"{len(errors)} collection errors in the tests ({where}): "
            "fix them, then run the command again"
        )


def resolve_sources(rootdir: Path, given: list[Any]) -> list[str]:
    """The source folders to measure, absolute; a usage error for one missing or not a folder."""
    sources = []
    for item in given:
        path = Path(str(item))
        if not path.is_absolute():
            path = rootdir / path
        if not path.exists():
            listed = any(mark in str(item) for mark in '[]"')
            raise QuestUsageError(
                f"source {item} does not exist (under {rootdir}); fix --quest-source or "
                "the quest_source ini option"
                + (
                    " (setup.cfg, pytest.ini and tox.ini take the folders space-separated, "
                    "with no brackets or quotes: `quest_source = src/pkg`)"
                    if listed
                    else ""
                )
            )
        if not path.is_dir():
            # coverage.py reads a source that is no folder as a module name and
            # would silently measure nothing.
            raise QuestUsageError(
                f"source {item} is a file; --quest-source and quest_source take a folder "
                "(a package or a source tree): name the folder that holds it (a module "
                "beside its tests: `.`, with the tests left out by coverage.py's `omit`, "
                'e.g. `[tool.coverage.run] omit = ["tests/*"]`)'
            )
        sources.append(str(path))
    return sources
