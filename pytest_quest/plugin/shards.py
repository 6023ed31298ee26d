"""What a CI job's session hands to app/shard.py for ``--quest-shard-out``: its measured data."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.app.shard import ShardRun
from pytest_quest.engine.measure import Measurement, coverage_settings, quiet_coverage


def shard_run(
    measurer: Measurement | None,
    *,
    rootdir: Path,
    measured_roots: list[str],
    only_files: list[str] | None,
    errors: dict[str, str],
    test_digests: dict[str, str],
) -> ShardRun:
    """The job's coverage data file (saved, xdist workers' combined in), settings and notes.

    `only_files` is ``--quest-measure-only`` as given (None: the measurer's own);
    `test_digests` the whole project's test files (testpaths, else the rootdir), not the
    job's arguments: every shard of one tree records the same set.
    """
    if measurer is None:  # pragma: no cover - scan and check always measure
        return ShardRun(data_filename=None, config={}, errors=dict(errors))
    cov = measurer.cov
    with quiet_coverage():
        data_filename = cov.get_data().data_filename()
    return ShardRun(
        data_filename=data_filename,
        config=coverage_settings(cov, rootdir),
        measured_roots=measured_roots,
        only_files=only_files if only_files is not None else measurer.only_files(),
        notes=list(getattr(measurer, "notes", [])),
        errors=dict(errors),
        test_digests=test_digests,
    )


__all__ = ["shard_run"]
