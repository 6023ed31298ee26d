"""The per-test fold of coverage.py's tracer data, and reading it back from the data file.

Why and how it folds (and that it gives the same facts): docs/performance.md.
"""

from __future__ import annotations

import os
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_quest.core.errors import MeasurementError
from pytest_quest.engine.source import code_regions, read_source
from pytest_quest.engine.threads import ThreadFence

# Reserved contexts of the data file written by `Harvest`: the union of
# the arcs of passing tests, and per test one row per function it executed.
PASSED_CONTEXT = "pytest-quest:passed"
#: The union of the arcs of tests that failed or erred (named in facts, never counted).
FAILED_CONTEXT = "pytest-quest:failed"
WHO_PREFIX = "pytest-quest:who|"


class Harvest:
    """Folds the tracer's in-memory data per test, instead of one coverage context per test.

    At each test boundary the arcs since the last one are taken out of the
    collector: a passing test's join one union, plus one ``(line, line)`` row
    per function it ran under ``WHO_PREFIX + nodeid``.  Other arcs (failed
    tests, code outside tests, threads older than the test: `ThreadFence`) go
    to the empty context and never count.  `analyze()` gets the same facts as
    from per-test contexts (docs/performance.md).
    """

    def __init__(self, collector: Any) -> None:
        self.collector = collector
        self.packed = bool(collector.core.packed_arcs)
        self.current = ""
        self.outside: dict[str, set[Any]] = defaultdict(set)
        self.passing: dict[str, set[Any]] = defaultdict(set)
        self.failing: dict[str, set[Any]] = defaultdict(set)
        self.whole: list[tuple[str, dict[str, set[Any]]]] = []
        # file -> arc -> anchors (first region line) of the functions it touches
        self.anchors: dict[str, dict[Any, tuple[int, ...]]] = {}
        self.line_anchor: dict[str, dict[int, int]] = {}
        self.who: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
        # Threads older than the running test write elsewhere (engine/threads.py).
        self.fence = ThreadFence(collector)
        # Each passing test's own arcs, when an incremental run's record is kept (`keep_tests`).
        self.kept: list[tuple[str, dict[str, set[Any]]]] | None = None

    @classmethod
    def attach(cls, cov: Any) -> Harvest | None:
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

    def switch(self, context: str, passed: bool | None, *, failed: bool = False) -> None:
        taken = self.take()
        ended, self.current = self.current, context
        if context:
            self.fence.test_starts()
        if not taken:
            return
        if ended and passed is None:
            self.whole.append((ended, taken))
            return
        if ended and failed:
            for name, arcs in taken.items():
                self.failing[name] |= arcs
            return
        if not ended or not passed:
            for name, arcs in taken.items():
                self.outside[name] |= arcs
            return
        self._passed(ended, taken)

    def _passed(self, test: str, taken: dict[str, set[Any]]) -> None:
        if self.kept is not None:
            self.kept.append((test, taken))
        for name, arcs in taken.items():
            who = self.who[name]
            for anchor in self._fold(name, arcs):
                who[anchor].append(test)

    def _fold(self, name: str, arcs: set[Any]) -> set[int]:
        """Join `arcs` of file `name` to the passing union; the functions (anchors) they touch."""
        self.passing[name] |= arcs
        anchors = self.anchors.get(name)
        if anchors is None:
            anchors = self.anchors[name] = {}
        # C-level set operations only: on Python 3.12+ coverage's tracer costs
        # a callback per loop iteration of Python code, this loop included.
        for arc in arcs.difference(anchors):
            anchors[arc] = self.anchors_of(name, arc)
        return set().union(*set(map(anchors.__getitem__, arcs)))

    def keep_tests(self) -> None:
        """Keep each passing test's own arcs too (`tests_arcs`): the record of incremental runs."""
        self.kept = []

    def replay(self, tests: Iterable[tuple[str, Mapping[str, list[tuple[int, int]]]]]) -> None:
        """Count each test's arcs (file name -> arcs) as a passing test's, as if it had just run.

        They are not kept for `tests_arcs` (the caller holds them).  Tests that
        ran the same arcs share one list: each list is packed, and the
        functions it touches found, once per file.
        """
        pack = self.pack
        touched: dict[tuple[str, int], tuple[list[tuple[int, int]], set[int]]] = {}
        for test, per_file in tests:
            for name, arcs in per_file.items():
                found = touched.get((name, id(arcs)))
                if found is None:
                    anchors = self._fold(name, {pack(arc) for arc in arcs})
                    found = touched[(name, id(arcs))] = (arcs, anchors)
                who = self.who[name]
                for anchor in found[1]:
                    who[anchor].append(test)

    def tests_arcs(self) -> dict[str, dict[str, list[tuple[int, int]]]]:
        """Each kept passing test's arcs, per measured file (as coverage.py names it)."""
        mapped = self.collector.cached_mapped_file
        found: dict[str, dict[str, list[tuple[int, int]]]] = {}
        for test, taken in self.kept or ():
            per_file = found.setdefault(test, {})
            for name, arcs in taken.items():
                per_file.setdefault(mapped(name), []).extend(map(self.unpack, arcs))
        return found

    def pack(self, arc: tuple[int, int]) -> Any:
        if not self.packed:
            return arc
        first, second = arc
        packed = abs(first) | (abs(second) << 28)
        if first < 0:
            packed |= 1 << 56
        if second < 0:
            packed |= 1 << 57
        return packed

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
        for name, arcs in [*leftover.items(), *self.fence.take_stray().items()]:
            self.outside[name] |= arcs
        mapped = self.collector.cached_mapped_file
        unpack = self.unpack

        def rows(data: dict[str, set[Any]]) -> dict[str, list[tuple[int, int]]]:
            found: dict[str, list[tuple[int, int]]] = {}
            # Two names of one file (a replayed test's and the tracer's) are one file.
            for name, arcs in data.items():
                found.setdefault(mapped(name), []).extend(unpack(arc) for arc in arcs)
            return found

        covdata.set_context(None)
        covdata.add_arcs(rows(self.outside))
        covdata.set_context(PASSED_CONTEXT)
        covdata.add_arcs(rows(self.passing))
        if self.failing:
            covdata.set_context(FAILED_CONTEXT)
            covdata.add_arcs(rows(self.failing))
        for test, data in self.whole:
            covdata.set_context(test)
            covdata.add_arcs(rows(data))
        covdata.set_context(None)
        self.outside.clear()
        self.passing.clear()
        self.failing.clear()
        self.whole.clear()

    def write_who(self, data_filename: str) -> None:
        """Add the per-test function rows to the saved data file, in one transaction.

        ``CoverageData.add_arcs`` would commit once per test; one ``executemany``
        on schema 7 (which `passing_arcs` reads) does not.  Every file named here
        already has rows.
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


def _line_anchors(filename: str) -> dict[int, int]:
    """Line -> the first line of the function region holding it (regions are disjoint)."""
    try:
        regions = code_regions(read_source(Path(filename)))
    except (SyntaxError, ValueError):
        return {}
    anchors = {}
    for region in regions:
        if region.kind == "function" and region.lines:
            anchor = min(region.lines)
            for line in region.lines:
                anchors[line] = anchor
    return anchors


def _passing_contexts(
    connection: sqlite3.Connection, passed: set[str]
) -> tuple[dict[int, str], list[int], set[int]]:
    """Context id -> passing test; the contexts whose rows are real arcs; those of
    `Harvest`'s one row per function (``WHO_PREFIX``)."""
    names: dict[int, str] = {}
    arc_ids = []
    who_ids = set()
    for context_id, name in connection.execute("select id, context from context"):
        if name == PASSED_CONTEXT:
            arc_ids.append(context_id)
        elif name.startswith(WHO_PREFIX):
            if name[len(WHO_PREFIX) :] in passed:
                names[context_id] = name[len(WHO_PREFIX) :]
                who_ids.add(context_id)
        elif name in passed:
            names[context_id] = name
            arc_ids.append(context_id)
    return names, arc_ids, who_ids


def passing_arcs(
    data_filename: str, passed: set[str], *, folder: str | None = None
) -> tuple[dict[str, set[tuple[int, int]]], dict[str, dict[int, set[str]]]]:
    """Arcs executed by passing tests, per file; and which passing tests ran each line.

    Reads coverage.py's data file (schema 7), dropping the empty context and
    tests that did not pass; per-test contexts and `Harvest`'s folded form are
    read alike.  A file's name is made absolute against `folder` (`measured_name`).
    """
    arcs: dict[str, set[tuple[int, int]]] = defaultdict(set)
    tests: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    if not os.path.exists(data_filename):
        return arcs, tests
    regions = _RegionLines()
    connection = sqlite3.connect(data_filename)
    try:
        names, arc_ids, who_ids = _passing_contexts(connection, passed)
        files = _names(connection, folder)
        if arc_ids:
            marks = ",".join("?" * len(arc_ids))
            for file_id, fromno, tono in connection.execute(
                f"select distinct file_id, fromno, tono from arc where context_id in ({marks})",
                arc_ids,
            ):
                arcs[files[file_id]].add((fromno, tono))
        # file -> function anchor -> the tests of its `WHO_PREFIX` rows
        ran_function: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
        for file_id, context_id, fromno, tono in connection.execute(
            "select file_id, context_id, fromno, tono from arc"
        ):
            name = names.get(context_id)
            if name is None:
                continue
            if context_id in who_ids:
                ran_function[files[file_id]][fromno].add(name)
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
    for filename, by_anchor in ran_function.items():
        by_line = tests[filename]
        lines_of = regions(filename)
        for anchor, names_of in by_anchor.items():
            # The row says the test ran the function, not which lines: it counts
            # for every line, or step 4 would never try it on lines another test
            # ran in a subprocess (whose rows are per line).
            for line in lines_of.get(anchor, (anchor,)):
                found = by_line.get(line)
                if found is None:
                    by_line[line] = set(names_of)
                else:
                    found |= names_of
    return arcs, tests


def failing_arcs(
    data_filename: str, failed: set[str], *, folder: str | None = None
) -> dict[str, set[tuple[int, int]]]:
    """Arcs executed by tests that failed or erred, per file (`Harvest`'s union or their contexts)."""
    arcs: dict[str, set[tuple[int, int]]] = defaultdict(set)
    if not os.path.exists(data_filename):
        return arcs
    connection = sqlite3.connect(data_filename)
    try:
        ids = [
            context_id
            for context_id, name in connection.execute("select id, context from context")
            if name == FAILED_CONTEXT or name in failed
        ]
        if ids:
            files = _names(connection, folder)
            marks = ",".join("?" * len(ids))
            for file_id, fromno, tono in connection.execute(
                f"select distinct file_id, fromno, tono from arc where context_id in ({marks})",
                ids,
            ):
                arcs[files[file_id]].add((fromno, tono))
    except sqlite3.DatabaseError as exc:
        raise MeasurementError(f"coverage data file {data_filename} is unreadable: {exc}") from exc
    finally:
        connection.close()
    return arcs


class _RegionLines:
    """File -> anchor (a function region's first line) -> the region's lines, read once a file."""

    def __init__(self) -> None:
        self.found: dict[str, dict[int, tuple[int, ...]]] = {}

    def __call__(self, filename: str) -> dict[int, tuple[int, ...]]:
        if filename not in self.found:
            lines: dict[int, list[int]] = defaultdict(list)
            for line, anchor in sorted(_line_anchors(filename).items()):
                lines[anchor].append(line)
            self.found[filename] = {anchor: tuple(found) for anchor, found in lines.items()}
        return self.found[filename]


def measured_name(name: str, folder: str | None) -> str:
    """A measured file's name, absolute: made so against `folder` when it is relative.

    coverage.py's ``relative_files`` setting stores a file under the folder
    it started in by a relative name, while the processes the tests start
    (measured with our settings) store it by its absolute one: read as is,
    one file would be two, each with part of its arcs.
    """
    if folder is None or os.path.isabs(name):
        return name
    return os.path.normpath(os.path.join(folder, name))


def _names(connection: sqlite3.Connection, folder: str | None) -> dict[int, str]:
    return {
        file_id: measured_name(path, folder)
        for file_id, path in connection.execute("select id, path from file")
    }
