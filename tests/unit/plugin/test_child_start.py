"""The mutation child's start (plugin/child_start.py): instructions read before the entry-point plugins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.engine.channel import NONCE_BYTES, JudgeChannel, frame
from pytest_quest.plugin import child_channel, child_start, fresh_kill

# Loaded through PYTEST_PLUGINS, which pytest reads after the entry-point plugins: what it
# sees there, a plugin installed in the venv (Hypothesis, pytest-cov...) sees at import too.
PROBE = """
import os
from pytest_quest.plugin import child_channel, fresh_kill

with open(os.environ["PROBE_OUT"], "w") as out:
    out.write(f"{child_channel.opened()} {bool(fresh_kill.START_ENV)}")
os._exit(0)
"""


def test_the_mutation_child_reads_its_instructions_before_the_entry_point_plugins_load(
    tmp_path: Path,
) -> None:
    # Its fresh run is started from there: that start overlaps the plugins' imports
    # (a quarter of a second of step 4 with Hypothesis installed), not only the mutants.
    (tmp_path / "quest_probe_plugin.py").write_text(PROBE)
    out = tmp_path / "probe.txt"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_WORKER"}
    env.update(
        PYTEST_PLUGINS="quest_probe_plugin",
        PYTHONPATH=os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")]),
        PROBE_OUT=str(out),
    )
    channel = JudgeChannel({"role": "check", "functions": [], "subprocesses": False})
    try:
        command = [sys.executable, "-m", "pytest", "-p", "pytest_quest.plugin.mutation_child"]
        command += ["-p", "no:cacheprovider", "--quest-channel", channel.argument]
        process = subprocess.Popen(command, cwd=tmp_path, env=env, pass_fds=channel.child_fds)
        channel.started()
        assert process.wait(timeout=60) == 0
    finally:
        channel.close()
    assert out.read_text() == "True True"


class Pipes:
    """The child's side of a channel, in this process: the judge's message written or not."""

    def __init__(self, instructions: dict[str, Any] | None) -> None:
        self.in_read, self.in_write = os.pipe()
        self.out_read, self.out_write = os.pipe()
        if instructions is not None:
            os.write(self.in_write, frame(b"n" * NONCE_BYTES, instructions))
            os.close(self.in_write)
            self.in_write = -1
        self.argument = f"{self.out_write},{self.in_read}"

    def close(self) -> None:
        for fd in (self.in_read, self.in_write, self.out_read, self.out_write):
            try:
                os.close(fd)
            except OSError:
                pass  # closed by the reader already


@pytest.fixture
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(child_channel, "_state", {})
    monkeypatch.setattr(child_start, "_BEGUN", [])
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)


@pytest.mark.usefixtures("fresh_state")
def test_a_held_fresh_run_is_not_read_early() -> None:
    # Its instructions come only when it is resumed: reading them at registration
    # would hold it before the entry-point plugins load, and its start would not overlap.
    pipes = Pipes(None)
    try:
        child_start.begin(pipes.argument, None, early=True)  # type: ignore[arg-type]
        assert not child_channel.opened() and child_start._BEGUN == []
    finally:
        pipes.close()


@pytest.mark.usefixtures("fresh_state")
def test_a_fresh_run_started_afresh_waits_for_the_initial_conftests_hook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    resumed: list[bool] = []
    monkeypatch.setattr(fresh_kill, "resume_here", lambda: resumed.append(True))
    monkeypatch.setattr(child_start, "protect_from_env", lambda: None)
    pipes = Pipes({"role": fresh_kill.ROLE, "only": ["t::a"], "resume": True})
    try:
        child_start.begin(pipes.argument, None, early=True)  # type: ignore[arg-type]
        assert child_channel.opened() and child_start._BEGUN == [] and resumed == []
        child_start.begin(pipes.argument, None, early=False)  # type: ignore[arg-type]
        assert child_start._BEGUN == [True] and resumed == [True]
    finally:
        pipes.close()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("-q", "--quest-channel", "6,3", "--", "t::a"), "6,3"),
        (("--quest-channel=7,4",), "7,4"),
        (("-q", "--", "--quest-channel", "6,3"), ""),  # a test's name, not an option
        (("--quest-channel",), ""),
        ((), ""),
    ],
)
def test_the_channel_argument_of_a_command_line(args: tuple[str, ...], expected: str) -> None:
    assert child_start.channel_argument(args) == expected
