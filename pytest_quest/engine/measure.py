"""Measuring: coverage.py under pytest, reduced to facts per function.

Only tests that passed count; how each test's arcs are kept: docs/performance.md.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_quest.core.errors import MeasurementError
from pytest_quest.core.grammar import file_problem
from pytest_quest.core.model import FunctionFacts
from pytest_quest.engine.harvest import Harvest, failing_arcs, measured_name, passing_arcs
from pytest_quest.engine.source import FunctionInfo, read_source, relpath, source_functions
from pytest_quest.engine.subproc import ChildMeasurement, stop_auto_started, stop_inherited

if TYPE_CHECKING:
    from coverage import Coverage

# Settings of coverage.py that change what is measured; any change of these
# after a quest was issued is a fact for gate step 2.
CONFIG_SETTINGS = (
    ("run", "source"),
    ("run", "source_pkgs"),
    ("run", "include"),
    ("run", "omit"),
    ("run", "branch"),
    ("run", "plugins"),
    ("run", "dynamic_context"),
    ("report", "include"),
    ("report", "omit"),
    ("report", "exclude_lines"),
    ("report", "partial_branches"),
)

CONFIG_FILES = (".coveragerc", "setup.cfg", "tox.ini", "pyproject.toml")


def find_coverage_config(rootdir: Path) -> str | bool:
    """The coverage configuration file of the project at `rootdir`, as coverage.py finds it."""
    env = os.environ.get("COVERAGE_RCFILE")
    if env:
        return env
    for name in CONFIG_FILES:
        path = rootdir / name
        if not path.is_file():
            continue
        if name == ".coveragerc":
            return str(path)
        text = path.read_text(encoding="utf-8", errors="replace")
        marker = "[tool.coverage." if name == "pyproject.toml" else "[coverage:"
        if marker in text:
            return str(path)
    return False


# coverage.py is imported inside the functions that use it, for start-up time:
# the commands that measure nothing (status, next) never load it.


@contextmanager
def quiet_coverage() -> Iterator[None]:
    """Silence coverage.py's warnings: suites run with ``filterwarnings = error``."""
    from coverage.exceptions import CoverageWarning  # start-up time (see above)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        yield


@dataclass
class MeasuredSource:
    """Facts of every function of the measured source, and what they came from."""

    functions: list[FunctionFacts] = field(default_factory=list)
    excluded_functions: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    # What was left out of the measurement, one line each (child processes' data).
    notes: list[str] = field(default_factory=list)
    # Per measured file (relative path), per line, the passing tests that ran it.
    line_tests: dict[str, dict[int, set[str]]] = field(default_factory=dict)
    # Per measured file: its executable lines (coverage.py's statements), those passing
    # tests ran, and those anything ran (import too): the changed-lines rule (app/since.py).
    statements: dict[str, frozenset[int]] = field(default_factory=dict)
    tested_lines: dict[str, frozenset[int]] = field(default_factory=dict)
    ran_lines: dict[str, frozenset[int]] = field(default_factory=dict)

    def by_id(self) -> dict[str, FunctionFacts]:
        return {facts.quest_id: facts for facts in self.functions}


class Measurement(Protocol):
    """What the plugin and the use cases use of a measurer: ours, or pytest-cov's borrowed."""

    #: Absolute paths of the code under test.
    sources: list[str]
    #: The private folder this measurement owns (removed at the end), or None.
    data_dir: str | None

    @property
    def cov(self) -> Coverage:
        """The coverage.py object holding the data."""

    def start(self) -> None:
        """Start measuring (a no-op when someone else starts it)."""

    def stop(self) -> None:
        """Stop measuring and save the data."""

    def switch_context(self, context: str, passed: bool | None = None) -> None:
        """Measure for `context` (a test's node id, or "" between tests) from now on."""

    def end_test(self, passed: bool, *, failed: bool = False) -> None:
        """The test measured since the last switch ended; `passed`/`failed`: its outcome."""

    def only_files(self) -> list[str] | None:
        """The files to analyze (relative to `rootdir`), or None for every measured one."""


class Measurer:
    """Runs coverage.py for one pytest process: start, one context per test, stop.

    `sources` are absolute paths of the code under test; `data_file` is a
    private file (never the user's ``.coverage``), in `data_dir` if given.
    """

    def __init__(
        self,
        rootdir: Path,
        sources: list[str],
        data_file: str,
        *,
        data_suffix: str | bool | None = None,
        data_dir: str | None = None,
        children: bool = True,
        children_root: str | None = None,
    ) -> None:
        import coverage  # start-up time (see quiet_coverage)

        self.rootdir = rootdir
        self.sources = sources
        self.data_dir = data_dir
        config_file = find_coverage_config(rootdir)
        with quiet_coverage():
            self.cov = coverage.Coverage(
                data_file=data_file,
                data_suffix=data_suffix,
                config_file=config_file,
                source=sources or None,
                branch=True,
                messages=False,
            )
            # Dynamic contexts need a tracer that supports them; the
            # sys.monitoring core does not (it keeps a line for the first test only).
            self.cov.set_option("run:core", tracing_core())
            self.cov.set_option("run:parallel", False)
            # coverage.py's own subprocess patches would measure the tests'
            # processes for no test: ours (engine/subproc.py) keep one folder per test.
            self.cov.set_option("run:patch", [])
            self.cov.set_option("run:dynamic_context", None)
        self.started = False
        self._harvest: Harvest | None = None
        self.children: ChildMeasurement | None = None
        if children and data_dir is not None:
            self.children = ChildMeasurement(
                root=children_root or os.path.join(data_dir, "children"),
                source=self._child_list("run:source", sources),
                source_pkgs=self._child_list("run:source_pkgs", []),
                omit=self._child_list("run:omit", []),
                stop_parent=stop_inherited(self.cov),
            )

    def _child_list(self, option: str, given: list[str]) -> list[str]:
        """A list setting of the measuring process, as absolute paths where they are paths."""
        value = self.cov.get_option(option)
        items = [str(item) for item in (value if isinstance(value, list) else [])] or given
        if option == "run:source_pkgs":
            return items
        # A relative path is the rootdir's; a name that is no folder there is a package's.
        return [
            str(self.rootdir / item)
            if not os.path.isabs(item)
            and not item.startswith("*")
            and (self.rootdir / item).exists()
            else item
            for item in items
        ]

    @property
    def harvest(self) -> Harvest | None:
        """The per-test fold of the running measurement (None: coverage.py's own contexts)."""
        return self._harvest

    @property
    def notes(self) -> list[str]:
        """What was left out of the child processes' data, and why (one line per test)."""
        return list(self.children.notes) if self.children is not None else []

    def start(self) -> None:
        stop_auto_started()
        with quiet_coverage():
            self.cov.start()
        self.started = True
        if self.children is not None:
            self.children.start()
        # coverage.py's per-test contexts flush every test's arcs to SQLite
        # (docs/performance.md): fold them in memory where the tracer's data
        # has the shape we know; otherwise keep coverage's own contexts.
        self._harvest = Harvest.attach(self.cov)

    def switch_context(
        self, context: str, passed: bool | None = None, *, failed: bool = False
    ) -> None:
        """Start measuring for `context` (a test's node id, or "" between tests).

        `passed` tells whether the test that just ended passed; without it,
        that test's arcs are kept whole under its own context, as coverage.py
        would keep them.  `failed`: it failed or erred (its arcs are kept apart).
        """
        if not self.started:
            return
        if self.children is not None:
            self.children.switch(context)
        if self._harvest is None:
            self.cov.switch_context(context)
        else:
            self._harvest.switch(context, passed, failed=failed)

    def end_test(self, passed: bool, *, failed: bool = False) -> None:
        """The test measured since the last switch ended; `passed`/`failed`: its outcome.

        A failed test's arcs are kept apart (never counted): facts say which
        missing lines only failing tests reached.
        """
        if self._harvest is not None:
            self.switch_context("", passed, failed=failed)
        else:
            self.switch_context("")

    def stop(self) -> None:
        if not self.started:
            return
        if self.children is not None:
            self.children.stop()
        with quiet_coverage():
            self.cov.stop()
            harvest = self._harvest
            if harvest is not None:
                harvest.write(self.cov.get_data())
            if self.children is not None:
                self.children.fold(self.cov.get_data())
            self.cov.save()
            if harvest is not None:
                harvest.write_who(self.cov.get_data().data_filename())
        self.started = False

    def only_files(self) -> list[str] | None:
        """Every file measured here is code under test: analyze them all."""
        return None


def tracing_core() -> str:
    """The coverage.py core that keeps per-test contexts: the C tracer, else the Python one.

    The sys.monitoring core records a line for the first test that runs it only.
    """
    return "ctrace" if _has_ctracer() else "pytrace"


def _has_ctracer() -> bool:
    try:
        from coverage.tracer import CTracer  # noqa: F401  (start-up time, see quiet_coverage)
    except ImportError:  # pragma: no cover - coverage without its C extension
        return False
    return True


def coverage_settings(cov: Coverage, rootdir: Path | None = None) -> dict[str, Any]:
    """The settings of `cov` that shape measurement, as plain JSON values.

    Absolute paths under `rootdir` are kept relative to it: the ratchet file is
    committed, and a checkout in another folder (CI, a colleague) must not
    look like a changed coverage configuration.
    """
    settings: dict[str, Any] = {}
    for section, name in CONFIG_SETTINGS:
        value = cov.get_option(f"{section}:{name}")
        if isinstance(value, (list, tuple)):
            value = [_portable(item, rootdir) for item in value]
        settings[f"{section}:{name}"] = value
    return settings


def _portable(value: Any, rootdir: Path | None) -> Any:
    if rootdir is None or not isinstance(value, str) or not os.path.isabs(value):
        return value
    rel = relpath(value, rootdir)
    return value if rel.startswith("../") or rel == ".." else rel


def _function_facts(
    analysis: Any,
    functions: list[FunctionInfo],
    line_tests: dict[int, set[str]],
    failing: set[tuple[int, int]],
) -> list[FunctionFacts]:
    """Each function's facts from its file's coverage `analysis` (coverage.py's own narrowing)."""
    from coverage.results import AnalysisNarrower  # start-up time (see quiet_coverage)

    narrower = AnalysisNarrower(analysis)
    narrower.add_regions(function.lines for function in functions)
    failing_lines = {line for arc in failing for line in arc if line > 0}
    found = []
    for function in functions:
        narrowed = narrower.narrow(function.lines)
        span = range(function.first, function.last + 1)
        missing_arcs = narrowed.missing_branch_arcs()
        # A positive destination outside the function is the enclosing
        # scope's flow past a one-line ``def``, executed at import: not ours.
        missing_branches = sorted(
            (start, end)
            for start, ends in missing_arcs.items()
            for end in ends
            if end < 0 or function.first <= end <= function.last
        )
        tests: set[str] = set()
        for line in function.lines:
            tests.update(line_tests.get(line, ()))
        found.append(
            function.facts(
                statements=len(narrowed.statements),
                branches=narrowed.numbers.n_branches,
                missing_lines=sorted(narrowed.missing),
                missing_branches=missing_branches,
                excluded_lines=sorted(line for line in analysis.excluded if line in span),
                covering_tests=sorted(tests),
                failing_lines=sorted(set(narrowed.missing) & failing_lines),
                failing_branches=[arc for arc in missing_branches if arc in failing],
            )
        )
    return found


def analyze(
    cov: Coverage,
    rootdir: Path,
    passed: set[str],
    *,
    only_files: Iterable[str] | None = None,
    notes: Iterable[str] = (),
    failed: set[str] | None = None,
    files_done: Callable[[int, int], None] | None = None,
) -> MeasuredSource:
    """Reduce the saved data of `cov` to facts per function, counting `passed` tests only.

    `passed` holds the contexts (test node ids) whose tests passed; `failed`,
    those that failed or erred: what only they executed is named, never counted.
    `only_files` (paths relative to `rootdir`) narrows the analysis.
    `files_done` hears (files done, files in all) as the work goes (a progress bar).
    """
    # start-up time (see quiet_coverage)
    from coverage import CoverageData
    from coverage.files import relative_directory
    from coverage.python import PythonFileReporter
    from coverage.results import analysis_from_file_reporter

    with quiet_coverage():
        data = cov.get_data()
        # Relative names (``relative_files``) are of the folder coverage.py started in.
        folder = relative_directory()
        # One file may be stored under two names (relative and absolute): both are read.
        stored: dict[str, list[str]] = {}
        for name in data.measured_files():
            stored.setdefault(measured_name(name, folder), []).append(name)
        measured = sorted(stored)
    wanted = set(only_files) if only_files is not None else None
    arcs_by_file, tests_by_file = passing_arcs(data.data_filename(), passed, folder=folder)
    failing_by_file = failing_arcs(data.data_filename(), failed or set(), folder=folder)
    result = MeasuredSource(config=coverage_settings(cov, rootdir), notes=list(notes))
    for done, filename in enumerate(measured):
        if files_done is not None:
            files_done(done, len(measured))
        if not filename.endswith(".py"):
            continue
        rel = relpath(filename, rootdir)
        if file_problem(rel) or (wanted is not None and rel not in wanted):
            # Outside the rootdir (a link out of the project) or a name no
            # ratchet file may hold: not the project's code, never recorded.
            continue
        source = read_source(Path(filename))
        functions = source_functions(rel, source)
        result.files.append(rel)
        reporter = PythonFileReporter(filename, cov)
        clean = CoverageData(no_disk=True)
        clean.add_arcs({filename: arcs_by_file.get(filename, set())})
        with quiet_coverage():
            try:
                analysis = analysis_from_file_reporter(
                    clean, cov.config.precision, reporter, filename
                )
            except Exception as exc:  # coverage raises NotPython and friends
                raise MeasurementError(f"{rel}: coverage.py could not analyze it: {exc}") from exc
            ran = {line for name in stored[filename] for line in data.lines(name) or ()}
        result.statements[rel] = frozenset(analysis.statements)
        result.tested_lines[rel] = frozenset(
            line for arc in arcs_by_file.get(filename, ()) for line in arc if line > 0
        )
        result.ran_lines[rel] = frozenset(ran) | result.tested_lines[rel]
        if not functions:
            continue
        line_tests = tests_by_file.get(filename, {})
        result.line_tests[rel] = line_tests
        failing = failing_by_file.get(filename, set())
        facts = _function_facts(analysis, functions, line_tests, failing)
        # No measurable statement left: every line excluded from coverage.
        result.excluded_functions += [f.quest_id for f in facts if not f.statements]
        result.functions += facts
    return result
