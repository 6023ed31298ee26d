"""Which end-to-end tests must start their children measured for the self-coverage bar (docs/ci.md).

run-tests.sh measures the processes an end-to-end test starts only where the
test (or its module) is marked ``children_measured``: most tests' children run
lines other tests' children run too, at about 80 ms of coverage.py each.  This
finds the marks again, after the code or the tests moved:

1. tests/unit under pytest-cov, as run-tests.sh's check measures them;
2. tests/e2e and tests/acceptance under ``coverage run``, every test's children
   measured (``PYTEST_QUEST_SELFCOV=all``), each test's children saving into a
   folder of its own (``-p tests.support.carriers``);
3. the lines only children reach, per test; then, greedily (most processes
   first), the tests whose children reach nothing the others kept do not.

Prints the lines the current marks lose (and the tests that would reach them),
a minimal set of tests to mark, and how many measured processes each costs.
Run from the checkout, with its venv's Python (about 10 minutes on 2 cores)::

    python benchmarks/coverage_carriers.py              # -n 3
    python benchmarks/coverage_carriers.py --workers 2 --keep /tmp/carriers
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from coverage import CoverageData

ROOT = Path(__file__).resolve().parent.parent
Line = tuple[str, int]


def lines_of(files: list[Path]) -> set[Line]:
    found: set[Line] = set()
    for path in files:
        data = CoverageData(str(path))
        data.read()
        for name in data.measured_files():
            found.update((name, line) for line in data.lines(name) or ())
    return found


def data_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob(".coverage*") if p.is_file())


def measure(work: Path, workers: int) -> None:
    env = {**os.environ, "COVERAGE_COVERAGE": "1", "PYTEST_QUEST_SELFCOV": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    (work / "unit").mkdir()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", str(workers),
         "--cov=pytest_quest", "--cov-report=", "tests/unit"],
        cwd=ROOT, env={**env, "COVERAGE_FILE": str(work / "unit" / ".coverage")}, check=True,
    )  # fmt: skip
    (work / "base").mkdir()
    subprocess.run(
        [sys.executable, "-m", "coverage", "run", "-m", "pytest", "-p", "no:cacheprovider", "-q",
         "-p", "tests.support.carriers", "-n", str(workers), "--dist", "worksteal",
         "--ignore=tests/unit"],
        cwd=ROOT, check=False,  # a failing test still tells what its children reached
        env={**env, "PYTEST_QUEST_SELFCOV": "all", "QUEST_CARRIERS_DATA": str(work / "tests"),
             "COVERAGE_FILE": str(work / "base" / ".coverage")},
    )  # fmt: skip


def analyse(work: Path) -> None:
    base = lines_of(data_files(work / "unit") + data_files(work / "base"))
    units: dict[str, tuple[int, set[Line], bool]] = {}
    for folder in sorted((work / "tests").glob("*/*")):
        files = data_files(folder)
        marked = (folder / "marked").is_file() and (folder / "marked").read_text() == "1"
        units[f"{folder.parent.name}::{folder.name}"] = (len(files), lines_of(files) - base, marked)
    children_only = set().union(*(lines for _, lines, _ in units.values()))
    processes = sum(n for n, _, _ in units.values())
    print(f"lines reached only in end-to-end tests' children: {len(children_only)}")
    print(f"measured processes with every test's children: {processes}")
    kept_now = {u for u, (_, _, marked) in units.items() if marked or u.endswith("::_module")}
    reached_now = set().union(*(units[u][1] for u in kept_now))
    lost = children_only - reached_now
    print(
        f"with today's marks: {sum(units[u][0] for u in kept_now)} measured processes, "
        f"{len(lost)} of those lines lost"
    )
    for name, line in sorted(lost)[:40]:
        reachers = [u for u, (_, lines, _) in units.items() if (name, line) in lines]
        print(f"  lost {os.path.relpath(name, ROOT)}:{line}  reached by {', '.join(reachers[:3])}")
    count: collections.Counter[Line] = collections.Counter()
    for _, lines, _ in units.values():
        count.update(lines)
    chosen = set(units)
    for unit in sorted(units, key=lambda u: -units[u][0]):
        lines = units[unit][1]
        if all(count[line] > 1 for line in lines):
            count.subtract(lines)
            chosen.discard(unit)
    print(
        f"a minimal set: {len(chosen)} tests, {sum(units[u][0] for u in chosen)} measured processes"
    )
    for unit in sorted(chosen):
        print(
            f"  {'marked ' if unit in kept_now else 'UNMARKED'} {unit} ({units[unit][0]} processes)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep (or reuse, if it exists) the data here")
    args = parser.parse_args()
    if args.keep and (args.keep / "tests").is_dir():
        analyse(args.keep)
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="quest-carriers-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        measure(work, args.workers)
        analyse(work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
