"""The mutation check's parent side: run the mutation child for some functions, read its report.

One child pytest process runs every function's baseline and mutants (see plugin/mutation_child.py).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_quest.engine.processes import child_env, run_in_own_session

# The child reads its instructions from this variable (set only for it).
SPEC_ENV = "PYTEST_QUEST_MUTATE"


@dataclass
class MutationReport:
    """What the mutation child found for one function."""

    completed: bool = True
    problem: str = ""
    runs: list[dict[str, str]] = field(default_factory=list)
    run_seconds: list[float] = field(default_factory=list)
    mutants: list[dict[str, Any]] = field(default_factory=list)
    duration: float = 0.0
    # The project's L1 hook results from the child, ``{"verdict", "fact"}``
    # dicts (None: the hooks were not asked, or the child gave no answer).
    l1: list[dict[str, Any]] | None = None
    # The project's plugin verifiers' answers (``l1["verify"]`` asked them), as dicts.
    answers: list[dict[str, Any]] | None = None

    def unstable(self, first: dict[str, str] | None = None) -> list[str]:
        """Tests whose outcome differs between runs (`first`: an earlier run's outcomes)."""
        runs = list(self.runs)
        names = sorted(set().union(*runs)) if runs else []
        found = []
        for name in names:
            seen = {run.get(name, "missing") for run in runs}
            if first is not None and name in first:
                seen.add(first[name])
            if len(seen) > 1:
                found.append(name)
        return found

    def passed_again(self) -> bool:
        """Whether some covering test passed in every run of the child."""
        if not self.runs:
            return False
        return any(all(run.get(name) == "passed" for run in self.runs) for name in self.runs[0])

    def survivors(self) -> list[dict[str, Any]]:
        return [m for m in self.mutants if m.get("status") == "survived"]


def mutation_command(
    nodeids: list[str],
    *,
    rootdir: Path,
    inifile: Path | None,
    plugin_args: list[str],
    has_xdist: bool,
    has_cov: bool,
) -> list[str]:
    # --tb=native: a killed mutant's failure report is made, never shown;
    # pytest's own traceback rendering costs more than many a test.
    command = [sys.executable, "-m", "pytest", "-q", "--tb=native", "-p", "no:cacheprovider"]
    command += ["--rootdir", str(rootdir)]
    if inifile is not None:
        command += ["-c", str(inifile)]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        command += ["-p", "pytest_quest.plugin.hooks"]  # its ini options are in the user's config
    command += plugin_args
    command += ["-p", "pytest_quest.plugin.mutation_child"]
    if has_xdist:
        command += ["-n", "0"]
    if has_cov:
        command += ["--no-cov"]
    return command + ["--"] + nodeids


@dataclass(frozen=True)
class Target:
    """One function to check: its file, the line of its ``def``, its covering tests."""

    file: Path
    start: int
    nodeids: tuple[str, ...]


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
    l1: dict[str, Any] | None = None,
) -> MutationReport:
    """Run the baseline twice and every mutant of the function on `start` of `file`.

    One child pytest process (stopped at `timeout` seconds); a timeout or a
    crash gives ``completed=False`` with the problem stated.
    """
    target = Target(file, start, tuple(nodeids))
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
) -> list[MutationReport]:
    """`run_mutation_check` for several functions in ONE child process, one report each.

    The tests of all `targets` are collected once; each function is checked
    in turn with its own covering tests.  A timeout or crash of the child
    leaves every report ``completed=False`` with the problem stated.  With
    `l1` (the evidence the project's ``pytest_quest_l1_check`` hooks get),
    the child calls them too: they live in the project's code, never in the judge.
    """

    def failed(problem: str, duration: float) -> list[MutationReport]:
        return [
            MutationReport(completed=False, problem=problem, duration=duration) for _ in targets
        ]

    nodeids = sorted({nodeid for target in targets for nodeid in target.nodeids})
    with tempfile.TemporaryDirectory(prefix="pytest-quest-mutants-") as workdir:
        out = Path(workdir) / "mutants.json"
        spec_file = Path(workdir) / "spec.json"
        spec: dict[str, Any] = {
            "out": str(out),
            "mutants": mutants,
            "l1": l1,
            "functions": [
                {"file": str(t.file), "start": t.start, "nodeids": list(t.nodeids)} for t in targets
            ],
        }
        spec_file.write_text(json.dumps(spec), encoding="utf-8")
        command = mutation_command(
            nodeids,
            rootdir=rootdir,
            inifile=inifile,
            plugin_args=plugin_args or [],
            has_xdist=has_xdist,
            has_cov=has_cov,
        )
        env = child_env()
        env[SPEC_ENV] = str(spec_file)
        log_path = Path(workdir) / "output.txt"
        started = time.monotonic()
        returncode = run_in_own_session(
            command, cwd=cwd, env=env, log_path=log_path, timeout=timeout
        )
        if returncode is None:
            return failed(
                f"the mutation check exceeded --quest-timeout ({timeout:g}s) and was stopped",
                time.monotonic() - started,
            )
        duration = time.monotonic() - started
        if not out.exists():
            output = log_path.read_text(encoding="utf-8", errors="replace")
            tail = " | ".join(output.strip().splitlines()[-3:])
            return failed(
                f"the mutation runner crashed (exit status {returncode}): {tail}", duration
            )
        try:
            written = json.loads(out.read_text(encoding="utf-8"))
            data = written["functions"]
            l1_results = written.get("l1") if l1 is not None else None
            answers = written.get("answers") if l1 is not None else None
        except (ValueError, KeyError, AttributeError) as exc:
            return failed(f"the mutation report was unreadable: {exc}", duration)
        reports = []
        for item in data:
            reports.append(
                MutationReport(
                    completed=not item["problem"],
                    problem=item["problem"],
                    runs=item["runs"],
                    run_seconds=item["run_seconds"],
                    mutants=item["mutants"],
                    # Several functions share one child: each gets its own time
                    # in it (the start-up is in none of them).
                    duration=duration if len(targets) == 1 else item["seconds"],
                    l1=l1_results if isinstance(l1_results, list) else None,
                    answers=answers if isinstance(answers, list) else None,
                )
            )
        return reports


__all__ = [
    "SPEC_ENV",
    "MutationReport",
    "Target",
    "mutation_command",
    "run_mutation_check",
    "run_mutation_checks",
]
