"""What a CI job's session hands to app/shard.py for ``--quest-shard-out``: its measured data."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_quest.app.shard import ShardRun
from pytest_quest.engine.measure import coverage_settings, quiet_coverage
from pytest_quest.engine.testfiles import digest_test_files
from pytest_quest.plugin.invocation import search_for_tests

if TYPE_CHECKING:
    from pytest_quest.plugin.session import QuestSession


def shard_run(session: QuestSession) -> ShardRun:
    """The job's coverage data file (saved, xdist workers' combined in), settings and notes."""
    measurer = session.measurer
    if measurer is None:  # pragma: no cover - scan and check always measure
        return ShardRun(data_filename=None, config={}, errors=dict(session.errors))
    cov = measurer.cov
    with quiet_coverage():
        data_filename = cov.get_data().data_filename()
    only = session.config.getoption("quest_measure_only", default=None)
    return ShardRun(
        data_filename=data_filename,
        config=coverage_settings(cov, session.rootdir),
        measured_roots=session.measured_roots(),
        only_files=only if only is not None else measurer.only_files(),
        notes=list(getattr(measurer, "notes", [])),
        errors=dict(session.errors),
        # The whole project's test files (testpaths, else the rootdir), not the job's
        # arguments: every shard of one tree records the same set.
        test_digests=digest_test_files(
            search_for_tests(session.config, use_args=False), session.rootdir
        ),
    )


__all__ = ["shard_run"]
