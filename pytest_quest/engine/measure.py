"""Measuring: coverage.py under pytest, reduced to facts per function.

This is the edge between pytest-quest and coverage.py.  It starts coverage
with branch measurement and attributes execution to each test (each test's
arcs folded in memory, `_TestHarvest`; coverage.py's own dynamic context per
test where that cannot be used), and afterwards reduces the data to :class:`FunctionFacts`: for every
function region coverage.py's own ``code_regions()`` finds, the lines and
branches that tests which *passed* executed.  Execution outside any test
(imports, collection, conftest code) lands in the empty context and never
counts; neither do failing, skipped or xfailed tests.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import sqlite3
import warnings
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_quest.core.errors import MeasurementError, QuestUsageError
from pytest_quest.core.model import FunctionFacts, make_quest_id

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


@contextmanager
def quiet_coverage() -> Iterator[None]:
    """Silence coverage.py's warnings: suites run with ``filterwarnings = error``."""
    from coverage.exceptions import CoverageWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        yield


# -- static view of the source: functions, fingerprints --------------------------


@dataclass
class FunctionInfo:
    """One function region of a source file, before any measurement."""

    file: str
    qualname: str
    ordinal: int
    start: int
    first: int
    last: int
    lines: set[int]
    fingerprint: str

    @property
    def quest_id(self) -> str:
        return make_quest_id(self.file, self.qualname, self.ordinal)

    def facts(self, statements: int, branches: int, **measured: Any) -> FunctionFacts:
        """This function's identity with what was measured of it."""
        return FunctionFacts(
            file=self.file,
            qualname=self.qualname,
            ordinal=self.ordinal,
            start=self.start,
            first=self.first,
            last=self.last,
            fingerprint=self.fingerprint,
            statements=statements,
            branches=branches,
            **measured,
        )


def fingerprint_node(node: ast.AST) -> str:
    """A digest of a function's code, blind to comments, blank lines and position.

    Built on the AST, so a ``# pragma: no cover`` comment or the function
    moving down the file leaves it unchanged (step 2 reports pragmas on its
    own), while any change to the code itself changes it.
    """
    dump = ast.dump(node, annotate_fields=True, include_attributes=False)
    return "sha256:" + hashlib.sha256(dump.encode("utf-8")).hexdigest()[:32]


def source_functions(rel_path: str, source: str) -> list[FunctionInfo]:
    """Every function of `source`, as coverage.py's ``code_regions()`` sees them.

    Twins (same qualified name twice in one file: a property getter and
    setter, defs under if/else) get ordinals 1, 2... in source order.
    Raises `QuestUsageError` naming file and line on a syntax error.
    """
    try:
        tree = ast.parse(source, filename=rel_path)
        regions = _code_regions(source)
    except SyntaxError as exc:
        raise QuestUsageError(
            f"{rel_path}:{exc.lineno}: syntax error in the code under test: {exc.msg}; "
            "fix it before running pytest-quest"
        ) from None
    defs: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs[node.lineno] = node
    function_regions = sorted((r for r in regions if r.kind == "function"), key=lambda r: r.start)
    # A region's lines leave out nested functions; the function ends where its
    # last nested function ends.  Children start on a line of their parent.
    last_line: dict[int, int] = {}
    for region in reversed(function_regions):
        found = defs.get(region.start)
        end = getattr(found, "end_lineno", None) if found is not None else None
        last = end if isinstance(end, int) else max(region.lines | {region.start})
        last_line[region.start] = last
    seen: dict[str, int] = defaultdict(int)
    functions = []
    for region in function_regions:
        seen[region.name] += 1
        found = defs.get(region.start)
        functions.append(
            FunctionInfo(
                file=rel_path,
                qualname=region.name,
                ordinal=seen[region.name],
                start=region.start,
                first=region.start,
                last=last_line[region.start],
                lines=set(region.lines),
                fingerprint=fingerprint_node(found) if found is not None else "",
            )
        )
    return functions


def facts_from_source(
    quest_id: str, file: str, rootdir: Path, *, all_missing: bool
) -> FunctionFacts | None:
    """The function `quest_id` as its source shows it, without any measurement.

    With `all_missing`, every line of its region is missing (no test ran it);
    else it carries no counts, only its identity (position, fingerprint).
    None when the file or the function is gone, or the file does not parse.
    """
    source = read_source(rootdir / file)
    if not source:
        return None
    try:
        functions = source_functions(file, source)
    except QuestUsageError:
        return None
    for info in functions:
        if info.quest_id == quest_id:
            if not all_missing:
                return info.facts(statements=0, branches=0)
            lines = sorted(info.lines)
            return info.facts(statements=len(lines), branches=0, missing_lines=lines)
    return None


def read_source(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError:
        return path.read_bytes().decode("utf-8", errors="replace")


def check_syntax(sources: Iterable[str], rootdir: Path) -> None:
    """Raise `QuestUsageError` naming file and line of the first source that does not parse.

    A syntax error in the code under test reaches pytest as an import error of
    the test module; this names the file that is really at fault.
    """
    for source in sources:
        root = Path(source) if os.path.isabs(source) else rootdir / source
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
        for path in files:
            try:
                ast.parse(read_source(path), filename=str(path))
            except SyntaxError as exc:
                raise QuestUsageError(
                    f"{relpath(str(path), rootdir)}:{exc.lineno}: syntax error in the code "
                    f"under test: {exc.msg}; fix it before running pytest-quest"
                ) from None


# -- the coverage run ------------------------------------------------------------


@dataclass
class MeasuredSource:
    """Facts of every function of the measured source, and what they came from."""

    functions: list[FunctionFacts] = field(default_factory=list)
    excluded_functions: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)

    def by_id(self) -> dict[str, FunctionFacts]:
        return {facts.quest_id: facts for facts in self.functions}


class Measurer:
    """Runs coverage.py for one pytest process: start, one context per test, stop.

    `sources` are absolute paths of the code under test; `data_file` is a
    private file (never the user's ``.coverage``).
    """

    def __init__(
        self,
        rootdir: Path,
        sources: list[str],
        data_file: str,
        data_suffix: str | bool | None = None,
    ) -> None:
        import coverage

        self.rootdir = rootdir
        self.sources = sources
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
            self.cov.set_option("run:core", "ctrace" if _has_ctracer() else "pytrace")
            self.cov.set_option("run:parallel", False)
            # Subprocesses cannot be attributed to the test that started them
            # (their contexts are not the test's): never patch them to measure.
            self.cov.set_option("run:patch", [])
            self.cov.set_option("run:dynamic_context", None)
        self.started = False

    def start(self) -> None:
        with quiet_coverage():
            self.cov.start()
        self.started = True
        # Per-test contexts through coverage.py flush every test's arcs to
        # SQLite (+45% over --cov-branch on a 1,000-test suite): fold each
        # test's arcs in memory instead (`_TestHarvest`), when the tracer's
        # data has the shape we know; otherwise keep coverage's own contexts.
        self._harvest = _TestHarvest.attach(self.cov)

    def switch_context(self, context: str, passed: bool | None = None) -> None:
        """Start measuring for `context` (a test's node id, or "" between tests).

        `passed` tells whether the test that just ended passed; without it,
        that test's arcs are kept whole under its own context, as coverage.py
        would keep them.
        """
        if not self.started:
            return
        harvest = getattr(self, "_harvest", None)
        if harvest is None:
            self.cov.switch_context(context)
        else:
            harvest.switch(context, passed)

    def end_test(self, passed: bool) -> None:
        """The test measured since the last switch ended; `passed` is its outcome."""
        if getattr(self, "_harvest", None) is not None:
            self.switch_context("", passed)
        else:
            self.switch_context("")

    def stop(self) -> None:
        if not self.started:
            return
        with quiet_coverage():
            self.cov.stop()
            harvest = getattr(self, "_harvest", None)
            if harvest is not None:
                harvest.write(self.cov.get_data())
            self.cov.save()
            if harvest is not None:
                harvest.write_who(self.cov.get_data().data_filename())
        self.started = False

    def config_fingerprint(self) -> dict[str, Any]:
        return coverage_settings(self.cov, self.rootdir)


# Reserved contexts of the data file written by `_TestHarvest`: the union of
# the arcs of passing tests, and per test one row per function it executed.
PASSED_CONTEXT = "pytest-quest:passed"
WHO_PREFIX = "pytest-quest:who|"


class _TestHarvest:
    """Folds the tracer's in-memory data per test, instead of one coverage context per test.

    At each test boundary the arcs recorded since the last one are taken out
    of coverage.py's collector (as its own ``flush_data`` does, in place).  A
    passing test's arcs join one union; which functions it executed is kept
    as one row per function (the function's first region line, as a
    ``(line, line)`` row under ``WHO_PREFIX + nodeid``), found through a map
    from each distinct arc to the function regions of its two lines.  Arcs of
    tests that did not pass, and of code run outside tests, go to the empty
    context: they keep the file measured and never count.  `analyze()` reads
    the result exactly as it reads per-test contexts: the same facts
    (tests/test_perf_equivalence.py).
    """

    def __init__(self, collector: Any) -> None:
        self.collector = collector
        self.packed = bool(collector.core.packed_arcs)
        self.current = ""
        self.outside: dict[str, set[Any]] = defaultdict(set)
        self.passing: dict[str, set[Any]] = defaultdict(set)
        self.whole: list[tuple[str, dict[str, set[Any]]]] = []
        # file -> arc -> anchors (first region line) of the functions it touches
        self.anchors: dict[str, dict[Any, tuple[int, ...]]] = {}
        self.line_anchor: dict[str, dict[int, int]] = {}
        self.who: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))

    @classmethod
    def attach(cls, cov: Any) -> _TestHarvest | None:
        collector = getattr(cov, "_collector", None)
        core = getattr(collector, "core", None)
        if (
            collector is None
            or core is None
            or not getattr(collector, "branch", False)
            or not isinstance(getattr(collector, "data", None), dict)
            or getattr(core, "systrace", False) is not True
            or not hasattr(collector, "cached_mapped_file")
        ):
            return None
        return cls(collector)

    def take(self) -> dict[str, set[Any]]:
        taken = {}
        for name, live in list(self.collector.data.items()):
            if live:
                snapshot = live.copy()
                live.difference_update(snapshot)
                taken[name] = snapshot
        return taken

    def switch(self, context: str, passed: bool | None) -> None:
        taken = self.take()
        ended, self.current = self.current, context
        if not taken:
            return
        if ended and passed is None:
            self.whole.append((ended, taken))
            return
        if not ended or not passed:
            for name, arcs in taken.items():
                self.outside[name] |= arcs
            return
        for name, arcs in taken.items():
            self.passing[name] |= arcs
            anchors = self.anchors.get(name)
            if anchors is None:
                anchors = self.anchors[name] = {}
            # C-level set operations only, per arc: on Python 3.12+ the legacy
            # tracer costs a callback per loop iteration of Python code run
            # while coverage traces (this is), 3x the work of 3.11.
            for arc in arcs.difference(anchors):
                anchors[arc] = self.anchors_of(name, arc)
            touched = set().union(*set(map(anchors.__getitem__, arcs)))
            who = self.who[name]
            for anchor in touched:
                who[anchor].append(ended)

    def anchors_of(self, name: str, arc: Any) -> tuple[int, ...]:
        line_anchor = self.line_anchor.get(name)
        if line_anchor is None:
            line_anchor = self.line_anchor[name] = _line_anchors(name)
        first, second = self.unpack(arc)
        found = {line_anchor.get(first), line_anchor.get(second)}
        found.discard(None)
        return tuple(sorted(found))  # type: ignore[arg-type]

    def unpack(self, arc: Any) -> tuple[int, int]:
        if not self.packed:
            return arc  # type: ignore[no-any-return]
        # The C tracer packs a pair into one int (tracer.c: CTracer_record_pair).
        first = arc & 0xFFFFFFF
        second = (arc >> 28) & 0xFFFFFFF
        if arc & (1 << 56):
            first = -first
        if arc & (1 << 57):
            second = -second
        return first, second

    def write(self, covdata: Any) -> None:
        """Add what was folded to `covdata` (before it is saved)."""
        leftover = self.take()
        for name, arcs in leftover.items():
            self.outside[name] |= arcs
        mapped = self.collector.cached_mapped_file
        unpack = self.unpack

        def rows(data: dict[str, set[Any]]) -> dict[str, list[tuple[int, int]]]:
            return {mapped(name): [unpack(arc) for arc in arcs] for name, arcs in data.items()}

        covdata.set_context(None)
        covdata.add_arcs(rows(self.outside))
        covdata.set_context(PASSED_CONTEXT)
        covdata.add_arcs(rows(self.passing))
        for test, data in self.whole:
            covdata.set_context(test)
            covdata.add_arcs(rows(data))
        covdata.set_context(None)
        self.outside.clear()
        self.passing.clear()
        self.whole.clear()

    def write_who(self, data_filename: str) -> None:
        """Add the per-test function rows to the saved data file, in one transaction.

        Through ``CoverageData.add_arcs`` this costs one commit per test
        (2 s for 1,000 tests); one ``executemany`` on the same schema (7,
        which `_passing_arcs` reads too) costs milliseconds.  Every file
        named here already has rows (its arcs were added before the save).
        """
        if not self.who:
            return
        mapped = self.collector.cached_mapped_file
        connection = sqlite3.connect(data_filename)
        try:
            with connection:
                files = dict(connection.execute("select path, id from file"))
                tests = sorted(
                    {test for who in self.who.values() for ts in who.values() for test in ts}
                )
                connection.executemany(
                    "insert or ignore into context (context) values (?)",
                    [(WHO_PREFIX + test,) for test in tests],
                )
                ids = {
                    name[len(WHO_PREFIX) :]: context_id
                    for context_id, name in connection.execute("select id, context from context")
                    if name.startswith(WHO_PREFIX)
                }
                connection.executemany(
                    "insert or ignore into arc (file_id, context_id, fromno, tono) values (?, ?, ?, ?)",
                    [
                        (files[mapped(name)], ids[test], anchor, anchor)
                        for name, who in self.who.items()
                        for anchor, tests_of in who.items()
                        for test in tests_of
                    ],
                )
        finally:
            connection.close()
        self.who.clear()


@functools.lru_cache(maxsize=256)
def _code_regions(source: str) -> list[Any]:
    """coverage.py's regions of `source`, parsed once per process (the fold and analyze() share it)."""
    from coverage.regions import code_regions

    return list(code_regions(source))


def _line_anchors(filename: str) -> dict[int, int]:
    """Line -> the first line of the function region holding it (regions are disjoint)."""
    try:
        regions = _code_regions(read_source(Path(filename)))
    except (SyntaxError, ValueError):
        return {}
    anchors = {}
    for region in regions:
        if region.kind == "function" and region.lines:
            anchor = min(region.lines)
            for line in region.lines:
                anchors[line] = anchor
    return anchors


def _has_ctracer() -> bool:
    try:
        from coverage.tracer import CTracer  # noqa: F401
    except ImportError:  # pragma: no cover - coverage without its C extension
        return False
    return True


def coverage_settings(cov: Any, rootdir: Path | None = None) -> dict[str, Any]:
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


def analyze(
    cov: Any,
    rootdir: Path,
    passed: set[str],
    only_files: Iterable[str] | None = None,
) -> MeasuredSource:
    """Reduce the saved data of `cov` to facts per function, counting `passed` tests only.

    `passed` holds the contexts (test node ids) whose tests passed.
    `only_files` (paths relative to `rootdir`) narrows the analysis.
    """
    from coverage import CoverageData
    from coverage.python import PythonFileReporter
    from coverage.results import AnalysisNarrower, analysis_from_file_reporter

    with quiet_coverage():
        data = cov.get_data()
        measured = sorted(data.measured_files())
    wanted = set(only_files) if only_files is not None else None
    arcs_by_file, tests_by_file = _passing_arcs(data.data_filename(), passed)
    result = MeasuredSource(config=coverage_settings(cov, rootdir))
    for filename in measured:
        if not filename.endswith(".py"):
            continue
        rel = relpath(filename, rootdir)
        if wanted is not None and rel not in wanted:
            continue
        source = read_source(Path(filename))
        functions = source_functions(rel, source)
        result.files.append(rel)
        if not functions:
            continue
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
        narrower = AnalysisNarrower(analysis)
        narrower.add_regions(function.lines for function in functions)
        line_tests = tests_by_file.get(filename, {})
        for function in functions:
            narrowed = narrower.narrow(function.lines)
            span = range(function.first, function.last + 1)
            excluded = sorted(line for line in analysis.excluded if line in span)
            if not narrowed.statements:
                result.excluded_functions.append(function.quest_id)
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
            result.functions.append(
                function.facts(
                    statements=len(narrowed.statements),
                    branches=narrowed.numbers.n_branches,
                    missing_lines=sorted(narrowed.missing),
                    missing_branches=missing_branches,
                    excluded_lines=excluded,
                    covering_tests=sorted(tests),
                )
            )
    return result


def _passing_arcs(
    data_filename: str, passed: set[str]
) -> tuple[dict[str, set[tuple[int, int]]], dict[str, dict[int, set[str]]]]:
    """Arcs executed by passing tests, per file; and which passing tests ran each line.

    Reads coverage.py's data file (schema 7): ``arc`` joined with ``file``
    and ``context``.  Rows of the empty context (import, collection) and of
    tests that did not pass are dropped.  Two kinds of data are read alike:
    one context per test (coverage.py's own contexts), and the folded form of
    `_TestHarvest` (the passing union under `PASSED_CONTEXT`, and per passing
    test one row per function it executed under ``WHO_PREFIX + nodeid``).
    """
    arcs: dict[str, set[tuple[int, int]]] = defaultdict(set)
    tests: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    if not os.path.exists(data_filename):
        return arcs, tests
    connection = sqlite3.connect(data_filename)
    try:
        names: dict[int, str] = {}  # context id -> passing test
        arc_ids = []  # contexts whose rows are real arcs
        for context_id, name in connection.execute("select id, context from context"):
            if name == PASSED_CONTEXT:
                arc_ids.append(context_id)
            elif name.startswith(WHO_PREFIX):
                if name[len(WHO_PREFIX) :] in passed:
                    names[context_id] = name[len(WHO_PREFIX) :]
            elif name in passed:
                names[context_id] = name
                arc_ids.append(context_id)
        files = dict(connection.execute("select id, path from file"))
        if arc_ids:
            marks = ",".join("?" * len(arc_ids))
            for file_id, fromno, tono in connection.execute(
                f"select distinct file_id, fromno, tono from arc where context_id in ({marks})",
                arc_ids,
            ):
                arcs[files[file_id]].add((fromno, tono))
        for file_id, context_id, fromno, tono in connection.execute(
            "select file_id, context_id, fromno, tono from arc"
        ):
            name = names.get(context_id)
            if name is None:
                continue
            by_line = tests[files[file_id]]
            if fromno > 0:
                by_line[fromno].add(name)
            if tono > 0 and tono != fromno:
                by_line[tono].add(name)
    except sqlite3.DatabaseError as exc:
        raise MeasurementError(f"coverage data file {data_filename} is unreadable: {exc}") from exc
    finally:
        connection.close()
    return arcs, tests


def relpath(filename: str, rootdir: Path) -> str:
    try:
        return Path(os.path.relpath(filename, rootdir)).as_posix()
    except ValueError:  # pragma: no cover - another drive on Windows
        return Path(filename).as_posix()


def new_exclusions(
    facts: FunctionFacts, baseline_offsets: set[int], source_lines: list[str], patterns: list[str]
) -> list[tuple[int, str]]:
    """Excluded lines of a function that were not excluded at issue, with the pattern at fault.

    Offsets are relative to the function's first line, so the function moving
    in its file is no new exclusion.
    """
    found = []
    for line in facts.excluded_lines:
        if line - facts.first in baseline_offsets:
            continue
        text = source_lines[line - 1] if 0 < line <= len(source_lines) else ""
        pattern = next((p for p in patterns if re.search(p, text)), "")
        found.append((line, pattern))
    return found
