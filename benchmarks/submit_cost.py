r"""A submit's wall time against its covering tests' own plain-pytest time, on a real library.

    python benchmarks/submit_cost.py                                   # toolz 1.2.0, 8 quests
    python benchmarks/submit_cost.py --sdist /path/toolz-1.2.0.tar.gz --quests 4

It unpacks the toolz sdist into a temporary folder, takes out
``toolz/tests/test_dicttoolz.py`` (its functions become TODO quests) and
``toolz/sandbox/tests/test_parallel.py`` (a ``multiprocessing.Pool`` forked
from the scan hangs there), scans it once (the template).  Then, per quest,
in a fresh copy of the template it writes one honest test file for one
``toolz/dicttoolz.py`` quest (``benchmarks/submit_cost_tests/``: written-out
expected values) and times, side by side in the same round:

* ``pytest --quest submit --quest-id Q`` (wall; the verdict from its JSON);
* ``pytest -p no:cacheprovider <the quest's covering tests>`` (wall): the
  covering tests as the ratchet names them after the submit, run alone.

It prints each ratio and the median against the target: a submit's median
wall time at most 2x the covering tests' own plain-pytest time plus 1 s.  It
refuses to report when a submit gives no verdict or the plain run fails.
The load average is printed beside: wall times on a shared machine follow it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE / "submit_cost_tests"
SDIST = Path("/tmp/agent_lib/toolz-1.2.0.tar.gz")
# test file -> the quest it is written for
QUESTS = {
    "test_q_valmap.py": "toolz/dicttoolz.py::valmap",
    "test_q_keymap.py": "toolz/dicttoolz.py::keymap",
    "test_q_itemmap.py": "toolz/dicttoolz.py::itemmap",
    "test_q_keyfilter.py": "toolz/dicttoolz.py::keyfilter",
    "test_q_itemfilter.py": "toolz/dicttoolz.py::itemfilter",
    "test_q_assoc.py": "toolz/dicttoolz.py::assoc",
    "test_q_get_in.py": "toolz/dicttoolz.py::get_in",
    "test_q_dissoc.py": "toolz/dicttoolz.py::dissoc",
}
TAKEN_OUT = ("toolz/tests/test_dicttoolz.py", "toolz/sandbox/tests/test_parallel.py")


def run(command: list[str], cwd: Path) -> tuple[float, int, str]:
    """Wall seconds, exit code, standard output."""
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    started = time.monotonic()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    return time.monotonic() - started, done.returncode, done.stdout


def template(python: str, sdist: Path, folder: Path) -> Path:
    """The library unpacked, its dicttoolz tests taken out, scanned."""
    with tarfile.open(sdist) as archive:
        archive.extractall(folder, filter="data")
    root = next(folder.iterdir())
    for path in TAKEN_OUT:
        (root / path).unlink()
    seconds, code, out = run(
        [python, "-m", "pytest", "--quest", "scan", "--quest-source", "toolz", "-q",
         "-p", "no:cacheprovider"], root,
    )  # fmt: skip
    if code != 0:
        raise SystemExit(f"the scan failed (exit {code}):\n{out[-2000:]}")
    print(f"scan: {seconds:.1f} s")
    return root


def covering(root: Path, quest: str) -> list[str]:
    """The quest's covering tests as the ratchet file names them."""
    data = json.loads((root / "quest.json").read_text(encoding="utf-8"))
    tests = data.get("tests") or data.get("test_ids") or []
    entry = data["quests"][quest]
    found = []
    for item in entry.get("covering_tests") or []:
        found.append(tests[item] if isinstance(item, int) else str(item))
    return found


def one(python: str, root: Path, name: str, quest: str) -> dict[str, object]:
    shutil.copy(TESTS / name, root / "toolz" / "tests" / name)
    load = os.getloadavg()[0]
    wall, code, out = run(
        [python, "-m", "pytest", "--quest", "submit", "--quest-id", quest, "--quest-format",
         "json", "-p", "no:cacheprovider"], root,
    )  # fmt: skip
    try:
        verdict = json.loads(out)["verdict"]
    except (ValueError, KeyError) as exc:
        raise SystemExit(f"{quest}: the submit gave no verdict (exit {code}, {exc}):\n{out[-2000:]}")
    tests = covering(root, quest) or [f"toolz/tests/{name}"]
    plain, plain_code, plain_out = run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], root
    )
    if plain_code != 0:
        raise SystemExit(f"{quest}: the covering tests failed alone:\n{plain_out[-2000:]}")
    return {"quest": quest, "verdict": verdict, "submit": wall, "plain": plain,
            "tests": len(tests), "load": load}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", type=Path, default=SDIST)
    parser.add_argument("--quests", type=int, default=len(QUESTS))
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    if not args.sdist.exists():
        raise SystemExit(f"no sdist at {args.sdist}: pass --sdist (toolz 1.2.0)")
    with tempfile.TemporaryDirectory(prefix="submit-cost-") as tmp:
        folder = Path(tmp)
        scanned = template(args.python, args.sdist, folder / "project")
        rows = [
            one(args.python, scanned, name, quest)
            for name, quest in list(QUESTS.items())[: args.quests]
        ]
    print(f"{'quest':34} {'verdict':7} {'tests':>5} {'submit s':>9} {'plain s':>8} "
          f"{'ratio':>6} {'target s':>9} {'load':>5}")  # fmt: skip
    ratios, over = [], []
    for row in rows:
        submit, plain = float(row["submit"]), float(row["plain"])  # type: ignore[arg-type]
        target = 2 * plain + 1
        ratios.append(submit / plain)
        over.append(submit / target)
        print(f"{row['quest']:34} {row['verdict']:7} {row['tests']:>5} {submit:9.2f} "
              f"{plain:8.2f} {submit / plain:6.2f} {target:9.2f} {row['load']:5.1f}")  # fmt: skip
    submits = [float(r["submit"]) for r in rows]  # type: ignore[arg-type]
    plains = [float(r["plain"]) for r in rows]  # type: ignore[arg-type]
    median_target = 2 * statistics.median(plains) + 1
    print(
        f"median submit {statistics.median(submits):.2f} s, median plain "
        f"{statistics.median(plains):.2f} s, target 2 x plain + 1 s = {median_target:.2f} s; "
        f"median ratio submit/plain {statistics.median(ratios):.2f}; "
        f"median submit/target {statistics.median(over):.2f} (at most 1.00: met)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
