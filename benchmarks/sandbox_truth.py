"""Truth check of the judged runs' sandbox on real projects: run by hand, prints figures.

    python benchmarks/sandbox_truth.py --python /path/venv/bin/python \\
        /path/toolz:toolz /path/dateutil:src/dateutil --rounds 3
    python benchmarks/sandbox_truth.py --python ... /path/toolz:toolz --audit   # audits too
    python benchmarks/sandbox_truth.py --diff a/quest.json b/quest.json         # only the diff

Each PROJECT:SOURCE is a project folder (a git checkout whose venv, given by
``--python``, has the project, its test needs and this checkout installed) and
its ``--quest-source``.  Per round, side by side (the order alternates between
rounds): ``pytest --quest scan`` as a person runs it, where a sandbox starts
(the policy records ``sandbox=required``), and the same scan where none may
(``PYTEST_QUEST_SANDBOX_ENGINES`` empty: the policy records ``sandbox=off``).
With ``--audit`` each scan is followed by ``pytest --quest audit``, whose
mutation children are the judged runs: in bwrap under ``required``,
unsandboxed under ``off``.  It prints every wall time with the load average
at its start, the medians and the sandbox's difference, and compares the
quests of each pair (ids, states, missing lines and branches, covering tests;
the policy's ``sandbox`` key and what digests it are the expected difference)
and the audits' findings.  A run that exits other than 0 (1 for a scan whose
suite has failing tests), or records the wrong ``sandbox``, is a FAILED RUN:
no figure is printed for it and the script exits 1.  So does any difference
between the quests of the two setups.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENGINES_ENV = "PYTEST_QUEST_SANDBOX_ENGINES"
SETUPS = ("required", "off")
# Fields of a quest's `extra` that differ by design: the digest of the policy (its
# sandbox key) sealed into each quest, the policy a baseline PASS records, and the
# seals that digest those or the time of the PASS.
POLICY_FIELDS = ("config_digest", "issued_seal", "pass_seal", "passed_policy")
TIMES = ("issued_at", "passed_at", "scanned_at")


@dataclass
class Run:
    setup: str
    wall: float
    load: float
    code: int
    quest_json: Path
    cpu: float = 0.0
    audit: dict[str, Any] | None = None
    audit_wall: float | None = None
    audit_load: float | None = None
    failed: str = ""


@dataclass
class Project:
    folder: Path
    source: str
    runs: list[Run] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.folder.name


def load_average() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def environment(setup: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COVERAGE_"))}
    if setup == "off":
        env[ENGINES_ENV] = ""  # no engine may start: the scan records sandbox=off
    return env


def timed(
    command: list[str], cwd: Path, env: dict[str, str]
) -> tuple[float, float, int, str, float]:
    """Wall s, load average at the start, exit code, output, CPU s (user + sys, children too)."""
    load = load_average()
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as output:
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read()
    return wall, load, child.returncode, text, usage.ru_utime + usage.ru_stime


def clean(folder: Path) -> None:
    """The project as committed, its quest files and caches gone (`git clean`)."""
    subprocess.run(["git", "clean", "-qfdx", "-e", ".venv"], cwd=folder, check=True)
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=folder, check=True)


def one_run(python: str, project: Project, setup: str, keep: Path, number: int, audit: bool) -> Run:
    clean(project.folder)
    command = [python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--quest", "scan"]
    command += ["--quest-source", project.source]
    env = environment(setup)
    wall, load, code, text, cpu = timed(command, project.folder, env)
    kept = keep / f"{project.name}-{setup}-{number}.json"
    run = Run(setup, wall, load, code, kept, cpu)
    ratchet = project.folder / "quest.json"
    if code not in (0, 1) or not ratchet.exists():
        run.failed = f"scan exit {code}: {text[-1500:]}"
        return run
    shutil.copyfile(ratchet, kept)
    recorded = json.loads(ratchet.read_text()).get("policy", {}).get("sandbox", "off")
    if recorded != setup:
        run.failed = f"the scan recorded sandbox={recorded}, not {setup}"
        return run
    if audit:
        command = [python, "-m", "pytest", "-p", "no:cacheprovider", "--quest", "audit"]
        command += ["--quest-format", "json"]
        run.audit_wall, run.audit_load, code, text, _ = timed(command, project.folder, env)
        try:
            run.audit = json.loads(text[text.index("{") :].split("\n}\n")[0] + "\n}")
        except ValueError:
            run.failed = f"audit exit {code}, no JSON: {text[-1500:]}"
            return run
        if code != 0:
            run.failed = f"audit exit {code}: {text[-1500:]}"
        (keep / f"{project.name}-{setup}-{number}.audit.json").write_text(json.dumps(run.audit))
    return run


def comparable(path: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The ratchet's top level and quests, test indices as names, times and policy digests out."""
    data = json.loads(path.read_text())
    tests = data.get("tests", [])
    quests: dict[str, dict[str, Any]] = {}
    for quest_id, quest in data.get("quests", {}).items():
        quest = {k: v for k, v in quest.items() if k not in TIMES}
        quest["covering_tests"] = sorted(tests[i] for i in quest.get("covering_tests", []))
        extra = {k: v for k, v in quest.pop("extra", {}).items() if k not in POLICY_FIELDS}
        quest["extra"] = extra
        quests[quest_id] = quest
    top = {k: v for k, v in data.items() if k not in ("quests", "tests", *TIMES)}
    top["policy"] = {k: v for k, v in top.get("policy", {}).items() if k != "sandbox"}
    return top, quests


def diff(first: Path, second: Path) -> list[str]:
    """Every difference between two ratchet files but times and the policy's sandbox key."""
    top_a, quests_a = comparable(first)
    top_b, quests_b = comparable(second)
    lines = [
        f"top level `{key}` differs"
        for key in sorted(set(top_a) | set(top_b))
        if top_a.get(key) != top_b.get(key)
    ]
    lines += [f"only in {first.name}: {q}" for q in sorted(set(quests_a) - set(quests_b))]
    lines += [f"only in {second.name}: {q}" for q in sorted(set(quests_b) - set(quests_a))]
    for quest_id in sorted(set(quests_a) & set(quests_b)):
        a, b = quests_a[quest_id], quests_b[quest_id]
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                lines.append(
                    f"{quest_id}: `{key}` {str(a.get(key))[:120]} != {str(b.get(key))[:120]}"
                )
    return lines


def audit_summary(audit: dict[str, Any]) -> dict[str, Any]:
    """What an audit found, per function: its fact checks and its unwitnessed mutants."""
    found = {
        finding["id"]: sorted(fact.get("check", "") for fact in finding.get("facts", []))
        for finding in audit.get("findings", [])
    }
    return {
        "audited": sorted(audit.get("audited", [])),
        "findings": found,
        "skipped": sorted(audit.get("skipped", {})),
        "unwitnessed": audit.get("unwitnessed", {}),
    }


def report(project: Project) -> tuple[list[str], bool]:
    ok = True
    lines = [f"## {project.name} (--quest-source {project.source})", ""]
    failed = [run for run in project.runs if run.failed]
    for run in failed:
        lines.append(f"FAILED RUN ({run.setup}): {run.failed}")
        ok = False
    good = [run for run in project.runs if not run.failed]
    by = {setup: [run for run in good if run.setup == setup] for setup in SETUPS}
    lines.append(
        "| setup | runs | scan wall median | CPU median | rounds (wall s / CPU s, load at start) |"
    )
    lines.append("|---|---:|---:|---:|---|")
    for setup in SETUPS:
        runs = by[setup]
        if runs:
            rounds = ", ".join(f"{r.wall:.1f} / {r.cpu:.1f} ({r.load:.1f})" for r in runs)
            wall = statistics.median(r.wall for r in runs)
            cpu = statistics.median(r.cpu for r in runs)
            lines.append(f"| {setup} | {len(runs)} | {wall:.2f} s | {cpu:.2f} s | {rounds} |")
    if by["required"] and by["off"]:
        for what in ("wall", "cpu"):
            on = statistics.median(getattr(r, what) for r in by["required"])
            off = statistics.median(getattr(r, what) for r in by["off"])
            lines.append(
                f"\nscan {what}, required against off: {on - off:+.2f} s ({100 * (on / off - 1):+.1f} %)"
            )
    if all(r.audit_wall is not None for r in good) and by["required"] and by["off"]:
        lines.append("\n| setup | audit wall median | rounds (s, load at start) |")
        lines.append("|---|---:|---|")
        for setup in SETUPS:
            runs = by[setup]
            rounds = ", ".join(f"{r.audit_wall:.1f} ({r.audit_load:.1f})" for r in runs)
            walls = [r.audit_wall for r in runs if r.audit_wall is not None]
            lines.append(f"| {setup} | {statistics.median(walls):.2f} s | {rounds} |")
        on = statistics.median(r.audit_wall for r in by["required"] if r.audit_wall is not None)
        off = statistics.median(r.audit_wall for r in by["off"] if r.audit_wall is not None)
        lines.append(
            f"\naudit, required against off: {on - off:+.2f} s ({100 * (on / off - 1):+.1f} %)"
        )
    # Every run against the first unsandboxed one: the same quests, the same audit.
    if by["off"]:
        reference = by["off"][0]
        for run in good[1:] if good[0] is reference else good:
            if run is reference:
                continue
            found = diff(reference.quest_json, run.quest_json)
            if found:
                ok = False
                lines.append(
                    f"\nquests differ, {reference.quest_json.name} against {run.quest_json.name}:"
                )
                lines += [f"- {line}" for line in found[:40]]
            if reference.audit is not None and run.audit is not None:
                a, b = audit_summary(reference.audit), audit_summary(run.audit)
                if a != b:
                    ok = False
                    lines.append(f"\naudits differ, {reference.setup} against {run.setup}:")
                    for key in a:
                        if a[key] != b[key]:
                            lines.append(
                                f"- `{key}`: {json.dumps(a[key])[:600]} != {json.dumps(b[key])[:600]}"
                            )
        quests = len(comparable(reference.quest_json)[1])
        if ok:
            audited = len(reference.audit.get("audited", [])) if reference.audit else 0
            findings = len(reference.audit.get("findings", [])) if reference.audit else 0
            lines.append(
                f"\nthe same {quests} quests in all {len(good)} runs"
                + (
                    f"; the same audit ({audited} audited, {findings} findings)"
                    if reference.audit
                    else ""
                )
            )
    return lines, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("projects", nargs="*", help="FOLDER:SOURCE")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--audit", action="store_true", help="audit after each scan")
    parser.add_argument("--keep", type=Path, help="where the ratchet files are kept")
    parser.add_argument("--diff", nargs=2, type=Path, help="only compare two ratchet files")
    args = parser.parse_args()
    if args.diff:
        found = diff(*args.diff)
        print("\n".join(found) or "the same quests")
        return 1 if found else 0
    keep = args.keep or Path(tempfile.mkdtemp(prefix="sandbox-truth-"))
    keep.mkdir(parents=True, exist_ok=True)
    print(f"ratchet files kept in {keep}; {os.cpu_count()} cores", file=sys.stderr)
    ok = True
    for spec in args.projects:
        folder, _, source = spec.rpartition(":")
        project = Project(Path(folder).resolve(), source)
        for number in range(args.rounds):
            order = SETUPS if number % 2 == 0 else SETUPS[::-1]
            for setup in order:
                run = one_run(args.python, project, setup, keep, number, args.audit)
                project.runs.append(run)
                print(
                    f"  {project.name} round {number + 1} {setup}: scan {run.wall:.1f} s "
                    f"(load {run.load:.1f})"
                    + (f", audit {run.audit_wall:.1f} s" if run.audit_wall is not None else "")
                    + (f" FAILED: {run.failed[:200]}" if run.failed else ""),
                    file=sys.stderr,
                )
        clean(project.folder)
        lines, fine = report(project)
        ok = ok and fine
        print("\n".join(lines) + "\n", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
