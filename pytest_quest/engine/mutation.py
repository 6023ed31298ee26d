"""The mutation check's parent side: run the mutation child for some functions, read its report.

One child pytest process runs every function's baseline and mutants (see plugin/mutation_child.py).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_quest.core.environment import environment_cause
from pytest_quest.engine import prestart
from pytest_quest.engine.clean_search import Judged, SearchPath, judged, search_cleanly
from pytest_quest.engine.runner import ChannelRun, child_command, gate_handshake, run_over_channel


@dataclass
class MutationReport:
    """What the mutation child found for one function."""

    completed: bool = True
    problem: str = ""
    runs: list[dict[str, str]] = field(default_factory=list)
    run_seconds: list[float] = field(default_factory=list)
    mutants: list[dict[str, Any]] = field(default_factory=list)
    duration: float = 0.0
    # What the child's report was, when it was not its own (nothing else is then believed).
    tampered: str = ""
    # Why the child could not complete, when the cause lies outside the
    # submission (core/environment.py); and the last lines of its output then.
    environment: str = ""
    output_tail: list[str] = field(default_factory=list)
    # Covering tests that reached the original function in the probe runs,
    # and those that failed against it there (the probe runs are among the mutants).
    original_reached: list[str] = field(default_factory=list)
    detects_run: list[str] = field(default_factory=list)
    # Covering tests that made their own copy of the function during the
    # probe and mutant runs (engine/own_copy.py), each with how.
    own_copy: dict[str, str] = field(default_factory=dict)
    # Killing tests whose kill did not hold in a fresh process (plugin/fresh_kill.py).
    kill_unconfirmed: dict[str, str] = field(default_factory=dict)
    # Killing tests that failed as well with the original in the child's process while the
    # function's file held the mutant (plugin/mutation_child.py `_outside`): test -> mutant.
    kill_outside: dict[str, str] = field(default_factory=dict)
    # Per covering test that did not pass in some baseline run: each run's first
    # error line ("" where it passed), in the runs' order.
    errors: dict[str, list[str]] = field(default_factory=dict)
    # Tests that read a file an earlier run created (engine/created_files.py).
    stale_reads: dict[str, str] = field(default_factory=dict)
    probed: bool = False
    # The project's L1 hook results from the child, ``{"verdict", "fact"}``
    # dicts (None: the hooks were not asked, or the child gave no answer).
    l1: list[dict[str, Any]] | None = None
    # The project's plugin verifiers' answers (``l1["verify"]`` asked them), as dicts.
    answers: list[dict[str, Any]] | None = None
    # Seconds per phase of the check in the child (baseline, plan, probe,
    # killed, survived, observe, outside, other): where its time went.
    phases: dict[str, float] = field(default_factory=dict)

    def unstable(self, first: dict[str, str] | None = None) -> list[str]:
        """Tests whose outcome differs between runs (`first`: an earlier run's outcomes).

        Only outcomes observed count: a test absent from a run (not selected,
        not collected there) is no outcome, and never makes a test flaky.
        """
        runs = list(self.runs)
        names = sorted(set().union(*runs)) if runs else []
        found = []
        for name in names:
            seen = {run[name] for run in runs if name in run}
            if first is not None and name in first:
                seen.add(first[name])
            if len(seen) > 1:
                found.append(name)
        return found

    def outcomes_of(self, name: str, first: dict[str, str] | None = None) -> list[str]:
        """Test `name`'s outcome in each run (`first`'s first), with the run's error line."""
        seen = [first[name]] if first is not None and name in first else []
        errors = self.errors.get(name, [])
        for number, run in enumerate(self.runs):
            if name in run:
                error = errors[number] if number < len(errors) else ""
                seen.append(f"{run[name]} ({error})" if error else run[name])
        return seen

    def passed_again(self) -> bool:
        """Whether some covering test passed in every run of the child."""
        if not self.runs:
            return False
        return any(all(run.get(name) == "passed" for run in self.runs) for name in self.runs[0])

    def survivors(self) -> list[dict[str, Any]]:
        return [m for m in self.mutants if m.get("status") == "survived"]


def mutation_command(
    *, rootdir: Path, inifile: Path | None, plugin_args: list[str], channel: str
) -> list[str]:
    """The mutation child's command line: the measuring child's (engine/runner.py), the same."""
    return child_command(rootdir=rootdir, inifile=inifile, plugin_args=plugin_args, channel=channel)


@dataclass(frozen=True)
class Target:
    """One function to check: its file, the line of its ``def``, its covering tests."""

    file: Path
    start: int
    nodeids: tuple[str, ...]
    seed: str = ""
    # The operators to plan (None: the planner's default set).
    operators: tuple[str, ...] | None = None
    # Only these planned mutants (their ids; None: all): a dispute's.
    only: tuple[str, ...] | None = None
    # Per line of the function, the covering tests that ran it (the gate's
    # measuring run): a mutant is tried only against those of its statement.
    line_tests: dict[int, set[str]] | None = None
    # Every kill confirmed in a fresh process (plugin/fresh_kill.py): the
    # gate's judgements; an audit of the project's own tests leaves it out.
    confirm_kills: bool = True
    # The covering tests' own time in the measuring run, summed (None: not
    # known): what dealing the functions to several children weighs.
    test_seconds: float | None = None


def _line_tests(target: Target) -> dict[str, list[str]] | None:
    """The target's per-line tests as the child reads them (only its covering tests)."""
    if not target.line_tests:
        return None
    covering = set(target.nodeids)
    return {
        str(line): sorted(tests & covering)
        for line, tests in sorted(target.line_tests.items())
        if tests & covering
    }


def run_mutation_check(
    nodeids: list[str],
    *,
    file: Path,
    start: int,
    rootdir: Path,
    inifile: Path | None,
    timeout: float,
    cwd: Path,
    plugin_args: list[str] | None = None,
    mutants: bool = True,
    has_xdist: bool = False,
    has_cov: bool = False,
    seed: str = "",
    l1: dict[str, Any] | None = None,
    operators: tuple[str, ...] | None = None,
    only: tuple[str, ...] | None = None,
    subprocesses: bool = True,
    line_tests: dict[int, set[str]] | None = None,
    search_path: SearchPath | None = None,
    sources: Sequence[Path] = (),
) -> MutationReport:
    """Run the baseline twice and every mutant of the function on `start` of `file`.

    One child pytest process (stopped at `timeout` seconds); a timeout or a
    crash gives ``completed=False`` with the problem stated.  `seed` (the
    quest id) places the original's probe runs among the mutants.
    """
    target = Target(file, start, tuple(nodeids), seed, operators, only, line_tests)
    return run_mutation_checks(
        [target],
        rootdir=rootdir,
        inifile=inifile,
        timeout=timeout,
        cwd=cwd,
        plugin_args=plugin_args,
        mutants=mutants,
        has_xdist=has_xdist,
        has_cov=has_cov,
        l1=l1,
        subprocesses=subprocesses,
        search_path=search_path,
        sources=sources,
    )[0]


def run_mutation_checks(
    targets: list[Target],
    *,
    rootdir: Path,
    inifile: Path | None,
    timeout: float,
    cwd: Path,
    plugin_args: list[str] | None = None,
    mutants: bool = True,
    has_xdist: bool = False,
    has_cov: bool = False,
    l1: dict[str, Any] | None = None,
    subprocesses: bool = True,
    search_path: SearchPath | None = None,
    sources: Sequence[Path] = (),
) -> list[MutationReport]:
    """`run_mutation_check` for several functions in ONE child process, one report each.

    The tests of all `targets` are collected once; each function is checked
    in turn with its own covering tests.  A timeout or crash of the child
    leaves every report ``completed=False`` with the problem stated.  With
    `l1` (the evidence the project's ``pytest_quest_l1_check`` hooks get),
    the child calls them too: they live in the project's code, never in the judge.
    `search_path` (default: the rootdir for both): where the clean witness
    search imports the code under test from (engine/clean_search.py).
    """

    def failed(problem: str, duration: float) -> list[MutationReport]:
        return [
            MutationReport(completed=False, problem=problem, duration=duration) for _ in targets
        ]

    nodeids = sorted({nodeid for target in targets for nodeid in target.nodeids})
    # One started already, alongside the measuring run, with this command (engine/prestart.py).
    started = prestart.take(
        prestart.Launch(rootdir, inifile, tuple(plugin_args or ()), cwd, subprocesses, mutants,
            all(t.confirm_kills for t in targets), tuple(str(s) for s in sources))
    )  # fmt: skip
    # The folder of the mutants in the processes the tests start (engine/remote_mutant.py):
    # made and removed here, whatever way the child ends; named like the
    # measuring run's (runner.run_child), so the two children look alike.
    if started is not None:
        remote_dir = started.remote_dir
    else:
        remote_dir = tempfile.mkdtemp(prefix="pytest-quest-children-") if subprocesses else ""
    try:
        return _run_checks(targets, nodeids, remote_dir, failed, rootdir=rootdir,
            inifile=inifile, timeout=timeout, cwd=cwd, plugin_args=plugin_args,
            mutants=mutants, has_xdist=has_xdist, has_cov=has_cov, l1=l1,
            search_path=search_path, sources=sources, started=started)  # fmt: skip
    finally:
        if remote_dir:
            shutil.rmtree(remote_dir, ignore_errors=True)


def _instructions(t: Target) -> dict[str, Any]:
    """What the mutation child is told of one function (over the channel)."""
    return {
        "file": str(t.file),
        "start": t.start,
        "nodeids": list(t.nodeids),
        "seed": t.seed or f"{t.file}:{t.start}",
        "operators": None if t.operators is None else list(t.operators),
        "only": None if t.only is None else list(t.only),
        "line_tests": _line_tests(t),
        "confirm": t.confirm_kills,
    }


def _received_reports(
    ran: ChannelRun,
    count: int,
    failed: Callable[[str, float], list[MutationReport]],
    timeout: float,
) -> tuple[list[MutationReport], bool]:
    """The child's reports, and whether they are its own (else why not, in each report)."""
    duration, received = ran.duration, ran.received
    if ran.returncode is None:
        message = f"the mutation check exceeded --quest-timeout ({timeout:g}s) and was stopped"
        return failed(message, duration), False
    if received.tampered:
        reports = failed(f"the mutation report was tampered with: {received.tampered}", duration)
        for report in reports:
            report.tampered = received.tampered
        return reports, False
    if received.payload is None:
        return _ended_early(ran, failed), False
    try:
        return _reports(received.payload, count, duration), True
    except (ValueError, KeyError, TypeError) as exc:
        reports = failed(f"the mutation report was unreadable: {exc}", duration)
        for report in reports:
            report.tampered = f"a message of the wrong shape ({exc})"
        return reports, False


def _run_checks(
    targets: list[Target],
    nodeids: list[str],
    remote_dir: str,
    failed: Callable[[str, float], list[MutationReport]],
    *,
    rootdir: Path,
    inifile: Path | None,
    timeout: float,
    cwd: Path,
    plugin_args: list[str] | None,
    mutants: bool,
    has_xdist: bool,
    has_cov: bool,
    l1: dict[str, Any] | None,
    search_path: SearchPath | None = None,
    sources: Sequence[Path] = (),
    started: prestart.Prestarted | None = None,
) -> list[MutationReport]:
    # The functions as they stand before the judged tests run (the clean search checks them).
    before: list[Judged | None] = [
        judged(t.file, t.start, t.operators) if mutants else None for t in targets
    ]
    handshake = gate_handshake(
        "check",
        nodeids,
        # The measuring child's options too (unused here): the same in both roles.
        sources=sources,
        only_files=sorted({_relative(t.file, rootdir) for t in targets}),
        # ``-n 0`` and ``--no-cov`` in effect (the mutants run in this process,
        # untraced), told over the channel: the command line is the measuring child's.
        no_xdist=has_xdist,
        no_cov=has_cov,
        mutants=mutants,
        subprocesses=bool(remote_dir),
        remote_dir=remote_dir,
        l1=l1,
        functions=[_instructions(t) for t in targets],
    )
    ran = started.run(handshake, timeout) if started is not None else None
    if ran is None:
        ran = run_over_channel(
            handshake,
            lambda channel: mutation_command(
                rootdir=rootdir, inifile=inifile, plugin_args=plugin_args or [], channel=channel
            ),
            cwd=cwd,
            timeout=timeout,
            bound=(remote_dir,),
        )
    received = ran.received
    reports, believed = _received_reports(ran, len(targets), failed, timeout)
    if not believed:
        return reports
    if mutants:
        # The child's "no witness found" is never taken: the judge searches again, cleanly.
        seconds = search_cleanly(
            [(function, report.mutants) for function, report in zip(before, reports)],
            path=list(search_path.path if search_path else ()) or [str(rootdir)],
            roots=list(search_path.roots if search_path else ()) or [str(rootdir)],
            cwd=cwd,
            timeout=timeout,
        )
        if seconds and reports:
            # One process for all the functions: its time counted once.
            reports[0].phases["clean_search"] = seconds
    if l1 is not None and received.payload is not None:
        l1_results = received.payload.get("l1")
        answers = received.payload.get("answers")
        for report in reports:
            report.l1 = l1_results if isinstance(l1_results, list) else None
            report.answers = answers if isinstance(answers, list) else None
    return reports


def _relative(file: Path, rootdir: Path) -> str:
    """`file` as the measuring child is told it: relative to the rootdir where it lies there."""
    try:
        return file.resolve().relative_to(rootdir.resolve()).as_posix()
    except ValueError:
        return str(file)


def _ended_early(
    ran: ChannelRun, failed: Callable[[str, float], list[MutationReport]]
) -> list[MutationReport]:
    """Reports for a child that sent none: a crash, or an environment failure named with its cause."""
    cause = environment_cause(ran.returncode, ran.output)
    if not cause:
        return failed(
            f"the mutation runner crashed (exit status {ran.returncode}): {ran.tail()}",
            ran.duration,
        )
    cause += " (the mutation child, step 4)"
    rows = [line for line in ran.output.strip().splitlines() if line.strip()]
    reports = failed(
        f"the mutation check could not complete: {cause}; last output: {ran.tail() or '(none)'}",
        ran.duration,
    )
    for report in reports:
        report.environment = cause
        report.output_tail = rows[-5:]
    return reports


def _reports(payload: dict[str, Any], count: int, duration: float) -> list[MutationReport]:
    data = payload["functions"]
    if not isinstance(data, list) or len(data) != count:
        raise ValueError(f"{count} function reports expected")
    reports = []
    for item in data:
        reports.append(
            MutationReport(
                completed=not item["problem"],
                problem=str(item["problem"]),
                runs=list(item["runs"]),
                run_seconds=list(item["run_seconds"]),
                mutants=list(item["mutants"]),
                # Several functions share one child: each gets its own time
                # in it (the start-up is in none of them).
                duration=duration if count == 1 else float(item["seconds"]),
                original_reached=[str(n) for n in item["original_reached"]],
                detects_run=[str(n) for n in item["detects_run"]],
                own_copy={str(k): str(v) for k, v in dict(item.get("own_copy") or {}).items()},
                kill_unconfirmed={
                    str(k): str(v) for k, v in dict(item.get("kill_unconfirmed") or {}).items()
                },
                kill_outside={
                    str(k): str(v) for k, v in dict(item.get("kill_outside") or {}).items()
                },
                stale_reads={
                    str(k): str(v) for k, v in dict(item.get("stale_reads") or {}).items()
                },
                errors={
                    str(k): [str(line) for line in v]
                    for k, v in dict(item.get("errors") or {}).items()
                    if isinstance(v, list)
                },
                probed=bool(item["probed"]),
                phases={str(k): float(v) for k, v in dict(item.get("phases") or {}).items()},
            )
        )
    return reports
