r"""Step 4 of a submit (the mutation check) against the covering tests' own time (issue 13).

    # a scanned copy of the project (quest.json with baseline PASS quests), in a venv
    # where the project, its test needs and pytest-quest are installed:
    python benchmarks/step4_cost.py /tmp/copy-of/example_project --quests 5
    python benchmarks/step4_cost.py /tmp/copy-of/boltons --quests 6 --repeats 3
    # the demo's tests for Cart.add written into the copy, then rescanned:
    python benchmarks/step4_cost.py /tmp/copy-of/example_project --quest src/shop/cart.py::Cart.add

For each chosen quest (PASS, from the scan's baseline, spread over the
number of covering tests), it runs:

* the covering tests alone, ``python -m pytest -p no:cacheprovider <ids>``,
  and sums pytest's own times of their setup, call and teardown (from
  ``--junitxml``): "the covering tests' own time";
* the mutation check as a submit runs it (``engine.mutation.run_mutation_check``,
  the quest id as its seed, the default operators): one child pytest,
  baseline twice, every mutant against its tests, the original's probe runs;
  its wall time and the CPU time of the child (``RUSAGE_CHILDREN``);

and prints both side by side with the target, ``3 x tests + 1 s``, and the
ratio of step 4 to it (at most 1.0: met).  Medians over ``--repeats``.
The child is started exactly as the gate starts it; the project's files are
never written.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from pytest_quest.engine.codec import loads
from pytest_quest.engine.mutation import run_mutation_check
from pytest_quest.engine.reaper import become_subreaper
from pytest_quest.engine.source import facts_from_source


@dataclass
class Row:
    quest: str
    tests: int
    own: float
    wall: float
    cpu: float
    mutants: int
    killed: int

    @property
    def target(self) -> float:
        return 3 * self.own + 1.0

    @property
    def ratio(self) -> float:
        return self.wall / self.target


def choose(
    root: Path, count: int, named: list[str] | None = None
) -> list[tuple[str, str, int, list[str]]]:
    """`count` baseline PASS quests, spread from the fewest covering tests to the most.

    Or the `named` quests, whatever their state, with the covering tests the scan
    recorded (a TODO quest whose tests were added before a rescan: a submit's).
    """
    ratchet = loads((root / "quest.json").read_bytes(), "quest.json")
    found = []
    for quest in ratchet.ordered():
        if not quest.covering_tests or (named and quest.id not in named):
            continue
        if not named and (quest.state.value != "PASS" or not quest.baseline):
            continue
        facts = facts_from_source(quest.id, quest.file, root, all_missing=False)
        if facts is not None:
            found.append((quest.id, quest.file, facts.start, sorted(quest.covering_tests)))
    found.sort(key=lambda q: (len(q[3]), q[0]))
    if named or len(found) <= count:
        return found
    step = (len(found) - 1) / max(1, count - 1)
    return [found[round(i * step)] for i in range(count)]


def own_time(root: Path, nodeids: list[str]) -> float:
    """pytest's own setup + call + teardown seconds of `nodeids`, run alone."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        command += ["-o", "junit_duration_report=total", f"--junitxml={report}", "--", *nodeids]
        subprocess.run(command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tree = ElementTree.parse(report)
        return sum(float(case.get("time", 0)) for case in tree.iter("testcase"))


def _reap() -> None:
    """Reap the processes reparented here (this script is a subreaper): their CPU is counted."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def step4(
    root: Path, quest: str, file: str, start: int, nodeids: list[str]
) -> tuple[float, float, int, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    report = run_mutation_check(
        nodeids, file=root / file, start=start, rootdir=root, inifile=_inifile(root),
        timeout=600, cwd=root, seed=quest,
    )  # fmt: skip
    wall = time.monotonic() - began
    # The fresh run confirming the kills runs detached (plugin/fresh_kill.py): it is
    # reparented to this subreaper and ends once told to; reaped, its CPU counts.
    time.sleep(0.3)
    _reap()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if not report.completed:
        print(f"  {quest}: {report.problem}", file=sys.stderr)
    killed = sum(1 for m in report.mutants if m.get("status") == "killed")
    return wall, cpu, len(report.mutants), killed


def _inifile(root: Path) -> Path | None:
    for name in ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
        if (root / name).exists():
            return root / name
    return None


def measure(root: Path, count: int, repeats: int, named: list[str] | None = None) -> list[Row]:
    rows = []
    for quest, file, start, nodeids in choose(root, count, named):
        owns, walls, cpus = [], [], []
        mutants = killed = 0
        for _ in range(repeats):
            owns.append(own_time(root, nodeids))
            wall, cpu, mutants, killed = step4(root, quest, file, start, nodeids)
            walls.append(wall)
            cpus.append(cpu)
        row = Row(quest, len(nodeids), statistics.median(owns), statistics.median(walls),
                  statistics.median(cpus), mutants, killed)  # fmt: skip
        print(f"  {quest}: {row.wall:.2f} s (target {row.target:.2f} s)", file=sys.stderr)
        rows.append(row)
    return rows


def table(rows: list[Row], project: str) -> list[str]:
    lines = [
        f"step 4 of a submit on {project} (medians; target: 3 x tests' own time + 1 s)",
        "",
        "| quest | tests | tests' own time | step 4 wall | step 4 CPU | mutants (killed) "
        "| target | ratio | |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| `{r.quest}` | {r.tests} | {r.own:.3f} s | {r.wall:.2f} s | {r.cpu:.2f} s "
            f"| {r.mutants} ({r.killed}) | {r.target:.2f} s | {r.ratio:.2f} "
            f"| {'met' if r.ratio <= 1 else 'MISSED'} |"
        )
    return lines


def main() -> None:
    become_subreaper()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path, help="a scanned project folder (its quest.json)")
    parser.add_argument("--quests", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--quest", action="append", default=[], help="this PASS quest (repeatable)")
    args = parser.parse_args()
    root = args.project.resolve()
    os.environ.pop("PYTEST_ADDOPTS", None)
    rows = measure(root, args.quests, args.repeats, args.quest)
    print("\n".join(table(rows, root.name)))


if __name__ == "__main__":
    main()
