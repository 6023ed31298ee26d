"""The gate's test run in a child pytest process: a hang or crash there is REVIEW, not ours.

The child measures like a scan and sends its facts over the judge's channel (engine/channel.py).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pytest_quest.core.environment import environment_cause
from pytest_quest.core.model import FunctionFacts
from pytest_quest.core.run import CollectionError, RunReport
from pytest_quest.engine import sandbox
from pytest_quest.engine.channel import CHILD_ARGUMENT, JudgeChannel, Received
from pytest_quest.engine.created_files import CREATED_ENV
from pytest_quest.engine.gate_signals import SIGNALS_ENV
from pytest_quest.engine.measure import MeasuredSource
from pytest_quest.engine.processes import SUITE_GRACE, child_env, run_in_own_session


def measured_to_dict(measured: MeasuredSource, run: RunReport) -> dict[str, Any]:
    return {
        "functions": [asdict(facts) for facts in measured.functions],
        "excluded_functions": measured.excluded_functions,
        "files": measured.files,
        "config": measured.config,
        "notes": measured.notes,
        # The changed-lines rule's (app/since.py): per file, sorted line numbers.
        "lines": {
            name: {
                "statements": sorted(measured.statements.get(name, ())),
                "tested": sorted(measured.tested_lines.get(name, ())),
                "ran": sorted(measured.ran_lines.get(name, ())),
            }
            for name in measured.statements
        },
        "outcomes": run.outcomes,
        "errors": run.errors,
        "collection_errors": [asdict(error) for error in run.collection_errors],
    }


def measured_from_dict(data: dict[str, Any]) -> tuple[MeasuredSource, RunReport]:
    functions = []
    for item in data["functions"]:
        item = dict(item)
        item["missing_branches"] = [tuple(arc) for arc in item["missing_branches"]]
        item["failing_branches"] = [tuple(arc) for arc in item.get("failing_branches", [])]
        functions.append(FunctionFacts(**item))
    measured = MeasuredSource(
        functions=functions,
        excluded_functions=list(data["excluded_functions"]),
        files=list(data["files"]),
        config=dict(data["config"]),
        notes=[str(note) for note in data.get("notes", [])],
    )
    for name, lines in dict(data.get("lines") or {}).items():
        measured.statements[str(name)] = frozenset(int(n) for n in lines["statements"])
        measured.tested_lines[str(name)] = frozenset(int(n) for n in lines["tested"])
        measured.ran_lines[str(name)] = frozenset(int(n) for n in lines["ran"])
    run = RunReport(
        outcomes=dict(data["outcomes"]),
        errors={str(k): str(v) for k, v in dict(data.get("errors") or {}).items()},
        collection_errors=[CollectionError(**error) for error in data["collection_errors"]],
    )
    return measured, run


# Loaded in every gate child, measuring or mutating: the same ``-p`` set in both.
CHILD_PLUGIN = "pytest_quest.plugin.mutation_child"
# Given to every gate child (the options of all of them alike): the mutation
# child's fresh runs (plugin/fresh_kill.py) import pytest_quest before pytest,
# through coverage.py's start-up hook, and pytest warns it cannot rewrite it; a
# project's `filterwarnings = error` made that a crash, and honest submits REVIEW.
REWRITE_WARNING = "ignore::pytest.PytestAssertRewriteWarning"


def child_command(
    *,
    rootdir: Path,
    inifile: Path | None,
    plugin_args: list[str],
    channel: str,
    terse: bool = True,
) -> list[str]:
    """The command line of every gate child, measuring or mutating: the same in both roles.

    What differs between the roles (which tests, which sources are measured,
    ``-n 0`` and ``--no-cov`` for the mutation child) comes over the judge's
    channel (`gate_handshake`; plugin/mutation_child.py applies it), so that
    no test can tell the runs apart by ``sys.argv``.
    """
    command = [sys.executable, "-m", "pytest"]
    if terse:  # not for check's suite run, whose report the user reads as pytest's own
        # --tb=native: a killed mutant's failure report is made, never shown;
        # pytest's own traceback rendering costs more than many a test.
        command += ["-q", "--tb=native"]
    command += [
        "-W",
        REWRITE_WARNING,
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(rootdir),
    ]
    if inifile is not None:
        command += ["-c", str(inifile)]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        command += ["-p", "pytest_quest.plugin.hooks"]  # its ini options are in the user's config
    command += plugin_args
    command += ["-p", CHILD_PLUGIN]
    return [*command, "--quest-channel", channel]


def gate_handshake(
    role: str,
    selection: list[str],
    *,
    sources: Sequence[Path] = (),
    only_files: Sequence[str] = (),
    **rest: Any,
) -> dict[str, Any]:
    """A gate child's instructions: its role, the tests to collect, the sources it measures."""
    return {
        "role": role,
        "selection": list(selection),
        "sources": [str(source) for source in sources],
        "measure_only": list(only_files),
        **rest,
    }


@dataclass
class ChannelRun:
    """One gate child run over the judge's channel: how it ended and what it sent."""

    returncode: int | None  # None: it exceeded the timeout and its tree was killed
    received: Received
    output: str
    duration: float

    def tail(self) -> str:
        """The last three lines of the child's output, for a crash's problem text."""
        return " | ".join(self.output.strip().splitlines()[-3:])


#: Where a gate child makes its temporary data folder (the judge's work folder for it).
DATA_PARENT_ENV = "PYTEST_QUEST_DATA_PARENT"
#: The variables naming the files a judged process writes its refusals in
#: (engine/guard.py's REFUSED_ENV, signals, created files): bound into a sandbox.
JUDGED_LOGS = ("PYTEST_QUEST_REFUSED", SIGNALS_ENV, CREATED_ENV)
#: engine/guard.py's PROTECT_ENV and REFUSED_ENV: the ratchet file the judged may not write.
JUDGED_RATCHET_ENV = ("PYTEST_QUEST_PROTECT", "PYTEST_QUEST_REFUSED")


#: coverage.py's data file of a ``coverage run``/pytest-cov (``COVERAGE_FILE``), and the
#: serialised configuration its subprocess measurement hands on (``COVERAGE_PROCESS_CONFIG``,
#: kept in a gate child only under this project's own measured test run, engine/processes.py).
_DATA_FILE_ENV, _PROCESS_CONFIG_ENV = "COVERAGE_FILE", "COVERAGE_PROCESS_CONFIG"


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def coverage_outputs(
    env: dict[str, str], workdir: Path, project: Path, *, keep_writes: bool
) -> list[tuple[Path, Path, str]]:
    """Move the coverage data files a sandboxed run would lose into `workdir`; what to copy back.

    A data file named by ``COVERAGE_FILE`` outside the project would be lost
    or refused in the sandbox; it goes to `workdir` instead and the judge copies
    it back (`copy_coverage_outputs`), opening no user folder to the judged.
    `env` is changed in place.  Returns (redirected folder, user's folder, name).
    """
    moved: list[tuple[Path, Path, str]] = []
    root = Path(os.path.abspath(project))

    def redirected(name: str, target: Path) -> str:
        folder = workdir / name
        folder.mkdir()
        moved.append((folder, target.parent, target.name))
        return str(folder / target.name)

    given = env.get(_DATA_FILE_ENV)
    if given and keep_writes:
        target = Path(os.path.abspath(given))
        if not _inside(target, root):
            env[_DATA_FILE_ENV] = redirected("coverage-file", target)
    raw = env.get(_PROCESS_CONFIG_ENV)
    if raw:
        try:
            config = json.loads(base64.b64decode(raw))
            target = Path(config["data_file"])
        except (ValueError, KeyError, TypeError):
            return moved
        if target.is_absolute() and not (keep_writes and _inside(target, root)):
            config["data_file"] = redirected("coverage-process", target)
            env[_PROCESS_CONFIG_ENV] = base64.b64encode(json.dumps(config).encode()).decode()
    return moved


def copy_coverage_outputs(moved: list[tuple[Path, Path, str]]) -> None:
    """Copy what the run saved in the redirected folders to the user's: data files only."""
    for folder, destination, name in moved:
        for path in sorted(folder.iterdir()):
            ours = path.name == name or path.name.startswith(name + ".")
            if ours and not path.is_symlink() and path.is_file() and destination.is_dir():
                shutil.copyfile(path, destination / path.name)


def overlay_key(project: Path) -> dict[str, str]:
    """The instruction that the project is a throwaway layer in the run, where it is.

    A mutation child writes its mutants into the project's files there
    (engine/ondisk.py checks the mount too).
    """
    engine = sandbox.active()
    return {"overlay": str(project)} if engine is not None and engine.overlay else {}


def run_over_channel(
    handshake: dict[str, Any],
    command: Callable[[str], list[str]],
    *,
    cwd: Path,
    timeout: float,
    bound: tuple[str, ...] | tuple[Path, ...] = (),
    channel: JudgeChannel | None = None,
    project: Path | None = None,
    keep_writes: bool = False,
    whole_output: bool = False,
) -> ChannelRun:
    """Run the gate child `command(channel argument)` in its own session, its channel open.

    The child gets `handshake` over a fresh judge channel (or the caller's
    `channel`) and at most `timeout` seconds.  In the sandbox, `project`
    (default `cwd`) is where it may write (thrown away unless `keep_writes`)
    and `bound` the folders the judge reads back.  It is stopped once its
    report is in, unless `whole_output` (check's run, whose summary follows).
    """
    engine = sandbox.active()
    if not keep_writes:
        handshake = {**handshake, **overlay_key(project or cwd)}
    # Named alike for every role: the folder's name is seen by the tests (DATA_PARENT_ENV).
    with tempfile.TemporaryDirectory(prefix="pytest-quest-gate-") as workdir:
        channel = channel if channel is not None else JudgeChannel(handshake)
        scratch = sandbox.scratch_folder()
        try:
            argv = command(CHILD_ARGUMENT)  # the shim moves the channel there
            log_path = Path(workdir) / "output.txt"
            started = time.monotonic()
            env = child_env()
            # The child's coverage data folder goes in here: removed with it even
            # when the child is killed (a timeout, SIGTERM to the judge).
            env[DATA_PARENT_ENV] = workdir
            moved: list[tuple[Path, Path, str]] = []
            if engine is not None:
                argv, env, moved = _confined(
                    engine, argv, env, Path(workdir), scratch, project or cwd, bound, keep_writes
                )
            returncode = run_in_own_session(
                argv,
                cwd=cwd,
                env=env,
                log_path=log_path,
                timeout=timeout,
                channel=channel.child_fds,
                on_start=channel.started,
                reported=channel.reported,
                finished=None if whole_output else channel.finished,
                grace=SUITE_GRACE if whole_output else None,
            )
            received = channel.receive()
            copy_coverage_outputs(moved)
        finally:
            channel.close()
            sandbox.remove(scratch)
        duration = time.monotonic() - started
        output = log_path.read_text(encoding="utf-8", errors="replace")
    return ChannelRun(returncode, received, output, duration)


def _confined(
    engine: sandbox.Sandbox,
    argv: list[str],
    env: dict[str, str],
    workdir: Path,
    scratch: Path,
    project: Path,
    bound: tuple[str, ...] | tuple[Path, ...],
    keep_writes: bool,
) -> tuple[list[str], dict[str, str], list[tuple[Path, Path, str]]]:
    """`argv` and `env` wrapped by `engine`; the coverage data to copy back after the run."""
    if engine.contains_signals:
        # No signal leaves the sandbox: the judged need no watch on theirs
        # (engine/gate_signals.py), which refuses a pool's own SIGTERMs too.
        env.pop(SIGNALS_ENV, None)
    if engine.throwaway:
        # The ratchet file, its locks and records are read-only or hidden
        # inside: no audit hook guards them in the judged (engine/guard.py).
        for name in JUDGED_RATCHET_ENV:
            env.pop(name, None)
    moved = coverage_outputs(env, workdir, project, keep_writes=keep_writes)
    # The judge's logs of what the judged tried (engine/guard.py) are written inside.
    logs = [env.get(name, "") for name in JUDGED_LOGS]
    kept = (workdir, *bound, *logs)
    confined = sandbox.confinement(
        project, scratch, tuple(Path(path) for path in kept if path), keep_writes=keep_writes
    )
    return engine.wrap(argv, confined), engine.environment(env, confined), moved


def run_child(
    selection: list[str],
    *,
    rootdir: Path,
    inifile: Path | None,
    sources: list[Path],
    only_files: list[str],
    timeout: float,
    cwd: Path,
    plugin_args: list[str] | None = None,
    subprocesses: bool = True,
) -> tuple[RunReport, MeasuredSource | None]:
    """Run `selection` (node ids or files) in a child pytest under coverage.

    Returns the run's report and, when it completed, its measurement.  A
    timeout or a crash gives ``completed=False`` with the problem stated; a
    report that is not the child's one message gives ``tampered`` too.
    """
    # The folder the processes the tests start write their data into: made
    # here (the judge), named to the child over the channel, removed here.
    children_dir = tempfile.mkdtemp(prefix="pytest-quest-children-")
    try:
        handshake = gate_handshake(
            "measure",
            selection,
            sources=sources,
            only_files=only_files,
            subprocesses=subprocesses,
            children_dir=children_dir,
        )
        ran = run_over_channel(
            handshake,
            lambda channel: child_command(
                rootdir=rootdir, inifile=inifile, plugin_args=plugin_args or [], channel=channel
            ),
            cwd=cwd,
            timeout=timeout,
            bound=(children_dir,),
        )
    finally:
        shutil.rmtree(children_dir, ignore_errors=True)
    return measured_report(ran, timeout)


def measured_report(ran: ChannelRun, timeout: float) -> tuple[RunReport, MeasuredSource | None]:
    duration, received = ran.duration, ran.received
    if ran.returncode is None:
        return (
            RunReport(
                completed=False,
                problem=f"the test run exceeded --quest-timeout ({timeout:g}s) and was stopped",
                duration=duration,
            ),
            None,
        )
    if received.tampered:
        return (
            RunReport(
                completed=False,
                problem=f"the test runner's report was tampered with: {received.tampered}",
                tampered=received.tampered,
                duration=duration,
            ),
            None,
        )
    if received.payload is None:
        cause = environment_cause(ran.returncode, ran.output)
        rows = [line for line in ran.output.strip().splitlines() if line.strip()]
        return (
            RunReport(
                completed=False,
                problem=(
                    f"the test run could not complete: {cause}; last output: {ran.tail() or '(none)'}"
                    if cause
                    else f"the test runner crashed (exit status {ran.returncode}): {ran.tail()}"
                ),
                duration=duration,
                environment=cause,
                output_tail=rows[-5:],
            ),
            None,
        )
    try:
        measured, run = measured_from_dict(received.payload)
    except (ValueError, KeyError, TypeError) as exc:
        return (
            RunReport(
                completed=False,
                problem=f"the test runner's facts were unreadable: {exc}",
                tampered=f"a message of the wrong shape ({exc})",
                duration=duration,
            ),
            None,
        )
    run.duration = duration
    return run, measured
