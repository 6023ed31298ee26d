"""Incremental scan and check in one pytest process: deselect, replay, record (app/incremental.py)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.app.incremental import Plan, plan, record
from pytest_quest.app.options import QuestOptions
from pytest_quest.engine import incremental as records
from pytest_quest.engine.measure import Measurement, Measurer, quiet_coverage
from pytest_quest.engine.source import relpath

# Options that change no test's execution: the same record serves any of them.
_HARMLESS_FLAGS = {
    "--quest",
    "--quest-format",
    "--quest-full",
    "--quest-file",
    "--quest-run-data",
    "--quest-strict",
    "--quest-export-to",
    "--quest-export-force",
    "--quest-since",
    "--quest-require-pass",
    "--quest-base",
    "--quest-base-file",
    "--color",
}
_HARMLESS_WITH_VALUE = _HARMLESS_FLAGS - {
    "--quest-full",
    "--quest-export-force",
    "--quest-strict",
    "--quest-require-pass",
}
_VERBOSITY = {"-q", "-qq", "-qqq", "-v", "-vv", "-vvv", "--quiet", "--verbose"}


def measured_arguments(args: list[str]) -> list[str]:
    """The invocation's arguments less those that cannot change what the tests execute."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if arg in _VERBOSITY or name in _HARMLESS_FLAGS:
            skip = "=" not in arg and name in _HARMLESS_WITH_VALUE
            continue
        kept.append(arg)
    return kept


class IncrementalRun:
    """One scan's or check's incremental part; `why_not` set: it runs and records nothing."""

    def __init__(self, config: pytest.Config, options: QuestOptions, measurer: Measurement | None):
        self.config = config
        self.options = options
        self.rootdir = Path(str(config.rootpath))
        self.measurer = measurer
        self.why_not = self._why_not()
        self.plan: Plan | None = None
        self.environment: dict[str, str] = {}
        self.test_files: set[str] = set()
        self.path = options.run_data or records.default_path(options.quest_file)
        # The arguments whose change makes a full run: the user's (check's child is given them).
        self.arguments = [str(a) for a in config.invocation_params.args]
        # check's child: the record goes to its judge, who writes it (app/check_run.py).
        self.send_record: Callable[[records.RunRecord], None] | None = None

    def _why_not(self) -> str:
        if hasattr(self.config, "workerinput") or _xdist_on(self.config):
            return "tests run under pytest-xdist"
        if not isinstance(self.measurer, Measurer):
            return "measured through pytest-cov"
        if self.measurer.harvest is None:
            return "coverage.py's tracer keeps no per-test fold here"
        return ""

    def select(self, items: list[pytest.Item]) -> None:
        """Keep in `items` the tests a change since the recorded run can affect."""
        if self.why_not:
            return
        assert isinstance(self.measurer, Measurer) and self.measurer.harvest is not None
        self.measurer.harvest.keep_tests()
        relpaths: dict[str, str] = {}  # one per test file, not one per test
        collected = []
        for item in items:
            name = str(item.path)
            file = relpaths.get(name)
            if file is None:
                file = relpaths[name] = relpath(name, self.rootdir)
            collected.append((item.nodeid, file))
        self.test_files = {file for _, file in collected}
        # The shard a job writes into the project is its output, not an input of the next run.
        leave_out = [self.options.quest_file, self.path]
        leave_out += [self.options.shard_out] if self.options.shard_out is not None else []
        files = records.project_files(self.rootdir, leave_out)
        sources = [relpath(s, self.rootdir) for s in self.measurer.sources]
        self.environment = records.environment(
            measured_arguments(self.arguments),
            sources,
            {"subprocesses measured": str(self.measurer.children is not None)},
        )
        if self.options.full:
            self.plan = Plan(files, full="--quest-full")
            return
        self.plan = plan(
            records.load(self.path),
            rootdir=self.rootdir,
            files=files,
            environment=self.environment,
            source_roots=self.measurer.sources,
            collected=collected,
        )
        if not self.plan.full:
            items[:] = [item for item in items if item.nodeid in self.plan.run]

    def replay(self, outcomes: dict[str, str], seconds: dict[str, float]) -> None:
        """Before the measurement stops: the kept tests' arcs, outcomes and times, as if run."""
        if self.plan is None or self.plan.full:
            return
        assert isinstance(self.measurer, Measurer) and self.measurer.harvest is not None
        names: dict[str, str] = {}

        def absolute(rel: str) -> str:
            name = names.get(rel)
            if name is None:
                name = names[rel] = str(self.rootdir / rel)
            return name

        self.measurer.harvest.replay(
            (nodeid, {absolute(rel): arcs for rel, arcs in per_file.items()})
            for nodeid, per_file in self.plan.replay.items()
        )
        outcomes.update(self.plan.outcomes)
        seconds.update(self.plan.seconds)

    def finish(
        self, outcomes: dict[str, str], seconds: dict[str, float], keep: bool
    ) -> tuple[list[str], dict[str, object] | None]:
        """Write the record of this run (`keep`: the run is whole); the lines and data to show."""
        if self.why_not:
            # Said in JSON only: such runs are always full (docs/ci.md), a line each time is noise.
            return [], {"ran": len(outcomes), "kept": 0, "full": self.why_not}
        if self.plan is None:
            return [], None
        # A first run has nothing to be incremental against: nothing to say.
        lines = [self.plan.summary()] if self.plan.recorded else []
        data = self.plan.as_data()
        if self.plan.full:
            data["ran"] = len(outcomes)
        if not keep:
            return lines, data
        assert isinstance(self.measurer, Measurer) and self.measurer.harvest is not None
        with quiet_coverage():
            covdata = self.measurer.cov.get_data()
            measured = [os.path.abspath(name) for name in covdata.measured_files()]
            contexts = set(covdata.measured_contexts())
        arcs = {
            test: {os.path.abspath(name): found for name, found in per_file.items()}
            for test, per_file in self.measurer.harvest.tests_arcs().items()
        }
        run = record(
            rootdir=self.rootdir,
            files=self.plan.files,
            environment=self.environment,
            outcomes=outcomes,
            seconds=seconds,
            arcs=arcs,
            replayed=self.plan.replay,
            measured=measured,
            children=contexts & outcomes.keys(),
            test_files=self.test_files,
        )
        if self.send_record is not None:
            self.send_record(run)
            return lines, data
        try:
            records.save(self.path, run)
        except OSError as exc:
            lines.append(f"warning: the run record {self.path} was not written: {exc}")
        return lines, data


def for_child(
    config: pytest.Config, options: QuestOptions, measurer: Measurement | None, given: Any
) -> IncrementalRun | None:
    """check's child's incremental run, as its judge's instructions say (None: none asked)."""
    if not isinstance(given, dict):
        return None
    options = dataclasses.replace(
        options,
        full=given.get("full") is True,
        run_data=Path(str(given.get("path"))),
        quest_file=Path(str(given.get("quest_file"))),
        shard_out=Path(str(given["shard_out"])) if given.get("shard_out") else None,
    )
    run = IncrementalRun(config, options, measurer)
    arguments = given.get("arguments")
    run.arguments = [str(a) for a in arguments] if isinstance(arguments, list) else []
    return run


def _xdist_on(config: pytest.Config) -> bool:
    workers: Any = config.getoption("numprocesses", default=None)
    return bool(workers) or config.getoption("dist", default="no") not in ("no", None)
