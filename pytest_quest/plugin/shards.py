"""A CI job's shard (``--quest-shard-out``): what its gate child hands over, what its judge writes.

The job's tests run in the gate's measuring child, as a check's do
(app/check_run.py); the child leaves its coverage data where its judge
said and reports its settings over the channel; the judge writes the shard
(app/shard.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pytest_quest.app.check_run import SuiteRun
from pytest_quest.app.shard import ShardRun
from pytest_quest.engine.measure import Measurement, coverage_settings, quiet_coverage


def hand_over_data(
    measurer: Measurement,
    rootdir: Path,
    data: str,
    *,
    measured_roots: list[str],
    notes: list[str],
    only_files: list[str] | None,
) -> dict[str, Any]:
    """The child's part: its saved coverage data copied to `data`; its settings, for the judge.

    `measured_roots`: what the measurer measured (`QuestSession.measured_roots`);
    `only_files`: ``--quest-measure-only`` as given (None: the measurer's own).
    """
    cov = measurer.cov
    with quiet_coverage():
        data_filename = cov.get_data().data_filename()
    copied = False
    if data_filename and Path(data_filename).is_file():
        shutil.copyfile(data_filename, data)
        copied = True
    return {
        "copied": copied,
        "config": coverage_settings(cov, rootdir),
        "measured_roots": list(measured_roots),
        "only_files": only_files if only_files is not None else measurer.only_files(),
        "notes": list(notes),
    }


def shard_run(
    suite: SuiteRun, data: Path, *, errors: dict[str, str], test_digests: dict[str, str]
) -> ShardRun:
    """The shard of the job whose child reported `suite` and left its data at `data`.

    `test_digests`: the whole project's test files (testpaths, else the
    rootdir), not the job's arguments: every shard of one tree records the same set.
    """
    given = suite.shard if isinstance(suite.shard, dict) else {}
    config = given.get("config")
    roots = given.get("measured_roots")
    only = given.get("only_files")
    notes = given.get("notes")
    return ShardRun(
        data_filename=str(data) if given.get("copied") is True and data.is_file() else None,
        config=config if isinstance(config, dict) else {},
        measured_roots=[str(root) for root in roots] if isinstance(roots, list) else [],
        only_files=[str(name) for name in only] if isinstance(only, list) else None,
        notes=[str(note) for note in notes] if isinstance(notes, list) else [],
        errors=dict(errors),
        test_digests=test_digests,
        sandbox=suite.sandbox,
    )
