"""A mutation child started before its work is known (engine/prestart.py), and its channel's two parts.

The child here is a small script reading its instructions as a gate child
does (plugin/child_channel.py): the parent's side is under test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_quest.engine import prestart
from pytest_quest.engine.channel import JudgeChannel

CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    from pytest_quest.plugin import child_channel

    channel = sys.argv[-1]
    first = child_channel.open_channel(channel)
    with open(os.environ["FIRST_SEEN"], "w") as handle:
        json.dump(first, handle)
    whole = child_channel.complete()
    time.sleep(float(whole.get("work", 0)))
    child_channel.send({"first": first, "whole": whole})
    """
)


@pytest.fixture
def script_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`prestart`'s children are the script above; where it writes the first part it read."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    seen = tmp_path / "first.json"
    monkeypatch.setenv("FIRST_SEEN", str(seen))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setattr(
        prestart,
        "child_command",
        lambda **kwargs: [sys.executable, str(script), kwargs["channel"]],
    )
    return seen


def launch(tmp_path: Path, subprocesses: bool = True) -> prestart.Launch:
    return prestart.Launch(tmp_path, None, (), tmp_path, subprocesses, True, sources=("src/pkg",))


def wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert path.exists()


def test_the_child_starts_on_the_first_part_and_gets_the_rest_later(
    tmp_path: Path, script_child: Path
) -> None:
    started = prestart.Prestarted(launch(tmp_path), timeout=60)
    try:
        wait_for(script_child)  # it read the first part and waits for the rest
        time.sleep(0.3)
        ran = started.run({"role": "check", "functions": ["f"]}, timeout=60)
    finally:
        started.close()
    assert ran is not None and ran.received.payload is not None
    first = ran.received.payload["first"]
    assert first["role"] == "check" and first["more"] is True
    assert first["remote_dir"] == started.remote_dir and first["subprocesses"] is True
    # Read before any conftest (plugin/rewrite.py), so given with the first part.
    assert first["sources"] == ["src/pkg"]
    assert ran.received.payload["whole"]["functions"] == ["f"]
    assert "more" not in ran.received.payload["whole"]
    # Its time is its work's, not the wait for it.
    assert ran.duration < 5
    assert not os.path.exists(started.remote_dir)


def test_a_child_never_given_its_work_is_stopped_at_once_with_its_folder(
    tmp_path: Path, script_child: Path
) -> None:
    # The measuring run failed the quest: the mutation child started beside it is not wanted.
    started = prestart.Prestarted(launch(tmp_path), timeout=60)
    wait_for(script_child)
    began = time.monotonic()
    started.close()
    assert time.monotonic() - began < 4
    assert started.ran is not None and started.ran.received.payload is None
    assert not os.path.exists(started.remote_dir)


def test_its_timeout_counts_from_its_work(tmp_path: Path, script_child: Path) -> None:
    started = prestart.Prestarted(launch(tmp_path, subprocesses=False), timeout=60)
    try:
        wait_for(script_child)
        ran = started.run({"work": 30}, timeout=1)
    finally:
        started.close()
    assert ran is not None
    assert ran.returncode is None  # stopped: it exceeded --quest-timeout
    assert ran.duration < 10


def test_only_a_child_started_with_the_same_command_is_taken(
    tmp_path: Path, script_child: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prestart, "hides_runs", lambda: True)
    with prestart.prestarted(launch(tmp_path), timeout=60) as started:
        assert started is not None
        assert prestart.take(launch(tmp_path, subprocesses=False)) is None
        assert prestart.take(launch(tmp_path)) is started
        assert prestart.take(launch(tmp_path)) is None  # once
    assert started.ran is not None  # stopped at the end, its work never given


def test_a_child_that_waited_too_long_is_not_taken_and_is_stopped(
    tmp_path: Path, script_child: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its tests would find their process older than one started now by all it waited.
    monkeypatch.setattr(prestart, "hides_runs", lambda: True)
    monkeypatch.setattr(prestart, "MAX_WAIT", 0.2)
    with prestart.prestarted(launch(tmp_path), timeout=60) as started:
        assert started is not None
        wait_for(script_child)
        time.sleep(0.3)
        assert prestart.take(launch(tmp_path)) is None
        assert started.ran is not None  # stopped already, not at the end
        assert not os.path.exists(started.remote_dir)


def test_without_a_sandbox_that_hides_runs_none_is_started(tmp_path: Path) -> None:
    with prestart.prestarted(launch(tmp_path), timeout=60) as started:
        if not prestart.hides_runs():
            assert started is None


def test_a_first_part_then_the_rest_with_another_nonce_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(
        "import sys\nfrom pytest_quest.engine.channel import read_instructions, read_rest\n"
        "fd, nonce, first = read_instructions(sys.argv[1])\n"
        "print(first['more'])\n"
        "read_rest(sys.argv[1], bytes(16))\n"
    )
    channel = JudgeChannel(None, {"role": "check"})
    try:
        process = subprocess.Popen(
            [sys.executable, str(script), channel.argument],
            pass_fds=channel.child_fds,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        channel.started()
        channel.instruct({"functions": []})
        out, err = process.communicate(timeout=60)
    finally:
        channel.close()
    assert out.split() == [b"True"]
    assert b"another nonce" in err and process.returncode != 0


def test_under_a_throwaway_layer_the_first_part_says_so(
    tmp_path: Path, script_child: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The work comes later, on a channel made here: the mutation child learns from its
    # first part that it may write its mutants into the project's files (engine/ondisk.py).
    from pytest_quest.engine import sandbox
    from tests.unit.engine.test_runner import _Recorder

    monkeypatch.setattr(sandbox, "_ACTIVE", [_Recorder(True, overlay=True)])
    started = prestart.Prestarted(launch(tmp_path), timeout=60)
    try:
        wait_for(script_child)
        ran = started.run({"role": "check", "functions": ["f"]}, timeout=60)
    finally:
        started.close()
    assert ran is not None and ran.received.payload is not None
    assert ran.received.payload["whole"]["overlay"] == str(launch(tmp_path).cwd)
