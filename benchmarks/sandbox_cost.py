"""What the judged runs' kernel sandbox costs a submit: run by hand, prints figures.

    python benchmarks/sandbox_cost.py               # example_project, 3 rounds
    python benchmarks/sandbox_cost.py --rounds 5

It scans two copies of example_project: one where no sandbox may start (its
policy records ``sandbox=off``) and one where one does (``sandbox=required``).
Each round then submits the demo's test for ``Cart.add`` in a fresh copy of
each, side by side: unsandboxed, in bwrap, in Landlock (forced through
``PYTEST_QUEST_SANDBOX_ENGINES``), in that order, and prints every wall time
and the medians with each engine's difference to the unsandboxed submit.
First it times what each engine adds to one process start (a submit starts
two gate children and the fresh runs inherit their sandbox): ``python -c
pass`` 20 times plain, in bwrap, in Landlock, confined like a gate child.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from submit_overhead import ROOT, demo_test, environment, run  # noqa: E402

QUEST = "src/shop/cart.py::Cart.add"
TEST_FILE = "tests/test_cart_add.py"
ENGINES_ENV = "PYTEST_QUEST_SANDBOX_ENGINES"
# (label, the engines the scan may start, the engines the submit may start)
SETUPS = (("unsandboxed", "", ""), ("bwrap", None, "bwrap"), ("landlock", None, "landlock"))


def scanned(python: str, folder: Path, engines: str | None) -> Path:
    target = folder / f"template-{'off' if engines == '' else 'required'}"
    shutil.copytree(
        ROOT / "example_project",
        target,
        ignore=shutil.ignore_patterns("quest.json*", ".pytest_cache", "__pycache__", ".coverage*"),
    )
    env = environment({} if engines is None else {ENGINES_ENV: engines})
    command = [python, "-m", "pytest", "-p", "no:cacheprovider", "--quest", "scan", "-q"]
    _, _, code, text = run(command, target, env)
    if code not in (0, 1):
        raise SystemExit(f"scan failed ({code}):\n{text[-2000:]}")
    return target


def submit(python: str, template: Path, work: Path, engines: str) -> tuple[float, str, str]:
    shutil.copytree(template, work)
    (work / TEST_FILE).write_text(demo_test(), encoding="utf-8")
    command = [python, "-m", "pytest", "-p", "no:cacheprovider", "--quest", "submit"]
    command += [f"--quest-id={QUEST}", "--quest-format", "json"]
    wall, _, _, text = run(command, work, environment({ENGINES_ENV: engines}))
    try:
        data = json.loads(text[text.index("{") :])
    except ValueError:
        return wall, "unreadable: " + text[-300:], "?"
    return wall, str(data.get("verdict")), str(data.get("sandbox"))


def start_cost(python: str, folder: Path, times: int = 20) -> None:
    """Median wall of `times` starts of ``python -c pass`` per engine, printed."""
    import os
    import subprocess
    import time

    from pytest_quest.engine import sandbox

    project, scratch = folder / "start-project", folder / "start-scratch"
    project.mkdir()
    scratch.mkdir()
    confined = sandbox.Confinement(project=project, scratch=scratch)
    wrappers: dict[str, sandbox.Sandbox | None] = {"plain": None}
    binary = sandbox.bwrap_path()
    if binary is not None:
        wrappers["bwrap"] = sandbox.Bubblewrap(binary)
    if sandbox.landlock_abi() >= 1:
        wrappers["landlock"] = sandbox.Landlock(sandbox.landlock_abi())
    print(f"one start of `python -c pass`, median of {times}:")
    base = 0.0
    for label, engine in wrappers.items():
        command = [python, "-c", "pass"]
        if engine is not None:
            command = engine.wrap(command, confined)
        walls = []
        for _ in range(times):
            started = time.perf_counter()
            subprocess.run(command, check=True, cwd=project, env=dict(os.environ))
            walls.append(time.perf_counter() - started)
        middle = statistics.median(walls) * 1000
        base = base or middle
        print(f"  {label:12} {middle:6.1f} ms  ({middle - base:+.1f} ms)")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    walls: dict[str, list[float]] = {label: [] for label, _, _ in SETUPS}
    with tempfile.TemporaryDirectory(prefix="sandbox-cost-") as name:
        folder = Path(name)
        start_cost(args.python, folder)
        templates = {
            "off": scanned(args.python, folder, ""),
            "required": scanned(args.python, folder, None),
        }
        for number in range(args.rounds):
            for label, scan_engines, engines in SETUPS:
                template = templates["off" if scan_engines == "" else "required"]
                work = folder / f"{label}-{number}"
                wall, verdict, sandbox = submit(args.python, template, work, engines)
                walls[label].append(wall)
                print(f"round {number + 1} {label:12} {wall:6.2f} s  {verdict} (sandbox {sandbox})")
    base = statistics.median(walls["unsandboxed"])
    print(f"\nmedians over {args.rounds} rounds (submit wall, example_project, {QUEST}):")
    for label, _, _ in SETUPS:
        middle = statistics.median(walls[label])
        print(
            f"  {label:12} {middle:6.2f} s  ({middle - base:+.2f} s, {100 * (middle / base - 1):+.1f} %)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
