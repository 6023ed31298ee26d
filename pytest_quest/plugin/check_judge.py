"""check's and scan's judge in pytest: its suite run in the gate's child (app/check_run.py), its output shown.

The process that decides a check loads no project code (plugin/judge.py); here
it hands the child the user's pytest arguments, shows what the child printed,
and takes the child's outcomes and measurement as its run's.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_quest.app.check_run import (
    Incremental,
    SuiteRun,
    refuse_incomplete,
    run_suite,
    usage_error,
)
from pytest_quest.app.context import load_ratchet, resolve_sources
from pytest_quest.engine import incremental as records
from pytest_quest.plugin.judge import handover, suite_args
from pytest_quest.report.json import Output

if TYPE_CHECKING:
    from pytest_quest.app.context import Context
    from pytest_quest.app.options import QuestOptions
    from pytest_quest.core.model import Ratchet


def run_suite_in_child(
    config: pytest.Config,
    options: QuestOptions,
    ctx: Context,
    ratchet: Ratchet | None,
    roots: list[str] | None,
    *,
    shard_data: Path | None = None,
) -> SuiteRun:
    """Run the suite in the gate's child, shown as it printed it (a usage error without a report).

    `ratchet`: as read before the run (None: read now, or none yet for a first
    scan); `roots`: the folders a check given no path collects (None: pytest's);
    `shard_data`: a shard job's, where the child leaves its coverage data.
    """
    # A missing source is the user's error, said before any test runs (as the measurer says it).
    given_sources = [str(s) for s in config.getoption("quest_source", default=None) or []]
    resolve_sources(ctx.rootdir, given_sources or list(config.getini("quest_source") or []))
    if ratchet is None and (options.command == "check" or ctx.store.exists()):
        ratchet = load_ratchet(ctx)
    given = handover()
    raw = given.args if given is not None else [str(a) for a in config.invocation_params.args]
    args = suite_args(config, raw) + (roots or [])
    path = options.run_data or records.default_path(options.quest_file)
    # audit measures the whole suite every time, and records no run.
    auditing = options.command == "audit"
    incremental = (
        None
        if auditing
        else Incremental(path, options.quest_file, options.full, raw, options.shard_out)
    )
    # What the judge writes after the run: a child's writes to them are put back.  Not the
    # ratchet file: a submit may write it meanwhile (its lock), and a PASS a judged run
    # wrote there is sealed by nothing (docs/judge.md, forged PASS entries); in the
    # sandbox it is read-only.
    kept = [] if auditing else [path]
    if options.export_to:
        kept.append(Path(ctx.invocation_dir) / options.export_to)
    policy = ratchet.policy if ratchet is not None else None
    suite = run_suite(
        ctx,
        policy,
        args=args,
        incremental=incremental,
        kept=kept,
        sources=given_sources,
        shard_data=shard_data,
    )
    # A usage error goes where pytest's go (stderr); the judge's lines say it again.
    _show(options.json or usage_error(suite) is not None, suite.output)
    refuse_incomplete(suite, options.command or "check")
    return suite


def _show(to_stderr: bool, output: str) -> None:
    """What the child printed (pytest's report of the suite), where pytest's own output goes."""
    if not output:
        return
    stream = sys.stderr if to_stderr else sys.stdout
    stream.write(output if output.endswith("\n") else output + "\n")
    stream.flush()


def finish_judged(suite: SuiteRun, output: Output) -> None:
    """The sandbox the suite ran in; the child's incremental part: its lines said, its record
    written here (a whole run)."""
    output.data["sandbox"] = suite.sandbox
    if output.exitcode == 4:
        return
    output.lines[:0] = suite.lines
    if suite.data is not None:
        output.data["run"] = suite.data
    if suite.record is None or not suite.whole or suite.path is None:
        return
    try:
        records.save(suite.path, suite.record)
    except OSError as exc:
        output.lines.append(f"warning: the run record {suite.path} was not written: {exc}")
