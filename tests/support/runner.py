"""The one way tests start pytest in a child process: one environment rule, one set of flags.

The child sees none of this run's own pytest, xdist or coverage settings, except
the self-coverage variables when ``PYTEST_QUEST_SELFCOV=1`` (run-tests.sh): then
coverage.py's subprocess measurement follows the child and the gate's children.
Every process a test starts makes its temporary files in a folder of this run's
pytest basetemp (``TMPDIR``, one folder per test: `private_tmpdir`, tests/conftest.py),
never in the system's: what a judge killed with SIGKILL leaves there (docs/judge.md)
goes with pytest's old basetemps instead of piling up in /tmp.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

# Cleared from a child's environment: they would change how the child runs.
CLEARED_PREFIXES = ("COVERAGE_", "COV_CORE_", "PYTEST_XDIST_", "PYTEST_QUEST_")
CLEARED = frozenset(
    {"PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_CURRENT_TEST"}
)
# Kept when this run measures itself (run-tests.sh sets PYTEST_QUEST_SELFCOV=1).
# PYTEST_QUEST_SELFCOV=1: this run measures itself; tests/conftest.py sets it per test
# (`children_self_coverage`).
SELF_COVERAGE_SWITCH = "PYTEST_QUEST_SELFCOV"
# The folders of tests/ whose tests start their children unmeasured unless marked.
END_TO_END_FOLDERS = ("e2e", "acceptance")
SELF_COVERAGE = frozenset({"COVERAGE_PROCESS_CONFIG", "COVERAGE_COVERAGE", SELF_COVERAGE_SWITCH})
# Settings a test may give a child on purpose (monkeypatch.setenv): passed on, and
# removed from the outer environment before each test (tests/conftest.py), so a
# child sees only what its test set.
SETTINGS = (
    "PYTEST_QUEST_VERIFY",
    "GITHUB_ACTIONS",
    "GITHUB_STEP_SUMMARY",
    # Which sandbox engines the judge may start (engine/sandbox.py): a test forces one.
    "PYTEST_QUEST_SANDBOX_ENGINES",
)

# The child loads only pytest-quest (no hypothesis, xdist or pytest-cov: importing
# them is most of a child's start-up) and writes no cache.  The gate's own
# children follow PYTEST_DISABLE_PLUGIN_AUTOLOAD too (engine.runner.child_command).
FAST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
FAST = ["-p", "pytest_quest.plugin.hooks", "-p", "no:cacheprovider"]
# With every installed plugin (xdist, pytest-cov): only the cache is off.
FULL: list[str] = ["-p", "no:cacheprovider"]

# Where a child's tempfile folders go (Python reads TMPDIR first; Linux and macOS).
TEMP_VARIABLE = "TMPDIR"


def private_tmpdir(root: Path, name: str) -> Path:
    """A new, empty folder under `root` (pytest's basetemp) for `name`'s children's TMPDIR."""
    prefix = "".join(c if c.isalnum() else "_" for c in name)[:40] + "-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=root))


def children_self_coverage(session: str | None, *, end_to_end: bool, marked: bool) -> str | None:
    """The self-coverage switch for what a test (or a module's fixtures) starts; None: as the session's.

    Under run-tests.sh's self-measurement (`session` "1") an end-to-end test's
    children are measured only where it is marked `children_measured`: those
    tests reach every line the children of all reached (docs/ci.md); the
    others' children ran those lines again, at about 80 ms of coverage.py each.
    """
    if session not in ("1", "all") or not end_to_end:
        return None
    # "all": every end-to-end test's children (benchmarks/coverage_carriers.py).
    return "1" if marked or session == "all" else "0"


def child_environ(
    environ: Mapping[str, str] | None = None, *, autoload: bool = False
) -> dict[str, str]:
    """The environment of a child pytest: `environ` (default os.environ) under the rule."""
    environ = os.environ if environ is None else environ
    selfcov = environ.get(SELF_COVERAGE_SWITCH) == "1"
    env = {
        key: value
        for key, value in environ.items()
        if (selfcov and key in SELF_COVERAGE)
        or key in SETTINGS
        or not (key in CLEARED or key.startswith(CLEARED_PREFIXES))
    }
    if not autoload:
        env.update(FAST_ENV)
    return env


def pytest_command(*args: str, autoload: bool = False) -> list[str]:
    return [sys.executable, "-m", "pytest", *(FULL if autoload else FAST), *args]


def run_pytest(
    folder: Path, *args: str, autoload: bool = False, timeout: float = 300
) -> pytest.RunResult:
    """``pytest *args`` in `folder`; the result as pytester gives it."""
    start = time.monotonic()
    completed = subprocess.run(
        pytest_command(*args, autoload=autoload),
        cwd=folder,
        env=child_environ(autoload=autoload),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    ret: int | pytest.ExitCode
    try:
        ret = pytest.ExitCode(completed.returncode)
    except ValueError:
        ret = completed.returncode
    return pytest.RunResult(
        ret,
        completed.stdout.splitlines(),
        completed.stderr.splitlines(),
        time.monotonic() - start,
    )


def popen_pytest(
    folder: Path,
    *args: str,
    autoload: bool = False,
    merge_stderr: bool = False,
    interactive: bool = False,
) -> subprocess.Popen[str]:
    """``pytest *args`` started in `folder`, its output on pipes (stderr into stdout if asked).

    `interactive`: Ctrl-C works in it as in a terminal, whatever this process inherited.
    """
    command = pytest_command(*args, autoload=autoload)
    return subprocess.Popen(
        [sys.executable, "-c", AS_FROM_A_TERMINAL, *command] if interactive else command,
        cwd=folder,
        env=child_environ(autoload=autoload),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        text=True,
    )


#: Runs its arguments (exec: the same process id) with SIGINT and SIGQUIT at their
#: defaults, as a shell's foreground job has them.  A suite started in the background by
#: a non-interactive shell (``cmd &``, ``nohup``) inherits SIGINT ignored, and Python
#: then never turns Ctrl-C into KeyboardInterrupt: a test of what Ctrl-C does would hang.
AS_FROM_A_TERMINAL = (
    "import os, signal, sys; "
    "signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "signal.signal(signal.SIGQUIT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


#: What a pytest header or summary line shows: a command that runs no test prints none of it.
NOISE = ("test session starts", "no tests ran", "platform linux", "rootdir:", "plugins:")


def assert_quiet(result: pytest.RunResult) -> None:
    """`result` printed no pytest header, summary line or ``====`` rule."""
    everything = result.stdout.str() + result.stderr.str()
    for noise in NOISE:
        assert noise not in everything, (noise, everything)
    assert "=" * 10 not in everything, everything


def parse_json(result: pytest.RunResult) -> dict[str, Any]:
    """The one JSON object a ``--quest-format json`` run printed."""
    text = result.stdout.str()
    try:
        data: dict[str, Any] = json.loads(text)
    except ValueError:
        raise AssertionError(
            f"stdout is not one JSON object:\n{text}\n{result.stderr.str()}"
        ) from None
    return data


def run_quest(path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """One ``pytest --quest ...`` in `path`, JSON output; (exit status, data, stderr)."""
    result = run_pytest(path, *args, "--quest-format", "json")
    return int(result.ret), parse_json(result), result.stderr.str()
