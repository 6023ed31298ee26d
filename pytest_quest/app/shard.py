"""Scans across machines: ``--quest-shard-out DIR`` writes a job's shard, ``combine`` merges them.

Each CI job runs ``pytest --quest scan --quest-shard-out DIR`` (or
``check``) on its part of the suite: the shard holds what the job measured
and nothing is written to the ratchet file.  ``pytest --quest combine
DIR...`` validates the shards (core/shard.py), merges their coverage data
with coverage.py's own ``CoverageData.update`` (engine/shard.py), and hands
the merged run to the very use case the shards were made by (app/scan.py or
app/check.py), as the run data of one process that ran the whole suite.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_quest.app.check import check
from pytest_quest.app.context import Context, RunData, refuse_collection_errors, resolve_sources
from pytest_quest.app.scan import scan
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.run import FAILED
from pytest_quest.core.shard import (
    MergedRun,
    Shard,
    changed_sources,
    check_fits,
    check_same_tree,
    check_tests_present,
    merge,
)
from pytest_quest.engine import shard as shards
from pytest_quest.engine.measure import MeasuredSource, analyze, coverage_settings, quiet_coverage
from pytest_quest.engine.source import relpath
from pytest_quest.engine.testfiles import digest_test_files
from pytest_quest.report import text
from pytest_quest.report.ci import EXIT_INTERRUPTED
from pytest_quest.report.json import Output

# The options that belong to the check a combine runs, not to a shard's job.
CHECK_ONLY = ("base_ref", "base_file", "since", "require_pass")


@dataclass
class ShardRun:
    """What the job's pytest session measured, besides `Context.run` (plugin/session.py)."""

    data_filename: str | None
    config: dict[str, Any]
    measured_roots: list[str] = field(default_factory=list)
    only_files: list[str] | None = None
    notes: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    # Every test file of the project (not only the job's part), for combine to compare.
    test_digests: dict[str, str] = field(default_factory=dict)
    sandbox: str = "none"  # the sandbox the job's tests ran in ("none": unsandboxed)


def _relative(paths: list[Any], rootdir: Path) -> list[str]:
    return sorted(relpath(str(p), rootdir) if os.path.isabs(str(p)) else str(p) for p in paths)


def _portable(config: dict[str, Any]) -> dict[str, Any]:
    """`config` as a manifest stores it (JSON values: tuples become lists)."""
    value: dict[str, Any] = json.loads(json.dumps(config))
    return value


def shard_out(ctx: Context, run: ShardRun) -> Output:
    """Write this job's shard to ``--quest-shard-out`` (no ratchet write); exit as the job's tests."""
    options = ctx.options
    assert options.shard_out is not None and options.command in ("scan", "check")
    folder = Path(options.shard_out)
    shard = Shard(
        kind=options.command,
        sources=_relative(options.sources, ctx.rootdir),
        measured_roots=_relative(run.measured_roots, ctx.rootdir),
        config=_portable(run.config),
        environment=shards.environment(),
        outcomes=dict(ctx.run.outcomes),
        data_digest="",
        errors=dict(run.errors),
        collection_errors=list(ctx.run.collection_errors),
        notes=list(run.notes),
        only_files=run.only_files,
        commit=shards.head_commit(ctx.rootdir),
        test_digests=dict(run.test_digests),
    )
    shards.write_shard(folder, shard, run.data_filename, ctx.rootdir)
    where = _name(folder, ctx)
    if ctx.run.collection_errors and options.command == "scan":
        refuse_collection_errors(ctx)  # as the scan would; the shard records them too
    not_passed = sorted(n for n, o in ctx.run.outcomes.items() if o != "passed")
    failed = sorted(n for n, o in ctx.run.outcomes.items() if o in FAILED)
    lines = [
        f"{options.command} shard written to {where}: "
        f"{text.counted(len(ctx.run.outcomes), 'test')}, "
        f"{len(ctx.run.outcomes) - len(not_passed)} passed; nothing written to the ratchet file",
        "  combine the shards of every job with: pytest --quest combine DIR...",
        "  its tests ran in the gate's child, "
        + ("unsandboxed" if run.sandbox == "none" else f"in the {run.sandbox} sandbox")
        + "; combine decides from the shards",
    ]
    exitcode = 1 if failed else 0
    if ctx.run.collection_errors:  # check: what the check says of a suite that did not run
        lines.append(
            f"  {text.counted(len(ctx.run.collection_errors), 'collection error')} "
            "stopped the suite; the combine's check will say so"
        )
        exitcode = EXIT_INTERRUPTED
    data = {
        "shard": where,
        "kind": options.command,
        "tests": len(ctx.run.outcomes),
        "tests_not_passed": not_passed,
        "collection_errors": len(ctx.run.collection_errors),
    }
    return Output(data, lines, exitcode)


def _read_shards(ctx: Context) -> tuple[list[tuple[Path, str]], list[Shard]]:
    """The shard folders given, each with how messages name it, and what each holds."""
    options = ctx.options
    if not options.shards:
        raise QuestUsageError(
            "combine needs the shard folders: pytest --quest combine DIR... (each made by "
            "`pytest --quest scan --quest-shard-out DIR` or `--quest check --quest-shard-out DIR`)"
        )
    found = [(folder, _name(folder, ctx)) for folder in options.shards]
    resolved = [folder.resolve() for folder, _ in found]
    for index, (_, where) in enumerate(found):
        if resolved[index] in resolved[:index]:
            raise QuestUsageError(f"shard {where} is given twice: name each shard folder once")
    read = [shards.read_shard(folder, where) for folder, where in found]
    given = [name for name in CHECK_ONLY if getattr(options, name)]
    if read[0].kind == "scan" and given:
        flag = "--quest-" + given[0].replace("_ref", "").replace("_", "-")
        raise QuestUsageError(f"{flag} is an option of a check: these are scan shards")
    return found, read


def _checked_merge(
    ctx: Context, read: list[Shard], config: dict[str, object], sources: list[str]
) -> MergedRun:
    """The shards merged, once each was shown to be a part of one run of this tree."""
    hint = (
        f" (pytest's rootdir here is {ctx.rootdir}: run the combine from the project, "
        "with the shard folders inside it, or pass --rootdir)"
    )
    for shard in read:
        check_fits(
            shard,
            kind=read[0].kind,
            config=config,
            sources=_relative(sources, ctx.rootdir),
            environment=shards.environment(),
            rootdir_hint=hint,
        )
    check_same_tree(
        read,
        commit=shards.head_commit(ctx.rootdir),
        tests=digest_test_files(ctx.tests, ctx.rootdir),
    )
    named = {nodeid.split("::")[0] for shard in read for nodeid in shard.outcomes}
    check_tests_present(read, {name for name in named if (ctx.rootdir / name).is_file()})
    merged = merge(read)
    changed_sources(merged, shards.source_digests(ctx.rootdir, sorted(merged.source_digests)))
    return merged


def combine(ctx: Context) -> Output:
    """Merge the shards into the ratchet exactly as one scan (or check) of the whole suite would."""
    options = ctx.options
    found, read = _read_shards(ctx)
    kind = read[0].kind
    sources = resolve_sources(ctx.rootdir, [str(p) for p in options.sources])
    data_dir = tempfile.mkdtemp(prefix="pytest-quest-combine-")
    try:
        measurer = shards.combining_measurer(ctx.rootdir, sources, data_dir)
        config = _portable(coverage_settings(measurer.cov, ctx.rootdir))
        merged = _checked_merge(ctx, read, config, sources)

        def measure() -> MeasuredSource:
            shards.combine_data(measurer.cov, ctx.rootdir, found)
            with quiet_coverage():
                return analyze(
                    measurer.cov,
                    ctx.rootdir,
                    merged.passed,
                    only_files=merged.only_files,
                    notes=merged.notes,
                    failed=merged.failed,
                )

        run = RunData(
            outcomes=merged.outcomes,
            collection_errors=merged.collection_errors,
            measured_roots=[str(ctx.rootdir / root) for root in merged.measured_roots],
            analyze=measure,
        )
        inner = dataclasses.replace(
            ctx, options=dataclasses.replace(options, command=kind), run=run
        )
        output = scan(inner) if kind == "scan" else check(inner)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    if kind == "scan" and output.exitcode == 0 and merged.failed:
        output.exitcode = 1  # as a scan whose suite failed: the quests are recorded
    output.lines.insert(
        0,
        f"combine: {text.counted(len(read), kind + ' shard')}, "
        f"{text.counted(len(merged.outcomes), 'test')}, {len(merged.passed)} passed",
    )
    output.data = {**output.data, "kind": kind, "shards": [where for _, where in found]}
    return output


def _name(folder: Path, ctx: Context) -> str:
    """How messages name a shard folder: relative to where pytest was run, as it was given."""
    try:
        return relpath(str(folder), ctx.invocation_dir)
    except ValueError:  # pragma: no cover - another drive on Windows
        return str(folder)
