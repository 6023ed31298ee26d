"""Judged tests cannot kill the gate's processes (engine/gate_signals.py): which calls are refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

from pytest_quest.core.environment import signal_facts, with_signal_attempts
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, Verdict
from pytest_quest.engine.gate_signals import SIGNALS_ENV, ancestors, deadly_target

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX signals")

ME = os.getpid()
GATE = {os.getppid()}
KILL, TERM, USR1 = int(signal.SIGKILL), int(signal.SIGTERM), int(signal.SIGUSR1)


@pytest.mark.parametrize(
    ("event", "args", "expected"),
    [
        ("os.kill", (ME, KILL), "its own process"),
        ("os.kill", (0, KILL), "its own process group"),
        ("os.kill", (-1, KILL), "every process"),
        ("os.kill", (-os.getpgrp(), KILL), "its own process group"),
        ("os.killpg", (0, KILL), "its own process group"),
        ("os.killpg", (os.getpgrp(), KILL), "its own process group"),
        ("signal.pthread_kill", (1, KILL), "this process"),
        ("os.kill", (os.getppid(), TERM), f"the gate's process {os.getppid()}"),
        ("os.kill", (os.getppid(), KILL), f"the gate's process {os.getppid()}"),
        ("os.kill", (os.getppid(), USR1), f"the gate's process {os.getppid()}"),
        ("os.kill", (os.getppid(), int(signal.SIGSTOP)), f"the gate's process {os.getppid()}"),
    ],
)
def test_signals_that_end_this_process_or_the_gate_are_named(
    event: str, args: tuple[int, int], expected: str
) -> None:
    assert deadly_target(event, args, GATE) == expected


@pytest.mark.parametrize(
    ("event", "args"),
    [
        ("os.kill", (ME, 0)),  # is it alive?
        ("os.kill", (ME, USR1)),  # not a terminating signal of OUTSIDE_SIGNALS
        ("os.kill", (os.getppid(), 0)),  # is the gate alive?
        ("os.kill", (os.getppid(), int(signal.SIGWINCH))),
        ("os.kill", (987654321, KILL)),  # some process the test started
        ("os.killpg", (987654321, KILL)),
        ("os.kill", (-987654321, KILL)),
    ],
)
def test_other_signals_are_left_alone(event: str, args: tuple[int, int]) -> None:
    assert deadly_target(event, args, GATE) == ""


def test_sigterm_to_itself_is_allowed_with_a_handler_of_its_own() -> None:
    # Set both ways here: the process running this test may have a SIGTERM
    # handler of its own (`pytest --quest check` treats SIGTERM as Ctrl-C).
    old = signal.signal(signal.SIGTERM, lambda *a: None)
    try:
        assert deadly_target("os.kill", (ME, TERM), GATE) == ""
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        assert deadly_target("os.kill", (ME, TERM), GATE) == "its own process"
    finally:
        signal.signal(signal.SIGTERM, old)


def test_the_ancestors_are_the_parent_chain() -> None:
    found = ancestors(ME)
    assert found[0] == os.getppid()
    assert 1 not in found


def test_without_proc_the_parent_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    def no_proc(*args: object, **kwargs: object) -> NoReturn:
        raise OSError("no /proc")

    monkeypatch.setattr(builtins, "open", no_proc)
    assert ancestors(ME) == [os.getppid()]


CHILD = """\
import os, signal, sys
from pytest_quest.engine.gate_signals import refuse_gate_signals
refuse_gate_signals()
os.kill(os.getpid(), 0)
try:
    os.kill(os.getpid(), signal.SIGKILL)
except PermissionError as exc:
    print("refused:", exc)
try:
    os.kill(os.getppid(), signal.SIGTERM)
except PermissionError as exc:
    print("refused:", exc)
"""


def test_in_a_judged_process_the_hook_refuses_and_logs(tmp_path: Path) -> None:
    log = tmp_path / "signals"
    log.write_text("")
    env = {**os.environ, SIGNALS_ENV: str(log)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "refused: pytest-quest: tests under judgment cannot send SIGKILL to its own process" in (
        done.stdout
    )
    lines = log.read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == [
        "send SIGKILL to its own process",
        f"send SIGTERM to the gate's process {os.getpid()}",
    ]


def test_without_the_variable_no_hook(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != SIGNALS_ENV}
    code = "from pytest_quest.engine.gate_signals import refuse_gate_signals\n"
    code += "refuse_gate_signals()\nimport os\nos.kill(os.getpid(), 9)\n"
    done = subprocess.run([sys.executable, "-c", code], env=env, timeout=60, check=False)
    assert done.returncode == -signal.SIGKILL


# -- the judge's side (core/environment.py) ---------------------------------------------


def test_a_refused_signal_makes_anything_but_a_fail_review() -> None:
    lines = ["123 send SIGKILL to its own process", "garbage"]
    (fact,) = signal_facts(lines)
    assert fact.check == "environment.self_signal"
    assert fact.field == "pid 123"
    passed = with_signal_attempts(GateResult(Verdict.PASS, [], "pass"), lines)
    assert (passed.verdict, passed.step, passed.facts) == (Verdict.REVIEW, "signals", [fact])
    killed = GateResult(Verdict.REVIEW, [Fact("environment.outside", "q", "e", "a")], "environment")
    assert with_signal_attempts(killed, lines).step == "signals"  # not believed outside
    failed = with_signal_attempts(GateResult(Verdict.FAIL, [], "3-coverage"), lines)
    assert (failed.verdict, failed.step, failed.facts) == (Verdict.FAIL, "3-coverage", [fact])
    same = GateResult(Verdict.PASS, [], "pass")
    assert with_signal_attempts(same, []) is same


def test_a_flood_of_lines_is_named_ten_at_most_each_cut() -> None:
    facts = signal_facts([f"{n} send SIGKILL to its own process" + "x" * 500 for n in range(50)])
    assert len(facts) == 10
    assert all(len(fact.actual) < 250 for fact in facts)
