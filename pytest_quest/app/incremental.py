"""Incremental scan and check: plan which tests run, and record what a run measured.

A scan or check reads the run record (engine/incremental.py), asks the
selection rule (core/incremental.py) which collected tests a change can
affect, runs only those, and replays every other test's recorded arcs (moved
to their current lines) as if it had run: the facts are a full run's.  Each
run that measured the whole suite, replayed or not, writes the record again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_quest.core.incremental import (
    Changes,
    Full,
    LineMap,
    classify,
    line_map,
    move_arcs,
    select,
)
from pytest_quest.core.words import counted
from pytest_quest.engine import incremental as records
from pytest_quest.engine.incremental import Arcs, RunRecord
from pytest_quest.engine.source import read_source, relpath


@dataclass
class Plan:
    """What an incremental run runs, and what it replays."""

    #: The project's files as the run starts: the next record's digests.
    files: dict[str, str]
    #: Why everything runs ("" when the plan is incremental).
    full: str = ""
    run: set[str] = field(default_factory=set)
    #: Tests kept: their recorded arcs at today's lines, per file (relative path).
    replay: dict[str, dict[str, Arcs]] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    #: A previous run was recorded (and read).
    recorded: bool = True

    def as_data(self) -> dict[str, object]:
        """The JSON output's ``run``: tests run and kept, and why all ran (None: incremental)."""
        return {"ran": len(self.run), "kept": len(self.replay), "full": self.full or None}

    def summary(self) -> str:
        if self.full:
            return f"full run: {self.full}"
        total = len(self.run) + len(self.replay)
        return (
            f"incremental: {len(self.run)} of {counted(total, 'test')} ran; "
            f"{len(self.replay)} kept their recorded outcome and coverage "
            "(--quest-full runs them all)"
        )


def plan(
    record: RunRecord | str,
    *,
    rootdir: Path,
    files: dict[str, str],
    environment: Mapping[str, str],
    source_roots: Iterable[str],
    collected: list[tuple[str, str]],
) -> Plan:
    """The tests of `collected` ((node id, file) pairs) to run after the changes since `record`.

    `record` is the previous run, or why there is none; `files` and
    `environment` are now's (engine/incremental.py).
    """
    if isinstance(record, str):
        # None recorded: nothing to say; one unreadable: said.
        return Plan(files, full=record, recorded=not record.startswith(records.NONE_RECORDED))
    for key, value in environment.items():
        was = record.environment.get(key)
        if was != value:
            return Plan(files, full=f"{key} changed since the recorded run ({was} -> {value})")
    roots = [os.path.abspath(root) for root in source_roots]
    # Measured last time, or new under a source folder (nothing can have imported it):
    # an old file there that was not measured (omitted, or read some other way) is not traced.
    sources = set(record.sources) | {
        path for path in files if path not in record.files and _under_roots(rootdir / path, roots)
    }
    test_files = set(record.test_files) | {file for _, file in collected}
    sorted_out = classify(record.files, files, sources=sources, test_files=test_files)
    if isinstance(sorted_out, Full):
        return Plan(files, full=sorted_out.reason)
    to_map, changes = sorted_out
    maps: dict[str, LineMap] = {}
    for path in to_map:
        old = record.sources.get(path)
        if old is None:
            continue  # not measured last time: no test executed it, nothing imported it
        found = line_map(old, read_source(rootdir / path))
        if found.module_changed:
            return Plan(files, full=f"module-level code of {path} changed")
        maps[path] = found
    changes = Changes(
        source_maps=maps,
        removed_sources=changes.removed_sources,
        test_files=changes.test_files,
        conftest_dirs=changes.conftest_dirs,
    )
    chosen = select(collected, record.recorded_tests(), changes)
    result = Plan(files, run=chosen)
    # Tests that ran the same arcs share one list (engine/incremental.py's `load`): moved
    # once per file, and shared again, so replaying and recording cost one pass per list.
    moved_lists: dict[tuple[str, int], tuple[Arcs, Arcs]] = {}
    for nodeid, _ in collected:
        if nodeid in chosen:
            continue
        moved: dict[str, Arcs] = {}
        for path, arcs in record.arcs.get(nodeid, {}).items():
            if path in maps:
                shared = moved_lists.get((path, id(arcs)))
                if shared is None:
                    now = move_arcs(arcs, maps[path])
                    if now is None:  # pragma: no cover - select() runs such a test
                        raise AssertionError(f"{nodeid}: arcs in {path} without a line now")
                    shared = moved_lists[(path, id(arcs))] = (arcs, now)
                arcs = shared[1]
            moved[path] = arcs
        result.replay[nodeid] = moved
        result.outcomes[nodeid] = record.outcomes[nodeid]
        result.seconds[nodeid] = record.seconds.get(nodeid, 0.0)
    return result


def _under_roots(path: Path, roots: list[str]) -> bool:
    text = str(path)
    return text.endswith(".py") and any(text.startswith(root + os.sep) for root in roots)


def record(
    *,
    rootdir: Path,
    files: dict[str, str],
    environment: dict[str, str],
    outcomes: Mapping[str, str],
    seconds: Mapping[str, float],
    arcs: Mapping[str, Mapping[str, Arcs]],
    measured: Iterable[str],
    children: set[str],
    test_files: Iterable[str],
    replayed: Mapping[str, Mapping[str, Arcs]] | None = None,
) -> RunRecord:
    """The record of a run that measured the whole suite.

    `arcs` are the tests that ran (absolute file names), `replayed` those
    that kept their recorded arcs (`Plan.replay`: relative names).
    """
    run = RunRecord(
        environment=environment,
        files=files,
        test_files=sorted(set(test_files)),
        outcomes=dict(outcomes),
        seconds=dict(seconds),
        children=set(children),
    )
    for name in measured:
        rel = relpath(name, rootdir)
        if not rel.startswith("../"):
            run.sources[rel] = read_source(Path(name))
    for nodeid, per_file in arcs.items():
        if nodeid not in outcomes:
            continue
        kept = {}
        for name, found in per_file.items():
            rel = relpath(name, rootdir)
            if rel in run.sources:
                kept[rel] = found
        run.arcs[nodeid] = kept
    for nodeid, per_file in (replayed or {}).items():
        if nodeid in outcomes:
            # The lists stay shared between tests: `save` writes each once.
            run.arcs[nodeid] = {rel: found for rel, found in per_file.items() if rel in run.sources}
    return run
