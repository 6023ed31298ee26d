"""Issue 19: tests that reach the code only in other processes count, per test.

A small src-layout CLI project whose tests run it through ``python -m``, a
script file run with ``sys.executable`` (what an installed console entry
point does, without installing it: no network here), a ``multiprocessing``
fork pool and a spawn pool.  Its quests must match coverage.py's own
measurement of the passing tests (``patch = subprocess``, ``concurrency =
multiprocessing``), function by function; honest subprocess tests PASS, a
loose one FAILs with mutant facts, a failing one counts for nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.quests import ratchet_view
from tests.support.runner import child_environ

pytestmark = pytest.mark.slow

PYPROJECT = """\
[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
quest_source = ["src/clipkg"]

[tool.coverage.run]
branch = true
source = ["src/clipkg"]
"""

CORE = """\
def double(x):
    if x < 0:
        return -2 * x
    return 2 * x


def halve(x):
    return x / 2


def square(x):
    return x * x


def cube(x):
    if x == 0:
        return 0
    return x * x * x


def negate(x):
    return -x


def triple(x):
    return 3 * x
"""

CLI = """\
import sys

from clipkg.core import double, halve, negate, triple


def main(argv):
    if not argv:
        print("usage: clipkg CMD N", file=sys.stderr)
        return 2
    command, value = argv[0], int(argv[1])
    if command == "double":
        print(double(value))
    elif command == "halve":
        print(halve(value))
    elif command == "negate":
        print(negate(value))
    elif command == "triple":
        print(triple(value))
    else:
        print("unknown command", file=sys.stderr)
        return 1
    return 0
"""

MAIN = """\
import sys

from clipkg.cli import main

sys.exit(main(sys.argv[1:]))
"""

POOLS = """\
import multiprocessing

from clipkg.core import cube, square


def squares(values):
    pool = multiprocessing.get_context("fork").Pool(2)
    try:
        return pool.map(square, values)
    finally:
        pool.close()
        pool.join()


def cubes(values):
    pool = multiprocessing.get_context("spawn").Pool(2)
    try:
        return pool.map(cube, values)
    finally:
        pool.close()
        pool.join()
"""

# What an installed console script does: import the entry point and call it.
SCRIPT = """\
import sys

from clipkg.cli import main

sys.exit(main(sys.argv[1:]))
"""

HELPERS = """\
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))


def module(*args):
    return subprocess.run(
        [sys.executable, "-m", "clipkg", *args], capture_output=True, text=True, env=ENV
    )


def script(*args):
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "bin", "clipkg-script"), *args],
        capture_output=True, text=True, env=ENV,
    )


def pools(code):
    return subprocess.run(
        [sys.executable, "-c", "from clipkg import pools; print(" + code + ")"],
        capture_output=True, text=True, env=ENV,
    )
"""

TESTS = """\
from helpers import module, pools, script


def test_double_through_python_m():
    done = module("double", "3")
    assert (done.returncode, done.stdout) == (0, "6\\n")


def test_usage_through_the_script():
    done = script()
    assert done.returncode == 2 and "usage" in done.stderr


def test_squares_in_a_fork_pool():
    assert pools("pools.squares([1, 2, 3])").stdout == "[1, 4, 9]\\n"


def test_cubes_in_a_spawn_pool():
    assert pools("pools.cubes([2, 3])").stdout == "[8, 27]\\n"


def test_halve_failing():
    done = module("halve", "3")
    assert done.stdout == "99\\n"  # wrong on purpose: what it ran counts for nothing
"""

HONEST = """\
from helpers import script


def test_negate_through_the_script():
    done = script("negate", "4")
    assert (done.returncode, done.stdout) == (0, "-4\\n")
"""

LOOSE = """\
from helpers import module


def test_triple_runs():
    assert module("triple", "4").returncode == 0
"""

CORE_ID = "src/clipkg/core.py::{}"


def run(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=folder,
        env=env or child_environ(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def quest(folder: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = run(folder, "-m", "pytest", "-p", "pytest_quest.plugin.hooks", "-p",
               "no:cacheprovider", *args, "--quest-format", "json", env=env)  # fmt: skip
    assert done.stdout.strip(), done.stderr[-3000:]
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def coverage_missing(folder: Path) -> dict[str, list[int]]:
    """coverage.py's own measurement of the passing tests: missing lines per function."""
    rc = folder / "coverage-own.rc"
    rc.write_text(
        "[run]\nbranch = true\nsource = src/clipkg\nparallel = true\n"
        "patch = subprocess\nconcurrency = thread, multiprocessing\n"
        f"data_file = {folder}/own/.coverage\n"
    )
    (folder / "own").mkdir()
    env = child_environ()
    env["COVERAGE_RCFILE"] = str(rc)
    ran = run(folder, "-m", "coverage", "run", "-m", "pytest", "-p", "no:cacheprovider",
              "-q", "--deselect", "tests/test_cli.py::test_halve_failing", env=env)  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-2000:]
    for step in (["combine"], ["json", "-o", str(folder / "own.json")]):
        done = run(folder, "-m", "coverage", *step, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((folder / "own.json").read_text())
    missing = {}
    for name, data in report["files"].items():
        for function, facts in data["functions"].items():
            if function and facts["summary"]["num_statements"]:
                missing[f"{name}::{function}"] = facts["missing_lines"]
    return missing


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("clipkg")
    files = {
        "pyproject.toml": PYPROJECT,
        "src/clipkg/__init__.py": "",
        "src/clipkg/core.py": CORE,
        "src/clipkg/cli.py": CLI,
        "src/clipkg/__main__.py": MAIN,
        "src/clipkg/pools.py": POOLS,
        "bin/clipkg-script": SCRIPT,
        "tests/helpers.py": HELPERS,
        "tests/test_cli.py": TESTS,
    }
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for step in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                                                 "commit", "-qm", "cli"]):  # fmt: skip
        subprocess.run(["git", *step], cwd=folder, check=True, capture_output=True)
    return folder


@pytest.fixture(scope="module")
def scanned(cli: Path) -> dict[str, Any]:
    own = coverage_missing(cli)
    # The user's own subprocess measurement is set aside, and writes nothing here.
    user = cli / "user.rc"
    user.write_text(f"[run]\ndata_file = {cli}/.coverage-user\nparallel = true\n")
    env = dict(child_environ(), COVERAGE_PROCESS_START=str(user))
    data = quest(cli, "--quest", "scan", env=env)
    ratchet = ratchet_view((cli / "quest.json").read_bytes())
    return {"own": own, "scan": data, "quests": ratchet["quests"]}


def test_quests_match_coverage_py_measuring_the_passing_tests(scanned: dict[str, Any]) -> None:
    quests, own = scanned["quests"], scanned["own"]
    ours = {qid: q["missing_lines"] for qid, q in quests.items()}
    assert set(ours) == set(own)
    assert ours == own
    # Reached only in children, and counted:
    assert quests[CORE_ID.format("square")]["state"] == "PASS"  # a fork pool worker
    assert quests[CORE_ID.format("cube")]["missing_lines"] == [17]  # a spawn pool worker
    assert quests[CORE_ID.format("double")]["missing_lines"] == [3]  # `python -m`
    main = quests["src/clipkg/cli.py::main"]
    assert main["covering_tests"] == [
        "tests/test_cli.py::test_double_through_python_m",
        "tests/test_cli.py::test_usage_through_the_script",
    ]
    assert quests[CORE_ID.format("square")]["covering_tests"] == [
        "tests/test_cli.py::test_squares_in_a_fork_pool"
    ]


def test_a_failing_subprocess_test_counts_for_nothing(scanned: dict[str, Any]) -> None:
    halve = scanned["quests"][CORE_ID.format("halve")]
    assert halve["state"] == "TODO" and halve["missing_lines"] == [8]
    assert halve["covering_tests"] == []


def test_no_coverage_data_is_left_in_the_project(cli: Path, scanned: dict[str, Any]) -> None:
    left = [p for p in cli.rglob(".coverage*") if "own" not in p.parts]
    assert left == []


def test_an_honest_subprocess_test_passes_and_a_loose_one_fails_with_mutant_facts(
    cli: Path, scanned: dict[str, Any]
) -> None:
    (cli / "tests" / "test_negate.py").write_text(HONEST)
    passed = quest(cli, "--quest", "submit", "--quest-id", CORE_ID.format("negate"))
    assert passed["verdict"] == "PASS", passed
    (cli / "tests" / "test_triple.py").write_text(LOOSE)
    failed = quest(cli, "--quest", "submit", "--quest-id", CORE_ID.format("triple"))
    assert failed["verdict"] == "FAIL", failed
    facts = failed["quest"]["facts"]
    assert facts and all(f["check"].startswith("mutation.") for f in facts), facts
    assert any("return pytest_quest_changed(3 * x)" in f["message"] for f in facts)
