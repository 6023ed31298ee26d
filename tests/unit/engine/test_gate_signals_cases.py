"""engine/gate_signals.py's `refuse_gate_signals` in this process, the audit hook it would
install taken instead of installed: none without the variable, and the hook's refusals."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.engine import gate_signals
from pytest_quest.engine.gate_signals import SIGNALS_ENV, refuse_gate_signals

Hook = Callable[[str, tuple[Any, ...]], None]


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> list[Hook]:
    taken: list[Hook] = []
    monkeypatch.setattr(sys, "addaudithook", taken.append)
    return taken


def test_without_the_variable_no_hook(monkeypatch: pytest.MonkeyPatch, hooks: list[Hook]) -> None:
    monkeypatch.delenv(SIGNALS_ENV, raising=False)
    refuse_gate_signals()
    monkeypatch.setenv(SIGNALS_ENV, "")
    refuse_gate_signals()
    assert hooks == []


def _hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hooks: list[Hook]) -> Hook:
    log = tmp_path / "signals"
    log.write_text("")
    monkeypatch.setenv(SIGNALS_ENV, str(log))
    monkeypatch.setattr(gate_signals, "ancestors", lambda pid: [4_000_001])
    refuse_gate_signals()
    assert len(hooks) == 1
    return hooks[0]


def test_the_hook_refuses_a_deadly_signal_and_logs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hooks: list[Hook]
) -> None:
    hook = _hook(tmp_path, monkeypatch, hooks)
    with pytest.raises(PermissionError) as caught:
        hook("os.kill", (4_000_001, signal.SIGTERM))
    assert str(caught.value) == (
        "pytest-quest: tests under judgment cannot send SIGTERM to the gate's process 4000001"
    )
    with pytest.raises(PermissionError) as caught:
        hook("signal.pthread_kill", (0, signal.SIGKILL))
    assert str(caught.value) == (
        "pytest-quest: tests under judgment cannot send SIGKILL to this process"
    )
    assert (tmp_path / "signals").read_text() == (
        f"{os.getpid()} send SIGTERM to the gate's process 4000001\n"
        f"{os.getpid()} send SIGKILL to this process\n"
    )


def test_the_hook_lets_other_events_and_signals_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hooks: list[Hook]
) -> None:
    hook = _hook(tmp_path, monkeypatch, hooks)
    assert hook("open", ("x", "r", 0)) is None
    assert hook("os.kill", (4_000_002, signal.SIGTERM)) is None
    assert hook("os.kill", (4_000_001, signal.SIGCHLD)) is None
    assert hook("os.kill", ("not a pid", signal.SIGTERM)) is None
    assert hook("os.kill", (None, signal.SIGTERM)) is None
    assert (tmp_path / "signals").read_text() == ""


def test_the_hook_refuses_even_when_the_log_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hooks: list[Hook]
) -> None:
    hook = _hook(tmp_path, monkeypatch, hooks)
    (tmp_path / "signals").unlink()
    with pytest.raises(PermissionError):
        hook("os.kill", (4_000_001, signal.SIGKILL))
    assert not (tmp_path / "signals").exists()
