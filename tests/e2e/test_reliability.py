"""Rows of the bad-input table (docs/reliability.md) not covered elsewhere.

``tests/test_bad_input.py`` covers bad options, unknown ids, a missing
source, syntax and collection errors at scan; ``tests/test_loop.py`` a test
that never ends.  Here: where the ratchet file lives and whether it can be
written, the lock, and what a submit makes of broken code or tests.  Every
case runs real pytest processes and checks the exit status, the one-line
message and that the ratchet file's bytes did not change.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_quest.app.environment import interrupted_done
from pytest_quest.core.environment import BEGUN_KEY
from tests.support.paths import DOCS
from tests.support.projects import (
    CALC,
    SIGN,
    Project,
    quest_files,
    scanned_template,
    scanned_unsandboxed,
)
from tests.support.projects import TEST_DOUBLE as TEST_CALC
from tests.support.quests import ratchet_view, without_begun_marks
from tests.support.runner import child_environ, popen_pytest


def calc_project(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_calc", TEST_CALC)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return scanned_template(tmp_path_factory, calc_project)[0]


@pytest.fixture
def scanned(project: Project, template: Project) -> Project:
    """The project scanned (a copy of the module's template)."""
    return project.fill_from(template)


def error_line(result: pytest.RunResult) -> str:
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    lines = [line for line in output.splitlines() if line.startswith("ERROR: ")]
    assert len(lines) == 1, output
    return lines[0]


# -- where the ratchet file is ---------------------------------------------------------


def test_ratchet_folder_that_does_not_exist(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_calc", TEST_CALC)
    result = project.run("--quest", "scan", "--quest-file", "nowhere/quest.json")
    assert result.ret == 4
    folder = Path(project.path) / "nowhere"
    assert error_line(result) == (
        f"ERROR: {folder}/quest.json: its folder {folder} does not exist "
        "(create the folder or point --quest-file elsewhere)"
    )
    assert not folder.exists()
    result = project.run("--quest", "next", "--quest-file", "nowhere/quest.json")
    assert result.ret == 4
    assert error_line(result) == (
        f"ERROR: no ratchet file at {folder}/quest.json: run `pytest --quest scan` first"
    )


def test_ratchet_file_that_is_a_folder(project: Project) -> None:
    project.source("calc", CALC)
    result = project.run("--quest-status", "--quest-file", "src")
    assert result.ret == 4
    assert error_line(result) == (
        f"ERROR: {project.path}/src: is a folder, not a file (point --quest-file at a file)"
    )


# -- a read-only ratchet file ---------------------------------------------------------------

MARKER_TEST = """\
from pathlib import Path

from pkg.calc import sign


def test_sign():
    Path({marker!r}).write_text("ran")
    assert sign(-1) == -1
    assert sign(1) == 1
"""


def test_read_only_ratchet_file(scanned: Project) -> None:
    path = Path(scanned.path) / "quest.json"
    marker = Path(scanned.path) / "tests-ran"
    scanned.test("test_sign", MARKER_TEST.format(marker=str(marker)))
    path.chmod(0o444)
    before = path.read_bytes()
    expected = f"ERROR: {path}: is read-only (make it writable with chmod u+w to record results)"
    for args in (
        ("--quest", "next"),  # would record the active quest
        ("--quest", "submit", "--quest-id", SIGN),
        ("--quest", "scan"),
        ("--quest-reopen", SIGN),
    ):
        marker.unlink(missing_ok=True)
        result = scanned.run(*args)
        assert result.ret == 4, args
        assert error_line(result) == expected, args
        assert path.read_bytes() == before
        if args[1:2] == ("submit",):
            # Refused before the tests ran: no time spent judging what cannot be recorded.
            assert not marker.exists()
    # Reading needs no write.
    result = scanned.run("--quest-status")
    assert result.ret == 0
    assert path.read_bytes() == before


# -- the lock ---------------------------------------------------------------------------------

HOLD_LOCK = """
import sys, time
from filelock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire()
print("locked", flush=True)
time.sleep(60)
"""


@pytest.fixture
def lock_holder(scanned: Project) -> Iterator[subprocess.Popen[str]]:
    """Another live process holding the ratchet file's lock (a pytest-quest writing, say)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(Path(scanned.path) / ".quest" / "quest.json.lock")],
        stdout=subprocess.PIPE,
        text=True,
        env=child_environ(),
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "locked"
    process.stdout.close()
    yield process
    process.kill()
    process.wait()


@pytest.mark.slow  # waits out a timeout
def test_lock_held_too_long_is_a_clear_error_after_the_timeout(
    scanned: Project, lock_holder: subprocess.Popen[str]
) -> None:
    path = Path(scanned.path) / "quest.json"
    before = path.read_bytes()
    started = time.monotonic()
    result = scanned.run("--quest", "next", "--quest-lock-timeout", "1.5")
    waited = time.monotonic() - started
    assert result.ret == 4
    assert error_line(result) == (
        f"ERROR: {scanned.path}/.quest/quest.json.lock: could not take the ratchet file's lock "
        "within 1.5s; another "
        "process holds it (a running pytest-quest command). Retry when it is done, or raise "
        "--quest-lock-timeout"
    )
    assert waited >= 1.5
    assert path.read_bytes() == before
    # The ini option works the same way.
    pyproject = Path(scanned.path) / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            "[tool.pytest.ini_options]\n", '[tool.pytest.ini_options]\nquest_lock_timeout = "1"\n'
        )
    )
    result = scanned.run("--quest", "next")
    assert result.ret == 4
    assert "could not take the ratchet file's lock within 1s" in error_line(result)
    # Readers never wait for the lock.
    result = scanned.run("--quest-status")
    assert result.ret == 0
    assert path.read_bytes() == before


def test_lock_of_a_killed_process_does_not_block(
    scanned: Project, lock_holder: subprocess.Popen[str]
) -> None:
    lock_holder.kill()  # SIGKILL: its lock file stays, its lock goes with it
    lock_holder.wait()
    assert (Path(scanned.path) / ".quest" / "quest.json.lock").exists()
    started = time.monotonic()
    result, data = scanned.run_json("--quest", "next", "--quest-lock-timeout", "30")
    assert result.ret == 0
    assert data["quest"]["id"] == SIGN
    assert scanned.ratchet()["active"] == SIGN
    assert time.monotonic() - started < 25  # never waited out the 30 s


# Two through a whole pytest; every value for both options in-process
# (tests/e2e/test_options.py::test_bad_timeouts_name_the_option).
@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [
        ("--quest-lock-timeout", "soon", "'soon' is not a number of seconds"),
        ("--quest-timeout", "0", "0 must be more than 0 seconds"),
    ],
)
def test_bad_timeouts_are_usage_errors(
    project: Project, option: str, value: str, problem: str
) -> None:
    result = project.run("--quest", "next", f"{option}={value}")
    assert result.ret == 4
    assert f"argument {option}: {problem}" in result.stderr.str()
    assert quest_files(project) == []


# -- a submit on broken code or tests -------------------------------------------------------


def test_submit_with_a_syntax_error_in_the_code_under_test(scanned: Project) -> None:
    path = Path(scanned.path) / "quest.json"
    scanned.source("calc", CALC + "\n\ndef oops(:\n    pass\n")
    before = path.read_bytes()
    result = scanned.run("--quest", "submit", "--quest-id", SIGN)
    assert result.ret == 4
    assert error_line(result) == (
        "ERROR: src/pkg/calc.py:11: syntax error in the code under test: invalid syntax; "
        "fix it before running pytest-quest"
    )
    assert path.read_bytes() == before  # no verdict, no try spent


def test_submit_with_a_collection_error_in_the_tests_spends_no_try(scanned: Project) -> None:
    path = Path(scanned.path) / "quest.json"
    before = path.read_bytes()
    scanned.test("test_sign", "from pkg.calc import sign\nimport no_such_module_here\n")
    result = scanned.run("--quest", "submit", "--quest-id", SIGN)
    assert result.ret == 4
    line = error_line(result)
    assert line.startswith(
        "ERROR: collection error in test files new or changed since the scan (tests/test_sign.py:2: "
    )
    assert "No module named 'no_such_module_here'" in line
    assert line.endswith("nothing was judged, no try spent")
    assert path.read_bytes() == before
    assert quest_files(scanned) == [
        ".quest/quest.json.judging.lock",
        ".quest/quest.json.lock",
        ".quest/quest.json.run.gz",
        "quest.json",
    ]


def test_submit_when_the_source_folder_is_gone(scanned: Project) -> None:
    path = Path(scanned.path) / "quest.json"
    before = path.read_bytes()
    (Path(scanned.path) / "src" / "pkg").rename(Path(scanned.path) / "moved")
    result = scanned.run("--quest", "submit", "--quest-id", SIGN)
    assert result.ret == 4
    assert error_line(result) == (
        f"ERROR: source {scanned.path}/src/pkg does not exist (under {scanned.path}); "
        "fix --quest-source or the quest_source ini option"
    )
    assert path.read_bytes() == before


# No temporary file after normal runs (next, submits, status): test_loop.py's
# test_submit_pass_then_fail_then_done, which runs them anyway.


# -- Ctrl-C ---------------------------------------------------------------------------------

ENDLESS_TEST = """\
import os
import time
from pathlib import Path

from pkg.calc import sign


def test_sign():
    sign(-1)
    Path({pid_file!r}).write_text(str(os.getpid()))
    while True:
        time.sleep(0.05)
"""


def interrupt_when_started(project: Project, pid_file: Path, *args: str) -> tuple[int, str]:
    """Run pytest with `args`, press Ctrl-C (SIGINT) once the endless test runs."""
    process = popen_pytest(project.path, *args, merge_stderr=True, interactive=True)
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid_file.exists(), "the endless test never started"
    process.send_signal(signal.SIGINT)
    try:
        out, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()  # not left running into the next tests
        process.communicate()
        raise
    return process.returncode, out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie no one has reaped yet is dead too.
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


@pytest.mark.parametrize("command", ["submit", "scan"])
@pytest.mark.unsandboxed  # the pid the test writes in the project, seen from outside
def test_ctrl_c_records_nothing_and_leaves_no_process(scanned: Project, command: str) -> None:
    scanned_unsandboxed(scanned)
    path = Path(scanned.path) / "quest.json"
    pid_file = Path(scanned.path) / "test-pid"
    scanned.test("test_sign", ENDLESS_TEST.format(pid_file=str(pid_file)))
    before = path.read_bytes()
    args = ["--quest", command] + (["--quest-id", SIGN] if command == "submit" else [])
    returncode, out = interrupt_when_started(scanned, pid_file, *args)
    assert returncode == 2, out
    if command == "submit":
        # Not a verdict: only the mark written before the run, which the next submit counts.
        assert f"INTERRUPTED: {interrupted_done(1, 1)}; run the command again" in out.splitlines()
        assert without_begun_marks(path.read_bytes()) == ratchet_view(before)
        assert BEGUN_KEY in ratchet_view(path.read_bytes())["quests"][SIGN]["extra"]
    else:
        assert "INTERRUPTED: nothing was recorded; run the command again" in out.splitlines()
        assert path.read_bytes() == before  # not a partial scan
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid), "the tests under judgment kept running"
    assert quest_files(scanned) in (
        [".quest/quest.json.lock", ".quest/quest.json.run.gz", "quest.json"],
        [
            ".quest/quest.json.judging.lock",
            ".quest/quest.json.lock",
            ".quest/quest.json.run.gz",
            "quest.json",
        ],
    )


# -- the docs -------------------------------------------------------------------------------


def test_every_option_has_a_row_in_the_bad_input_table() -> None:
    from pytest_quest.plugin.option_table import _OPTIONS

    doc = (DOCS / "reliability.md").read_text()
    table = doc.split("## Bad input: every command and option", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    for _, flags, *_ in _OPTIONS:
        assert any(f"`{flags[0]}" in row for row in rows), f"{flags[0]} has no row"
    for command in ("scan", "submit", "check", "export"):
        assert any(command in row for row in rows), command
