"""check's judge in pytest: its suite run in the gate's child (app/check_run.py), its output shown.

The process that decides a check loads no project code (plugin/judge.py); here
it hands the child the user's pytest arguments, shows what the child printed,
and takes the child's outcomes and measurement as its run's.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_quest.app.check_run import Incremental, SuiteRun, refuse_incomplete, run_suite
from pytest_quest.app.context import load_ratchet
from pytest_quest.engine import incremental as records
from pytest_quest.plugin.judge import handover, suite_args
from pytest_quest.report.json import Output

if TYPE_CHECKING:
    from pytest_quest.plugin.session import QuestSession


def run_suite_in_child(session: QuestSession) -> SuiteRun:
    """Run the suite in the gate's child; its run becomes `session`'s (a usage error if none)."""
    config, options = session.config, session.options
    ctx = session.context()
    ratchet = session.inputs.ratchet if session.inputs is not None else None
    ratchet = ratchet or load_ratchet(ctx)
    given = handover()
    raw = given.args if given is not None else [str(a) for a in config.invocation_params.args]
    args = suite_args(config, raw)
    roots = session.scanned_roots(config)
    if roots is not None:
        args += roots
    path = options.run_data or records.default_path(options.quest_file)
    incremental = Incremental(path, options.quest_file, options.full, raw)
    kept = [path]
    if options.export_to:
        kept.append(Path(ctx.invocation_dir) / options.export_to)
    suite = run_suite(ctx, ratchet, args=args, incremental=incremental, kept=kept)
    _show(session, suite.output)
    refuse_incomplete(suite)
    run = suite.run
    session.outcomes.update(run.outcomes)
    session.errors.update(run.errors)
    session.collection_errors[:] = run.collection_errors
    session.deselected = suite.deselected
    return suite


def _show(session: QuestSession, output: str) -> None:
    """What the child printed (pytest's report of the suite), where pytest's own output goes."""
    if not output:
        return
    stream = sys.stderr if session.options.json else sys.stdout
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


__all__ = ["finish_judged", "run_suite_in_child"]
