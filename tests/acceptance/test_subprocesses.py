"""Tests that reach the code only in other processes count, per test.

A small src-layout CLI project whose tests run it through ``python -m``, its
console script installed in a virtualenv of its own, a ``multiprocessing``
fork pool and a spawn pool (inside ``python -c``), and a forkserver pool and
a ``ProcessPoolExecutor`` started by the measured pytest itself.  Its quests
must match coverage.py's own measurement of the passing tests (``patch =
subprocess``, ``concurrency = multiprocessing``), function by function;
honest subprocess tests PASS, a loose one FAILs with mutant facts, a failing
one counts for nothing.

The console script: the project is installed (editable, with pip, offline)
into one throwaway virtualenv per module.  Its build backend is in the tree
(``backend-path``): nothing to download, whatever the running Python ships.
The virtualenv sees the running one's packages (pytest, coverage.py and its
start-up ``.pth``, pytest-quest) through a ``.pth`` of its own
(``--system-site-packages`` would give the base interpreter's instead).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.quests import ratchet_view
from tests.support.runner import child_environ

pytestmark = [pytest.mark.slow, pytest.mark.children_measured]

PYPROJECT = """\
[build-system]
requires = []
build-backend = "backend"
backend-path = ["_build"]

[project]
name = "clipkg"
version = "0.1"

[project.scripts]
clipkg = "clipkg.cli:main"

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


def increment(x):
    return x + 1


def decrement(x):
    return x - 1


def scale(x):
    return 10 * x


def offset(x):
    return x + 7
"""

# A PEP 517/660 build backend in the tree: what pip needs to install the
# project and make its console script (setuptools without `wheel`, or no
# setuptools at all, cannot build offline).  The entry points are those of
# pyproject.toml's [project.scripts].
BACKEND = """\
import base64
import hashlib
import os
import zipfile

NAME, VERSION = "clipkg", "0.1"
DIST = NAME + "-" + VERSION + ".dist-info"
SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
METADATA = {
    "METADATA": "Metadata-Version: 2.1\\nName: clipkg\\nVersion: 0.1\\n",
    "WHEEL": "Wheel-Version: 1.0\\nGenerator: backend\\nRoot-Is-Purelib: true\\n"
    "Tag: py3-none-any\\n",
    "entry_points.txt": "[console_scripts]\\nclipkg = clipkg.cli:main\\n",
}


def _wheel(folder, files):
    name = NAME + "-" + VERSION + "-py3-none-any.whl"
    files = dict(files, **{DIST + "/" + key: text for key, text in METADATA.items()})
    record = []
    with zipfile.ZipFile(os.path.join(folder, name), "w") as wheel:
        for path, text in files.items():
            data = text.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(path + ",sha256=" + digest.decode() + "," + str(len(data)))
            wheel.writestr(path, data)
        wheel.writestr(DIST + "/RECORD", "\\n".join(record + [DIST + "/RECORD,,"]) + "\\n")
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {"_clipkg.pth": SRC + "\\n"})


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {}
    for folder, _, names in os.walk(os.path.join(SRC, NAME)):
        for name in names:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    files[os.path.relpath(os.path.join(folder, name), SRC)] = handle.read()
    return _wheel(wheel_directory, files)
"""

CLI = """\
import sys

from clipkg.core import double, halve, negate, triple


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
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
import concurrent.futures
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


def forkserver_map(function, values):
    context = multiprocessing.get_context("forkserver")
    # The server imports the code under test once; every worker is its fork.
    context.set_forkserver_preload(["clipkg.core"])
    pool = context.Pool(1)
    try:
        return pool.map(function, values)
    finally:
        pool.close()
        pool.join()


def executor_map(function, values):
    context = multiprocessing.get_context("forkserver")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as executor:
        return list(executor.map(function, values))
"""

HELPERS = """\
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))


def module(*args):
    return subprocess.run(
        [sys.executable, "-m", "clipkg", *args], capture_output=True, text=True, env=ENV
    )


def script(*args):
    # The installed console script, found on PATH as a user's shell would.
    found = shutil.which("clipkg")
    assert found, "the clipkg console script is not installed"
    return subprocess.run([found, *args], capture_output=True, text=True)


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


def test_usage_through_the_console_script():
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

# In the measured pytest itself: the forkserver started by the first test
# must not carry its measurement (or, in the gate, its mutant) to the next.
POOL_TESTS = """\
from clipkg.core import decrement, increment, scale
from clipkg.pools import executor_map, forkserver_map


def test_increment_in_a_forkserver_pool():
    assert forkserver_map(increment, [1, 2]) == [2, 3]


def test_decrement_in_a_forkserver_pool_failing():
    assert forkserver_map(decrement, [1, 2]) == [99]  # wrong on purpose


def test_scale_in_a_process_pool_executor():
    assert executor_map(scale, [1, 2]) == [10, 20]
"""

HONEST = """\
from helpers import script


def test_negate_through_the_console_script():
    done = script("negate", "4")
    assert (done.returncode, done.stdout) == (0, "-4\\n")
"""

LOOSE = """\
from helpers import script


def test_triple_runs():
    assert script("triple", "4").returncode == 0
"""

# A forkserver pool with the code under test preloaded, started anew for
# each run of the gate's mutation child: each run's workers run its mutant.
FORKSERVER_HONEST = """\
from clipkg.core import offset
from clipkg.pools import forkserver_map


def test_offset_in_a_forkserver_pool():
    assert forkserver_map(offset, [0, 3]) == [7, 10]
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


def quest_text(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run(folder, "-m", "pytest", "-p", "pytest_quest.plugin.hooks", "-p",
               "no:cacheprovider", *args, env=env)  # fmt: skip


def quest(folder: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = quest_text(folder, *args, "--quest-format", "json", env=env)
    assert done.stdout.strip(), done.stderr[-3000:]
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def coverage_missing(folder: Path, env: dict[str, str]) -> dict[str, list[int]]:
    """coverage.py's own measurement of the passing tests: missing lines per function."""
    rc = folder / "coverage-own.rc"
    rc.write_text(
        "[run]\nbranch = true\nsource = src/clipkg\nparallel = true\n"
        "patch = subprocess\nconcurrency = thread, multiprocessing\n"
        f"data_file = {folder}/own/.coverage\n"
    )
    (folder / "own").mkdir()
    env = dict(env, COVERAGE_RCFILE=str(rc))
    failing = ["tests/test_cli.py::test_halve_failing",
               "tests/test_pools.py::test_decrement_in_a_forkserver_pool_failing"]  # fmt: skip
    deselect = [arg for nodeid in failing for arg in ("--deselect", nodeid)]
    ran = run(folder, "-m", "coverage", "run", "-m", "pytest", "-p", "no:cacheprovider",
              "-q", *deselect, env=env)  # fmt: skip
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
        "_build/backend.py": BACKEND,
        "tests/helpers.py": HELPERS,
        "tests/test_cli.py": TESTS,
        "tests/test_pools.py": POOL_TESTS,
    }
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for step in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                                                 "commit", "-qm", "cli"]):  # fmt: skip
        subprocess.run(["git", *step], cwd=folder, check=True, capture_output=True)
    return folder


def install(folder: Path, venv: Path) -> dict[str, str]:
    """Install the project at `folder` (editable) into a new virtualenv `venv`.

    The environment whose PATH finds its console script.  The virtualenv
    reaches the running one's packages through a ``.pth`` that adds them as a
    site folder (their own ``.pth`` files, coverage.py's start-up hook
    included, are processed).
    """
    env = child_environ()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)],
                   check=True, capture_output=True, env=env)  # fmt: skip
    python = venv / "bin" / "python"
    ask = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = subprocess.run([str(python), "-c", ask], check=True, capture_output=True, text=True)
    ours = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    bridge = "".join(f"import site; site.addsitedir({path!r})\n" for path in sorted(ours))
    (Path(site.stdout.strip()) / "_running_venv.pth").write_text(bridge)
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-build-isolation", "--no-index", "--disable-pip-version-check", "-e", str(folder)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stdout + pip.stderr
    assert (venv / "bin" / "clipkg").is_file()
    return dict(env, PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")


@pytest.fixture(scope="module")
def installed(cli: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of every run here: the project's console script on PATH."""
    return install(cli, tmp_path_factory.mktemp("venv") / "venv")


@pytest.fixture(scope="module")
def scanned(cli: Path, installed: dict[str, str]) -> dict[str, Any]:
    own = coverage_missing(cli, installed)
    # The user's own subprocess measurement is set aside, and writes nothing here.
    user = cli / "user.rc"
    user.write_text(f"[run]\ndata_file = {cli}/.coverage-user\nparallel = true\n")
    env = dict(installed, COVERAGE_PROCESS_START=str(user))
    done = quest_text(cli, "--quest", "scan", env=env)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # tests failed
    ratchet = ratchet_view((cli / "quest.json").read_bytes())
    return {"own": own, "scan": done.stdout, "quests": ratchet["quests"]}


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
        "tests/test_cli.py::test_usage_through_the_console_script",
    ]
    assert main["missing_lines"] == own["src/clipkg/cli.py::main"] != []
    assert quests[CORE_ID.format("square")]["covering_tests"] == [
        "tests/test_cli.py::test_squares_in_a_fork_pool"
    ]


def test_a_forkserver_started_by_one_test_counts_nothing_for_the_next(
    scanned: dict[str, Any],
) -> None:
    quests = scanned["quests"]
    # Test A starts the forkserver and passes: its workers count for A.
    increment = quests[CORE_ID.format("increment")]
    assert increment["state"] == "PASS"
    assert increment["covering_tests"] == [
        "tests/test_pools.py::test_increment_in_a_forkserver_pool"
    ]
    # Test B fails: its workers count for nothing (and for no other test).
    decrement = quests[CORE_ID.format("decrement")]
    assert (decrement["state"], decrement["covering_tests"]) == ("TODO", [])
    # A ProcessPoolExecutor on a forkserver of its own test.
    scale = quests[CORE_ID.format("scale")]
    assert (scale["state"], scale["covering_tests"]) == (
        "PASS",
        ["tests/test_pools.py::test_scale_in_a_process_pool_executor"],
    )
    # No data of B's workers was written into A's name after A ended.
    assert "left out" not in scanned["scan"], scanned["scan"]


def test_a_failing_subprocess_test_counts_for_nothing(scanned: dict[str, Any]) -> None:
    halve = scanned["quests"][CORE_ID.format("halve")]
    assert halve["state"] == "TODO" and halve["missing_lines"] == [8]
    assert halve["covering_tests"] == []


def test_no_coverage_data_is_left_in_the_project(cli: Path, scanned: dict[str, Any]) -> None:
    left = [p for p in cli.rglob(".coverage*") if "own" not in p.parts]
    assert left == []


def test_an_honest_console_script_test_passes_and_a_loose_one_fails_with_mutant_facts(
    cli: Path, installed: dict[str, str], scanned: dict[str, Any]
) -> None:
    (cli / "tests" / "test_negate.py").write_text(HONEST)
    passed = quest(cli, "--quest", "submit", "--quest-id", CORE_ID.format("negate"), env=installed)
    assert passed["verdict"] == "PASS", passed
    (cli / "tests" / "test_triple.py").write_text(LOOSE)
    failed = quest(cli, "--quest", "submit", "--quest-id", CORE_ID.format("triple"), env=installed)
    assert failed["verdict"] == "FAIL", failed
    facts = failed["quest"]["facts"]
    assert facts and all(f["check"].startswith("mutation.") for f in facts), facts
    # The changed return shown as what it does, never as the child's instrumentation.
    assert any("`3 * x`" in f["message"] for f in facts), facts
    assert not any("pytest_quest_changed" in f["message"] for f in facts), facts


def test_an_honest_forkserver_test_passes_each_mutant_applied_in_its_workers(
    cli: Path, installed: dict[str, str], scanned: dict[str, Any]
) -> None:
    # The forkserver preloads the module under test: one kept from an earlier
    # run of the mutation child would fork workers running another mutant (or
    # none), and this honest test would be REVIEW.
    (cli / "tests" / "test_offset.py").write_text(FORKSERVER_HONEST)
    done = quest(cli, "--quest", "submit", "--quest-id", CORE_ID.format("offset"), env=installed)
    assert done["verdict"] == "PASS", done
