"""The cost of measuring the processes the tests start (issue 19), side by side in one run.

A generated suite whose tests start at least 100 Python processes
(``python -m pkg``, a script, a ``multiprocessing`` fork pool), timed in
interleaved rounds as:

* ``pytest`` (no measurement),
* ``pytest --cov=src/subpkg --cov-branch`` with coverage.py's own
  ``[run] patch = ["subprocess"]`` and ``concurrency = ["thread", "multiprocessing"]``
  in the project's configuration (pytest-cov 7 hands subprocesses to it),
* ``pytest --quest scan`` (a fresh ratchet each round; same project, same
  configuration: pytest-quest ignores the user's ``patch`` and measures the
  children per test itself).

Run by hand with the Python whose environment has pytest-quest, pytest-cov and
coverage installed (this checkout's venv)::

    python benchmarks/subprocess_cost.py                 # 120 processes, 3 rounds
    python benchmarks/subprocess_cost.py --tests 200 --rounds 5

Prints a markdown table: median wall seconds per configuration and the ratio
of the scan to ``--cov --cov-branch`` (the issue's target: at most 1.05x).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

PYPROJECT = """\
[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
quest_source = ["src/subpkg"]

[tool.coverage.run]
branch = true
source = ["src/subpkg"]
patch = ["subprocess"]
concurrency = ["thread", "multiprocessing"]
"""

CORE = """\
def classify(n):
    if n < 0:
        return "negative"
    if n == 0:
        return "zero"
    if n % 2:
        return "odd"
    return "even"


def total(values):
    result = 0
    for value in values:
        result += value
    return result


def square(x):
    return x * x
"""

MAIN = """\
import sys

from subpkg.core import classify, total

command, *args = sys.argv[1:]
if command == "classify":
    print(classify(int(args[0])))
else:
    print(total(int(a) for a in args))
"""

POOL = """\
import multiprocessing

from subpkg.core import square


def squares(values):
    pool = multiprocessing.get_context("fork").Pool(2)
    try:
        return pool.map(square, values)
    finally:
        pool.close()
        pool.join()
"""

HELPERS = """\
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))


def run_module(*args):
    return subprocess.run(
        [sys.executable, "-m", "subpkg", *args], capture_output=True, text=True, env=ENV, check=True
    ).stdout.strip()
"""

TEST_HEAD = """\
import pytest

from helpers import run_module
from subpkg.pool import squares


def test_pool():
    assert squares([1, 2, 3]) == [1, 4, 9]

"""

TEST_CASE = """\

@pytest.mark.parametrize("n", {values!r})
def test_classify_{index}(n):
    expected = "negative" if n < 0 else "zero" if n == 0 else "odd" if n % 2 else "even"
    assert run_module("classify", str(n)) == expected


def test_total_{index}():
    assert run_module("total", "1", "2", "{index}") == str(3 + {index})
"""


def make_project(folder: Path, processes: int) -> int:
    """The suite under `folder`; returns how many Python processes its tests start."""
    files = {
        "pyproject.toml": PYPROJECT,
        "src/subpkg/__init__.py": "",
        "src/subpkg/core.py": CORE,
        "src/subpkg/__main__.py": MAIN,
        "src/subpkg/pool.py": POOL,
        "tests/helpers.py": HELPERS,
    }
    body = TEST_HEAD
    started, index = 2, 0  # the pool's two workers
    while started < processes:
        values = [index - 2, index, index + 1]
        body += TEST_CASE.format(values=values, index=index)
        started += len(values) + 1
        index += 1
    files["tests/test_cli.py"] = body
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return started


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COVERAGE_", "COV_CORE_"))}
    for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        env.pop(name, None)
    return env


def timed(folder: Path, args: list[str]) -> float:
    for leftover in folder.glob("quest.json*"):
        leftover.unlink()
    for leftover in folder.glob(".coverage*"):
        leftover.unlink()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder,
        env=environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{done.stdout[-3000:]}{done.stderr}")
    return elapsed


CONFIGURATIONS = {
    "pytest": [],
    "pytest --cov --cov-branch (patch = subprocess)": ["--cov=src/subpkg", "--cov-branch"],
    "pytest --quest scan": ["--quest", "scan"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=120, help="Python processes to start (>= 100)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the generated project")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="subprocess-cost-"))
    try:
        started = make_project(folder, options.tests)
        times: dict[str, list[float]] = {name: [] for name in CONFIGURATIONS}
        for _ in range(options.rounds):
            for name, args in CONFIGURATIONS.items():
                times[name].append(timed(folder, args))
        medians = {name: statistics.median(values) for name, values in times.items()}
        cov = medians["pytest --cov --cov-branch (patch = subprocess)"]
        print(f"{started} Python processes started by the tests; {options.rounds} rounds; "
              f"Python {sys.version.split()[0]}\n")  # fmt: skip
        print("| configuration | median wall s | runs | ratio to --cov --cov-branch |")
        print("|---|---|---|---|")
        for name, median in medians.items():
            runs = ", ".join(f"{value:.1f}" for value in times[name])
            print(f"| {name} | {median:.2f} | {runs} | {median / cov:.3f}x |")
        ratio = medians["pytest --quest scan"] / cov
        print(f"\nscan / --cov --cov-branch: {ratio:.3f}x (target <= 1.05x: "
              f"{'MET' if ratio <= 1.05 else 'MISSED'})")  # fmt: skip
    finally:
        if options.keep:
            print(f"project kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
