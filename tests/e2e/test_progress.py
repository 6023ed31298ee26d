"""Long work shows its progress on a terminal, and nowhere else.

audit's mutation checks and the per-function analysis after a scan's or a
check's test run draw one transient bar on a terminal; off a terminal (a pipe,
CI's log) and in JSON mode nothing is added to the output.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.projects import CALC, TEST_DOUBLE, TEST_SIGN, Project
from tests.support.runner import child_environ, pytest_command

SCAN_BAR = "scan: coverage of each function"
AUDIT_BAR = "audit: mutants of 2 PASS functions"


def on_a_terminal(folder: Path, *args: str, timeout: float = 240) -> str:
    """What ``pytest *args`` in `folder` writes to stdout, a pseudo-terminal."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        pytest_command(*args),
        cwd=folder,
        env=child_environ(),
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.DEVNULL,
    )
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            elif proc.poll() is not None:
                break
        proc.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return shown.decode(errors="replace")


@pytest.fixture
def covered(project: Project) -> Project:
    project.source("calc", CALC)
    project.test("test_double", TEST_DOUBLE)
    project.test("test_sign", TEST_SIGN)
    return project


def test_audit_shows_progress_on_a_terminal(covered: Project) -> None:
    # scan measures in the judge's child, whose output is captured: no bar of its own.
    shown = on_a_terminal(covered.path, "--quest", "scan")
    assert "2 PASS" in shown
    shown = on_a_terminal(covered.path, "--quest", "audit")
    assert AUDIT_BAR in shown


def test_no_progress_off_a_terminal_nor_in_json(covered: Project) -> None:
    result = covered.run("--quest", "scan")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result = covered.run("--quest", "audit")
    written = result.stdout.str() + result.stderr.str()
    assert SCAN_BAR not in written and AUDIT_BAR not in written
    shown = on_a_terminal(covered.path, "--quest", "audit", "--quest-format", "json")
    assert AUDIT_BAR not in shown
    assert json.loads(shown[shown.index("{") :])["command"] == "audit"
