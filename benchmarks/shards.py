"""Sharded scan (N jobs with --quest-shard-out, then --quest combine) vs one scan, side by side.

    python benchmarks/shards.py                                  # 2,000 functions, 5,000 tests, 3 shards
    python benchmarks/shards.py --functions 200 --tests 500 --repeats 1   # a quick look

The synthetic project (``synth.py``) is copied once per "machine": one for
the single scan, one per job, one for the combine (so the shards really are
moved between checkouts).  The test files are dealt to the jobs by size,
largest first, each to the lightest job so far (what ``pytest-split`` does
with durations).  Each round runs, in order: the single ``--quest scan``;
each job's ``--quest scan --quest-shard-out``; ``--quest combine`` of the
shards.  Every round checks that the combined ratchet has the quests of the
single scan (states, missing lines and branches, covering tests; times left
out).  The report gives medians of wall and CPU time (user + system of the
child and its children) and peak RSS, with the sharded totals: CPU summed
over the jobs and the combine, wall on N machines (the slowest job, then the
combine) and on one machine (the jobs one after another, then the combine).

It uses bench.py's venv (``_work/venv-<version>``: this checkout editable,
pinned pytest, coverage, pytest-cov, pytest-xdist) and bench.py's runner.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import bench
from synth import generate

COMPARE = textwrap.dedent(
    """
    import json, sys
    from pytest_quest.engine.codec import dumps_v1, loads

    def view(path):
        data = json.loads(dumps_v1(loads(open(path, "rb").read())))
        quests = {}
        for qid, entry in data["quests"].items():
            kept = {k: v for k, v in entry.items() if k not in ("issued_at", "passed_at")}
            kept["extra"] = {k: v for k, v in entry.get("extra", {}).items() if k != "issued_seal"}
            quests[qid] = kept
        return quests

    single, combined = view(sys.argv[1]), view(sys.argv[2])
    states = {}
    for entry in combined.values():
        states[entry["state"]] = states.get(entry["state"], 0) + 1
    print(json.dumps({"same": single == combined, "quests": len(combined), "states": states}))
    """
)


def deal(folder: Path, shards: int) -> list[list[str]]:
    """The test files dealt to `shards` jobs by size, largest first, each to the lightest job."""
    files = sorted((folder / "tests").glob("test_*.py"), key=lambda p: (-p.stat().st_size, p.name))
    jobs: list[list[str]] = [[] for _ in range(shards)]
    weight = [0] * shards
    for path in files:
        lightest = weight.index(min(weight))
        jobs[lightest].append(f"tests/{path.name}")
        weight[lightest] += path.stat().st_size
    return [sorted(job) for job in jobs]


def timed(py: Path, folder: Path, *args: str) -> tuple[float, float, int, int]:
    command = [str(py), "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    wall, cpu, rss, code, text = bench.run(command, folder, bench.child_env())
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(args)} in {folder} exited {code}:\n{text[-3000:]}")
    return wall, cpu, rss, code


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", default=sys.executable, help="the Python to benchmark")
    parser.add_argument("--functions", type=int, default=2000)
    parser.add_argument("--tests", type=int, default=5000)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3, help="rounds")
    parser.add_argument("--out", help="also append the report (markdown) to this file")
    args = parser.parse_args()
    bench.WORK.mkdir(parents=True, exist_ok=True)
    py = bench.make_venv(args.python)
    report = [
        f"command: python {' '.join(sys.argv)}",
        (
            f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
            f"machine: {platform.machine()}, {os.cpu_count()} cores"
        ),
        bench.describe(py),
        "",
        *sharded_rows(py, bench.SUITES, args.functions, args.tests, args.shards, args.repeats),
        f"load average at the end: {os.getloadavg()[0]:.1f}",
    ]
    text = "\n".join(report)
    print(text)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as stream:
            stream.write(text + "\n")
    return 0


def sharded_rows(
    py: Path, suites: Path, functions: int, tests: int, count: int, repeats: int
) -> list[str]:
    """The report's tables: one scan and `count` shards plus their combine, `repeats` rounds.

    bench.py calls this for ``--suites shards`` (its `suites` folder: per Python).
    """
    template = suites / f"shards-synth-{functions}-{tests}" / "template"
    if not (template / "tests").exists():
        bench.log(f"generating {template}")
        generate(template, functions=functions, tests=tests)
    base = template.parent
    single, final = base / "single", base / "final"
    jobs = [base / f"job{n}" for n in range(1, count + 1)]
    for folder in [single, final, *jobs]:
        if not folder.exists():
            shutil.copytree(template, folder)
    split = deal(template, count)
    labels = ["single --quest scan"] + [f"shard {n}/{count}" for n in range(1, count + 1)]
    labels.append("--quest combine")
    samples = {label: bench.Sample() for label in labels}
    checks = []
    for round_ in range(1, repeats + 1):
        bench.log(f"round {round_}/{repeats}")
        (single / "quest.json").unlink(missing_ok=True)
        results = [timed(py, single, "--quest", "scan")]
        names = []
        for n, (job, paths) in enumerate(zip(jobs, split), start=1):
            shutil.rmtree(job / "shard", ignore_errors=True)
            results.append(timed(py, job, "--quest", "scan", "--quest-shard-out", "shard", *paths))
            name = f"shards/{n}"
            shutil.rmtree(final / name, ignore_errors=True)
            shutil.copytree(job / "shard", final / name)
            names.append(name)
        (final / "quest.json").unlink(missing_ok=True)
        results.append(timed(py, final, "--quest", "combine", *names))
        for label, (wall, cpu, rss, code) in zip(labels, results):
            sample = samples[label]
            sample.wall.append(wall)
            sample.cpu.append(cpu)
            sample.rss_kb.append(rss)
            sample.codes.append(code)
        compared = subprocess.run(
            [str(py), "-c", COMPARE, str(single / "quest.json"), str(final / "quest.json")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        checks.append(compared)
    med = statistics.median
    rows = [(label, samples[label]) for label in labels]
    shards = [samples[label] for label in labels[1:-1]]
    combine = samples[labels[-1]]
    rounds = range(repeats)
    total_cpu = [sum(s.cpu[r] for s in shards) + combine.cpu[r] for r in rounds]
    on_n = [max(s.wall[r] for s in shards) + combine.wall[r] for r in rounds]
    on_one = [sum(s.wall[r] for s in shards) + combine.wall[r] for r in rounds]
    scan = samples[labels[0]]
    return [
        f"split: {', '.join(str(len(job)) for job in split)} test files per job",
        "",
        *bench.table(
            f"synth {functions} functions / {tests} tests, {count} shards", rows, labels[0]
        ),
        "| sharded, in all | wall s (median) | x single scan | CPU s (median) | x |",
        "|---|---:|---:|---:|---:|",
        f"| {count} machines (slowest job, then combine) | {med(on_n):.2f} | "
        f"{med(on_n) / med(scan.wall):.2f} | {med(total_cpu):.2f} | "
        f"{med(total_cpu) / med(scan.cpu):.2f} |",
        f"| one machine (jobs one after another, then combine) | {med(on_one):.2f} | "
        f"{med(on_one) / med(scan.wall):.2f} | {med(total_cpu):.2f} | "
        f"{med(total_cpu) / med(scan.cpu):.2f} |",
        "",
        "combined ratchet vs single scan, per round: " + "; ".join(checks),
        "",
    ]


if __name__ == "__main__":
    sys.exit(main())
