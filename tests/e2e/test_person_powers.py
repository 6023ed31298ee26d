"""Person powers from outside: a real pytest with no terminal exits 4; at a pseudo-terminal a typed id is recorded."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.projects import Project, built_template
from tests.support.quests import ratchet_view
from tests.support.runner import FAST, child_environ

CALC = """
def double(x):
    return x * 2


def sign(x):
    if x < 0:
        return -1
    return 1
"""

TEST_DOUBLE = """
from pkg.calc import double

def test_double():
    assert double(3) == 6
"""

SIGN = "src/pkg/calc.py::sign"
REASON = "a person looked at the changed body: it is the fix"

# Started with the pseudo-terminal as its stdin and in a new session: makes it
# the controlling terminal (TIOCSCTTY), then becomes pytest.
_TAKE_TTY = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)
PROMPT_END = b"(anything else cancels): "


@dataclass
class TtyRun:
    """A pytest run at a pseudo-terminal: exit status, stdout, stderr, what the terminal showed."""

    ret: int
    stdout: str
    stderr: str
    terminal: str

    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.stdout)
        return data


def run_in_tty(folder: Path, *args: str, typed: str | None, timeout: float = 120) -> TtyRun:
    """``pytest *args`` in `folder` with a pseudo-terminal as its controlling terminal.

    When the question ending in ``(anything else cancels):`` shows on the
    terminal, `typed` and a newline are typed (None: end of input, Ctrl-D).  stdout and stderr are pipes, so the JSON output is
    read apart from the terminal.
    """
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", _TAKE_TTY, "-m", "pytest", *FAST, *args],
        cwd=folder,
        env=child_environ(),
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + timeout
    answered = False
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            if not answered and shown.rstrip().endswith(PROMPT_END.rstrip()):
                answered = True
                os.write(master, b"\x04" if typed is None else typed.encode() + b"\n")
            if proc.poll() is not None and not ready:
                break
        stdout, stderr = proc.communicate(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return TtyRun(proc.returncode, stdout.decode(), stderr.decode(), shown.decode(errors="replace"))


def run_without_tty(folder: Path, *args: str, stdin_text: str) -> subprocess.CompletedProcess[str]:
    """``pytest *args`` as a script or an agent's shell runs it: a new session (no
    controlling terminal), and `stdin_text` piped in (``echo ID | pytest ...``)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", *FAST, *args],
        cwd=folder,
        env=child_environ(),
        input=stdin_text,
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
        check=False,
    )


@pytest.fixture(autouse=True)
def git_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Quest Tester\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def review_sign(project: Project) -> None:
    """Scanned, and its `sign` quest waiting for a person (REVIEW)."""
    project.source("calc", CALC)
    project.test("test_double", TEST_DOUBLE)
    result = project.run("--quest", "scan", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    ratchet = project.ratchet()
    ratchet["quests"][SIGN]["state"] = "REVIEW"
    (project.path / "quest.json").write_text(json.dumps(ratchet, indent=2, sort_keys=True) + "\n")


@pytest.fixture(scope="module")
def review_template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """`review_sign` once; each test copies it."""
    return built_template(tmp_path_factory, review_sign)


@pytest.fixture
def reviewed(project: Project, review_template: Project) -> Project:
    """A scanned project whose `sign` quest waits for a person (REVIEW)."""
    return project.fill_from(review_template)


@pytest.mark.parametrize("output", ["text", "json"])
@pytest.mark.children_measured
def test_accept_from_a_shell_without_a_terminal_exits_4_and_changes_nothing(
    reviewed: Project, output: str
) -> None:
    before = (reviewed.path / "quest.json").read_bytes()
    result = run_without_tty(
        reviewed.path,
        "--quest-accept", SIGN, "--quest-reason", REASON, "--quest-format", output,
        stdin_text=SIGN + "\n",
    )  # fmt: skip
    assert result.returncode == 4, result.stdout + result.stderr
    expected = "--quest-accept is a person action: a person must run it at an interactive terminal"
    if output == "json":
        data = json.loads(result.stdout)
        assert data["command"] == "accept"
        assert data["error"].startswith(expected)
    else:
        assert f"ERROR: {expected}" in result.stdout
    assert (reviewed.path / "quest.json").read_bytes() == before


def test_accept_typed_at_a_terminal_is_recorded(reviewed: Project) -> None:
    run = run_in_tty(
        reviewed.path,
        "--quest-accept", SIGN, "--quest-reason", REASON, "--quest-format", "json",
        typed=SIGN,
    )  # fmt: skip
    assert run.ret == 0, run.terminal + run.stdout + run.stderr
    assert f"quest {SIGN} (src/pkg/calc.py:6-9) is REVIEW" in run.terminal
    assert f"type {SIGN} to confirm" in run.terminal
    data = run.json()
    assert (data["command"], data["by"], data["reason"]) == ("accept", "Quest Tester", REASON)
    entry = ratchet_view((reviewed.path / "quest.json").read_bytes())["quests"][SIGN]
    assert entry["state"] == "PASS"
    event = entry["history"][-1]
    assert event == {
        "action": "accept",
        "at": data["at"],
        "by": "Quest Tester",
        "reason": REASON,
        "fingerprint": entry["fingerprint"],
    }


@pytest.mark.parametrize("typed", ["y", None])
@pytest.mark.children_measured
def test_a_wrong_or_missing_answer_at_the_terminal_changes_nothing(
    reviewed: Project, typed: str | None
) -> None:
    before = (reviewed.path / "quest.json").read_bytes()
    run = run_in_tty(
        reviewed.path, "--quest-exclude", SIGN, "--quest-reason", "dead code", typed=typed
    )
    assert run.ret == 4, run.terminal + run.stdout + run.stderr
    assert "--quest-exclude: the confirmation typed does not match" in run.stdout
    assert (reviewed.path / "quest.json").read_bytes() == before


def test_exclude_at_a_terminal_then_status_then_reopen(reviewed: Project) -> None:
    run = run_in_tty(
        reviewed.path, "--quest-exclude", SIGN, "--quest-reason", "dead code", typed=SIGN
    )
    assert run.ret == 0, run.terminal + run.stdout + run.stderr
    assert f"exclude: {SIGN} is now EXCLUDED (by Quest Tester, " in run.stdout
    status = run_without_tty(reviewed.path, "--quest-status", stdin_text="")
    assert status.returncode == 0
    assert "2 quests: 0 TODO, 1 PASS, 0 REVIEW, 0 DONE, 1 EXCLUDED; 0 remaining" in status.stdout
    assert "dead code" in status.stdout
    run = run_in_tty(
        reviewed.path, "--quest-reopen", SIGN, "--quest-reason", "called again", typed=SIGN
    )
    assert run.ret == 0, run.terminal + run.stdout + run.stderr
    entry = ratchet_view((reviewed.path / "quest.json").read_bytes())["quests"][SIGN]
    assert entry["state"] == "TODO"
    assert [e["action"] for e in entry["history"]][-2:] == ["exclude", "reopen"]


FOREGROUND_AND_BACKGROUND = """
import os
from pytest_quest.engine.tty import controlling_terminal
print("foreground", controlling_terminal() is not None, flush=True)
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)  # a background job of this terminal's session
    print("background", controlling_terminal() is not None, flush=True)
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_the_terminal_is_only_the_foreground_controlling_terminal(tmp_path: Path) -> None:
    master, slave = os.openpty()
    proc = subprocess.run(
        [sys.executable, "-c", _TAKE_TTY, "-c", FOREGROUND_AND_BACKGROUND],
        stdin=slave, capture_output=True, text=True, timeout=60, start_new_session=True,
        env=child_environ(), check=False,
    )  # fmt: skip
    os.close(slave)
    os.close(master)
    assert proc.stdout.split("\n")[:2] == ["foreground True", "background False"], proc.stderr
    alone = subprocess.run(
        [sys.executable, "-c", FOREGROUND_AND_BACKGROUND.split("pid =", maxsplit=1)[0]],
        capture_output=True, text=True, timeout=60, start_new_session=True, check=False,
    )  # fmt: skip
    assert alone.stdout == "foreground False\n", alone.stderr
