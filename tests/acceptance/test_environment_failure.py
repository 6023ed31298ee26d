"""A gate child killed from outside is no verdict.

The submitted test writes its process id to a file, then sleeps; this test
kills that process (the gate's child pytest: the measuring child, or the
mutation child of step 4) with SIGKILL, as a person or the out-of-memory
killer would.  The quest stays TODO, no try is spent, the submit exits with
the documented status 75 and names the signal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.environment import ENVIRONMENT_EXIT, STREAK_KEY
from tests.support.projects import SIGN, Project, calc_project, scanned_template
from tests.support.runner import popen_pytest

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs POSIX signals"),
    # The judged processes' pids and files, seen from outside: the detection without a sandbox.
    pytest.mark.unsandboxed,
]

SLEEPER = """\
import os
import time

from pkg.calc import sign


def test_sign():
    assert sign(-5) == -1
    assert sign(5) == 1
    with open({pidfile!r}, "w") as handle:
        handle.write(str(os.getpid()))
    time.sleep(120)
"""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """`calc_project` scanned once; each test copies it."""
    return scanned_template(tmp_path_factory, calc_project)[0]


def wait_for_pid(path: Path, process: subprocess.Popen[str], seconds: float = 60.0) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError("the gate's child never started the test")


@pytest.mark.children_measured
def test_sigkill_from_outside_leaves_the_quest_todo_with_tries_unchanged(
    project: Project, template: Project
) -> None:
    project.fill_from(template)
    pidfile = project.path / "child.pid"
    project.test("test_sign", SLEEPER.format(pidfile=str(pidfile)))
    process = popen_pytest(
        project.path, "--quest", "submit", "--quest-id", SIGN, "--quest-format", "json"
    )
    try:
        child = wait_for_pid(pidfile, process)
        assert child != process.pid
        os.kill(child, signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == ENVIRONMENT_EXIT, stdout + stderr
    data = json.loads(stdout)
    assert data["verdict"] == "NONE"
    assert data["step"] == "environment"
    assert "SIGKILL" in data["environment"]["cause"]
    assert data["environment"]["in_a_row"] == 1
    assert data["environment"]["limit"] == 3
    assert isinstance(data["environment"]["output_tail"], list)
    assert data["quest"]["state"] == "TODO" and data["quest"]["tries"] == 0
    assert data["done"] is False
    recorded = project.ratchet()["quests"][SIGN]
    assert recorded["state"] == "TODO"
    assert recorded["tries"] == 0
    assert recorded["extra"][STREAK_KEY] == 1
    assert recorded["history"][-1]["action"] == "environment"


# In the measuring child (the first process to run it) the test passes at
# once; in the next process, the mutation child, it writes its pid and sleeps.
SECOND_SLEEPS = """\
import os
import time

from pkg.calc import sign


def test_sign():
    assert sign(-5) == -1
    assert sign(5) == 1
    with open({pids!r}, "a") as handle:
        handle.write(str(os.getpid()) + "\\n")
    with open({pids!r}) as handle:
        seen = handle.read().split()
    if seen[0] != str(os.getpid()):
        with open({pidfile!r}, "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(120)
"""


def assert_no_verdict(
    process: subprocess.Popen[str], stdout: str, stderr: str, project: Project, in_a_row: int
) -> dict[str, Any]:
    assert process.returncode == ENVIRONMENT_EXIT, stdout + stderr
    data: dict[str, Any] = json.loads(stdout)
    assert data["verdict"] == "NONE"
    assert data["step"] == "environment"
    assert "SIGKILL" in data["environment"]["cause"]
    assert data["environment"]["in_a_row"] == in_a_row
    assert isinstance(data["environment"]["output_tail"], list)
    assert data["quest"]["state"] == "TODO" and data["quest"]["tries"] == 0
    recorded = project.ratchet()["quests"][SIGN]
    assert (recorded["state"], recorded["tries"]) == ("TODO", 0)
    assert recorded["extra"][STREAK_KEY] == in_a_row
    assert recorded["history"][-1]["action"] == "environment"
    assert "SIGKILL" in recorded["history"][-1]["note"]
    return data


def test_sigkill_of_the_mutation_child_from_outside_is_no_verdict(
    project: Project, template: Project
) -> None:
    project.fill_from(template)
    pids, pidfile = project.path / "pids.txt", project.path / "mutation.pid"
    project.test("test_sign", SECOND_SLEEPS.format(pids=str(pids), pidfile=str(pidfile)))
    process = popen_pytest(
        project.path,
        "--quest", "submit", "--quest-id", SIGN, "--quest-format", "json",
        "--quest-timeout", "600",
    )  # fmt: skip
    try:
        child = wait_for_pid(pidfile, process, seconds=300.0)
        measuring = int(pids.read_text().split()[0])
        assert child not in (process.pid, measuring)
        os.kill(child, signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    data = assert_no_verdict(process, stdout, stderr, project, in_a_row=1)
    assert "the mutation child" in data["environment"]["cause"]
