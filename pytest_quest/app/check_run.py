"""The suite run of `check`, `scan` and `audit` (a shard job's too), judged from outside.

The process that decides loaded no project code (plugin/judge.py, as for
`submit`); the suite runs in the gate's measuring child (engine/runner.py
`run_over_channel`), in the sandbox the recorded policy asks for, and what it
measured reaches this process only over the judge's channel.  The judge
writes the run record, the export and a shard job's shard after the child
ended; what the child left at the record's and the export's paths is put back
first.
docs/judge.md, "check and scan decide outside the suite too", says what this
blocks and what it cannot.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_quest.app.context import Context
from pytest_quest.app.sandbox import enter_sandbox
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.policy import GatePolicy
from pytest_quest.core.run import RunReport
from pytest_quest.engine import incremental as records
from pytest_quest.engine.measure import MeasuredSource
from pytest_quest.engine.runner import child_command, measured_report, run_over_channel

#: The suite's whole run gets this long (seconds) unless a check's ``--quest-timeout`` says
#: otherwise: a check runs every test, as pytest does, with no budget of the gate's.
SUITE_TIMEOUT = 7 * 24 * 3600.0
#: pytest's exit status for a usage error (``pytest.ExitCode.USAGE_ERROR``).
USAGE_ERROR = 4


@dataclass
class SuiteRun:
    """What the check's child reported: its run, its measurement, its output, its incremental part."""

    run: RunReport
    measured: MeasuredSource | None
    output: str
    sandbox: str
    # The child's incremental part: lines and data to show, and the record it made (a body).
    lines: list[str] = field(default_factory=list)
    data: dict[str, Any] | None = None
    record: records.RunRecord | None = None
    whole: bool = False
    path: Path | None = None  # where the record is written
    deselected: int = 0  # tests the selection left out (-k, -m, --deselect)
    returncode: int | None = None  # the child's exit status (None: stopped at the timeout)
    # A shard job's child: its data's settings (plugin/shards.py).
    shard: dict[str, Any] | None = None
    seconds: dict[str, float] = field(default_factory=dict)  # each test's time in the run


@dataclass
class Incremental:
    """What the child's incremental run needs: where the record is, the user's arguments."""

    path: Path
    quest_file: Path
    full: bool
    arguments: list[str]
    shard_out: Path | None = None  # a shard job's output folder: no input of the next run

    def instructions(self) -> dict[str, Any]:
        given: dict[str, Any] = {
            "path": str(self.path),
            "quest_file": str(self.quest_file),
            "full": self.full,
            "arguments": list(self.arguments),
        }
        if self.shard_out is not None:
            given["shard_out"] = str(self.shard_out)
        return given


def run_suite(
    ctx: Context,
    policy: GatePolicy | None,
    *,
    args: list[str],
    incremental: Incremental | None,
    kept: list[Path],
    sources: list[str] | None = None,
    shard_data: Path | None = None,
) -> SuiteRun:
    """Run the suite (`args`: the user's pytest arguments less pytest-quest's) in the gate's child,
    in the sandbox `policy` asks for (the recorded one; None: a first scan's).

    `kept`: files the check writes itself (the run record, the export); a child's
    writes to them are undone before this returns.  `sources`: ``--quest-source``'s
    values as given.  `shard_data`: a shard job's, where the child leaves its
    coverage data (in a folder of the judge's, writable inside the sandbox).
    """
    engine = enter_sandbox(ctx, policy)  # a first scan's: the one it records
    children_dir = tempfile.mkdtemp(prefix="pytest-quest-children-")
    handshake = _handshake(ctx, policy, children_dir, sources, incremental, shard_data)
    bound = [Path(children_dir), *([shard_data.parent] if shard_data is not None else [])]
    before = {path: _read(path) for path in kept}
    # A scan's --quest-timeout is the policy it records (the gate's timeout floor), never
    # a budget for the scan's own run: a scan runs the suite to its end, as pytest does.
    given = "quest_timeout" in (ctx.options.given or frozenset())
    timeout = ctx.options.timeout if given and ctx.options.command != "scan" else SUITE_TIMEOUT
    options, rest = _split_at_dashes(args)
    try:
        ran = run_over_channel(
            handshake,
            lambda channel: [
                *child_command(
                    rootdir=ctx.rootdir,
                    inifile=ctx.child.inifile,
                    plugin_args=options,
                    channel=channel,
                    terse=False,
                ),
                *rest,
            ],
            cwd=ctx.invocation_dir,
            project=ctx.rootdir,
            # What the suite writes in the project stays, as in a plain pytest run
            # (pytest-cov's reports); the ratchet file stays read-only, and the
            # files the judge writes are put back below.
            keep_writes=True,
            whole_output=True,
            timeout=timeout,
            bound=tuple(bound),
        )
    finally:
        shutil.rmtree(children_dir, ignore_errors=True)
        for path, data in before.items():
            _put_back(path, data)
    run, measured = measured_report(ran, timeout)
    suite = SuiteRun(run, measured, ran.output, engine, returncode=ran.returncode)
    payload = ran.received.payload
    if run.completed and payload is not None:
        deselected = payload.get("deselected")
        suite.deselected = deselected if isinstance(deselected, int) else 0
        shard = payload.get("shard")
        suite.shard = shard if isinstance(shard, dict) else None
        suite.seconds = _seconds(payload.get("seconds"))
        if suite.measured is not None:
            suite.measured.line_tests = _line_tests(payload.get("line_tests"))
        if incremental is not None:
            suite.path = incremental.path
            _incremental_part(suite, payload.get("incremental"))
    return suite


def _handshake(
    ctx: Context,
    policy: GatePolicy | None,
    children_dir: str,
    sources: list[str] | None,
    incremental: Incremental | None,
    shard_data: Path | None,
) -> dict[str, Any]:
    """The measuring child's instructions (`run_suite`'s arguments)."""
    handshake: dict[str, Any] = {
        "role": "measure",
        "subprocesses": policy.subprocesses if policy is not None else True,
        "children_dir": children_dir,
    }
    if sources:  # given on the command line: the child reads the rest from the ini, the policy
        handshake["sources"] = list(sources)
    if incremental is not None:
        handshake["incremental"] = incremental.instructions()
    if shard_data is not None:
        handshake["shard"] = {"data": str(shard_data)}
    if ctx.options.command == "audit":
        handshake["line_tests"] = True  # its mutation children run the tests of each line
    return handshake


def _seconds(given: Any) -> dict[str, float]:
    """The child's per-test times; a malformed entry is left out (an untimed test)."""
    if not isinstance(given, dict):
        return {}
    return {
        str(test): float(value)
        for test, value in given.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    }


def _line_tests(given: Any) -> dict[str, dict[int, set[str]]]:
    """The child's tests per line per file (audit's); a malformed part is left out."""
    if not isinstance(given, dict):
        return {}
    found: dict[str, dict[int, set[str]]] = {}
    for name, lines in given.items():
        if not isinstance(lines, dict):
            continue
        found[str(name)] = {
            int(line): {str(test) for test in tests}
            for line, tests in lines.items()
            if str(line).isdigit() and isinstance(tests, list)
        }
    return found


def _split_at_dashes(args: list[str]) -> tuple[list[str], list[str]]:
    """`args` before ``--`` and from it on: what follows ``--`` stays last on the command line."""
    if "--" not in args:
        return list(args), []
    at = args.index("--")
    return args[:at], args[at:]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _put_back(path: Path, data: bytes | None) -> None:
    """`path` as it was before the child ran (its bytes, or no file)."""
    if _read(path) == data:
        return
    try:
        if data is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    except OSError:
        pass  # a folder now in its place: the check's own write reports it


def _incremental_part(suite: SuiteRun, part: Any) -> None:
    """Read the child's incremental part; a malformed one is no record (a full run next time)."""
    if not isinstance(part, dict):
        return
    lines = part.get("lines")
    suite.lines = [str(line) for line in lines] if isinstance(lines, list) else []
    data = part.get("data")
    suite.data = data if isinstance(data, dict) else None
    suite.whole = part.get("whole") is True
    body = part.get("record")
    if body is not None:
        record = records.from_body(body, "the check's child")
        if isinstance(record, records.RunRecord):
            suite.record = record
            return
        suite.lines.append(f"warning: the run record was not written: {record}")


def usage_error(suite: SuiteRun) -> str | None:
    """The child's usage error (exit 4, no report: pytest's or pytest-quest's ``ERROR:`` line)."""
    if suite.returncode != USAGE_ERROR or suite.run.completed:
        return None
    said = [
        line[len("ERROR: ") :] for line in suite.output.splitlines() if line.startswith("ERROR: ")
    ]
    return said[-1] if said else None


def refuse_incomplete(suite: SuiteRun, command: str = "check") -> None:
    """A usage error (exit 4, nothing judged) for a child run that gave no measurement;
    `command` names the command in it."""
    if suite.run.completed and suite.measured is not None:
        return
    said = usage_error(suite)
    if said is not None:
        raise QuestUsageError(said)
    problem = suite.run.problem or "the test run did not complete"
    raise QuestUsageError(f"{command}: the suite's run gave no result to judge: {problem}")
