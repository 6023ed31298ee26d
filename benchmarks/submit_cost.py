r"""A submit's wall time against its covering tests' own plain-pytest time, on a real library.

    python benchmarks/submit_cost.py                                   # toolz 1.2.0, 8 quests
    python benchmarks/submit_cost.py --sdist /path/toolz-1.2.0.tar.gz --quests 4

It unpacks the toolz sdist into a temporary folder, takes out
``toolz/tests/test_dicttoolz.py`` (its functions become TODO quests) and
``toolz/sandbox/tests/test_parallel.py`` (a ``multiprocessing.Pool`` forked
from the scan hangs there), scans it once (the template).  Then, per quest,
in a fresh copy of the template it writes one honest test file for one
``toolz/dicttoolz.py`` quest (``benchmarks/submit_cost_tests/*.txt``: written-out
expected values) and times, side by side in the same round:

* ``pytest --quest submit --quest-id Q`` (wall; the verdict from its JSON);
* ``pytest -p no:cacheprovider <the quest's covering tests>`` (wall): the
  covering tests as the ratchet names them after the submit, run alone.

It prints each ratio and the median against the target: a submit's median
wall time at most 2x the covering tests' own plain-pytest time plus 1 s.  It
refuses to report when a submit gives no verdict, a REVIEW, or an exit status
other than its verdict's (a run that could not complete), or the plain run fails.
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
# A submit's exit status by its verdict (a PASS closes the quest; a FAIL keeps it
# TODO). A REVIEW of these honest files is a run that could not confirm something.
EXIT_OF = {"PASS": 0, "FAIL": 1}
TAKEN_OUT = ("toolz/tests/test_dicttoolz.py", "toolz/sandbox/tests/test_parallel.py")


def run(command: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (the process and its children, ``os.wait4``), exit code, output."""
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    # Bytecode written as on a person's machine: without it every process compiles
    # every module it imports, pytest's and the library's, and both figures measure that.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.monotonic()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.monotonic() - started
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), text


def template(python: str, sdist: Path, folder: Path) -> Path:
    """The library unpacked, its dicttoolz tests taken out, scanned."""
    with tarfile.open(sdist) as archive:
        archive.extractall(folder, filter="data")
    root = next(folder.iterdir())
    for path in TAKEN_OUT:
        (root / path).unlink()
    seconds, _, code, out = run(
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
    # Kept as .txt here: they are toolz's tests, not this repository's.
    shutil.copy(TESTS / f"{name.removesuffix('.py')}.txt", root / "toolz" / "tests" / name)
    load = os.getloadavg()[0]
    wall, cpu, code, out = run(
        [python, "-m", "pytest", "--quest", "submit", "--quest-id", quest, "--quest-format",
         "json", "-p", "no:cacheprovider"], root,
    )  # fmt: skip
    try:
        verdict = json.loads(out)["verdict"]
    except (ValueError, KeyError) as exc:
        raise SystemExit(
            f"{quest}: the submit gave no verdict (exit {code}, {exc}):\n{out[-2000:]}"
        )
    if code != EXIT_OF.get(verdict):
        # A REVIEW, a run that could not complete (exit 75), or one ended otherwise than its verdict says.
        raise SystemExit(f"{quest}: the submit ended with exit {code} ({verdict}):\n{out[-2000:]}")
    tests = covering(root, quest) or [f"toolz/tests/{name}"]
    data = json.loads((root / "quest.json").read_text(encoding="utf-8"))
    sandbox = data["quests"][quest].get("extra", {}).get("sandbox") or "none"
    plain, plain_cpu, plain_code, plain_out = run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], root
    )
    if plain_code != 0:
        raise SystemExit(f"{quest}: the covering tests failed alone:\n{plain_out[-2000:]}")
    return {"quest": quest, "verdict": verdict, "submit": wall, "plain": plain,
            "submit_cpu": cpu, "plain_cpu": plain_cpu, "tests": len(tests), "load": load,
            "sandbox": sandbox}  # fmt: skip


def table(label: str, rows: list[dict[str, object]]) -> list[str]:
    """Each quest's figures, and the medians against the target."""
    lines = [
        f"{label}:",
        f"{'quest':30} {'verdict':7} {'tests':>5} {'submit s':>8} {'plain s':>7} {'ratio':>6} "
        f"{'target s':>8} {'cpu s':>6} {'plain cpu':>9} {'cpu ratio':>9} {'load':>5} sandbox",
    ]
    for row in rows:
        submit, plain = float(row["submit"]), float(row["plain"])  # type: ignore[arg-type]
        cpu, plain_cpu = float(row["submit_cpu"]), float(row["plain_cpu"])  # type: ignore[arg-type]
        name = str(row["quest"]).rpartition("/")[2]
        lines.append(
            f"{name:30} {row['verdict']:7} {row['tests']:>5} {submit:8.2f} {plain:7.2f} "
            f"{submit / plain:6.2f} {2 * plain + 1:8.2f} {cpu:6.2f} {plain_cpu:9.2f} "
            f"{cpu / plain_cpu:9.2f} {row['load']:5.1f} {row['sandbox']}"
        )

    def median(key: str) -> float:
        return statistics.median(float(r[key]) for r in rows)  # type: ignore[arg-type]

    ratios = [float(r["submit"]) / float(r["plain"]) for r in rows]  # type: ignore[arg-type]
    met = [float(r["submit"]) / (2 * float(r["plain"]) + 1) for r in rows]  # type: ignore[arg-type]
    cpu_met = [
        float(r["submit_cpu"]) / (2 * float(r["plain_cpu"]) + 1)  # type: ignore[arg-type]
        for r in rows
    ]
    lines.append(
        f"median submit {median('submit'):.2f} s (CPU {median('submit_cpu'):.2f} s), median plain "
        f"{median('plain'):.2f} s (CPU {median('plain_cpu'):.2f} s); median ratio submit/plain "
        f"{statistics.median(ratios):.2f}; median submit / (2 x plain + 1 s) "
        f"{statistics.median(met):.2f} wall, {statistics.median(cpu_met):.2f} CPU "
        f"(at most 1.00: {met_or_not(statistics.median(met))} wall, "
        f"{met_or_not(statistics.median(cpu_met))} CPU)"
    )
    return lines


def met_or_not(ratio: float) -> str:
    """Whether a median ratio meets the target (at most 1)."""
    return "met" if ratio <= 1.0 else "NOT MET"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", type=Path, default=SDIST)
    parser.add_argument("--quests", type=int, default=len(QUESTS))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument(
        "--compare", metavar="PYTHON", help="also another checkout's interpreter, quest by quest"
    )
    args = parser.parse_args()
    if not args.sdist.exists():
        raise SystemExit(f"no sdist at {args.sdist}: pass --sdist (toolz 1.2.0)")
    pythons = [args.python] + ([args.compare] if args.compare else [])
    with tempfile.TemporaryDirectory(prefix="submit-cost-") as tmp:
        folder = Path(tmp)
        roots = [
            template(python, args.sdist, folder / f"project{index}")
            for index, python in enumerate(pythons)
        ]
        rows: list[list[dict[str, object]]] = [[] for _ in pythons]
        for name, quest in list(QUESTS.items())[: args.quests]:
            # Side by side: each interpreter's submit of this quest, one after the other.
            for index, python in enumerate(pythons):
                rows[index].append(one(python, roots[index], name, quest))
    for python, found in zip(pythons, rows):
        print("\n".join(table(python, found)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
