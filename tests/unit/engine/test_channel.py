"""The judge's channel: framing, the nonce, and what a reader accepts (engine/channel.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_quest.engine.channel import (
    CHILD_ARGUMENT,
    HEADER_BYTES,
    NONCE_BYTES,
    JudgeChannel,
    Received,
    frame,
    moved_command,
    parse,
    parse_unchecked,
)

NONCE = bytes(range(NONCE_BYTES))
OTHER = bytes(NONCE_BYTES)


def test_one_message_with_the_nonce_is_accepted() -> None:
    received = parse(frame(NONCE, {"a": [1, 2]}), NONCE)
    assert received.payload == {"a": [1, 2]}
    assert received.tampered == ""


def test_nothing_is_an_incomplete_run_not_tampering() -> None:
    received = parse(b"", NONCE)
    assert (received.payload, received.tampered) == (None, "")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (frame(OTHER, {"a": 1}), "a message with the wrong nonce"),
        (frame(NONCE, {"a": 1}) + frame(NONCE, {"a": 2}), "two messages"),
        (frame(NONCE, {"a": 1}) + b"{}", "2 extra bytes after the message"),
        (b'{"functions": []}', "bytes that are not a message of the judge's channel"),
        (frame(NONCE, {"a": 1})[:-1], "a truncated message"),
        (frame(NONCE, {"a": 1})[: HEADER_BYTES - 1], "a truncated message"),
        (b"garbage" + frame(NONCE, {"a": 1}), "bytes that are not a message"),
    ],
)
def test_anything_else_is_tampering(data: bytes, problem: str) -> None:
    received = parse(data, NONCE)
    assert received.payload is None
    assert received.tampered.startswith(problem), received.tampered


def test_bad_json_and_non_objects_are_tampering() -> None:
    body = b"{not json"
    data = b"PQC1" + NONCE + len(body).to_bytes(8, "big") + body
    assert parse(data, NONCE).tampered.startswith("a message that is not JSON")
    assert parse(frame(NONCE, [1]), NONCE).tampered == "a message that is not a JSON object"  # type: ignore[arg-type]


def test_the_child_side_reads_the_nonce_and_instructions() -> None:
    assert parse_unchecked(frame(NONCE, {"role": "measure"})) == (NONCE, {"role": "measure"})
    with pytest.raises(ValueError):
        parse_unchecked(frame(NONCE, {}) + b"x")


CHILD = textwrap.dedent(
    """
    import sys
    from pytest_quest.plugin import child_channel

    instructions = child_channel.open_channel(sys.argv[1])
    mode = sys.argv[2]
    if mode == "honest":
        child_channel.send({"echo": instructions})
    elif mode == "forge":
        import os
        child_channel.send({"echo": instructions})
        try:
            os.write(int(sys.argv[1].split(",")[0]), b"forged")
        except OSError:
            pass  # closed already: EBADF
    elif mode == "silent":
        child_channel.close()
    elif mode == "twice":
        child_channel.send({"echo": 1})
        child_channel.send({"echo": 2})
    """
)


def run_child(mode: str, tmp_path: Path) -> Received:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    channel = JudgeChannel({"role": "measure", "n": 3})
    try:
        process = subprocess.Popen(
            [sys.executable, str(script), channel.argument, mode],
            pass_fds=channel.child_fds,
            stderr=subprocess.PIPE,
            # As the judge's child_env(): this test may run in an xdist worker.
            env={k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_WORKER"},
        )
        channel.started()
        _, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        return channel.receive()
    finally:
        channel.close()


def test_a_child_round_trip(tmp_path: Path) -> None:
    received = run_child("honest", tmp_path)
    assert received.payload == {"echo": {"role": "measure", "n": 3}}


def test_the_channel_is_closed_after_the_one_message(tmp_path: Path) -> None:
    received = run_child("forge", tmp_path)
    assert received.payload == {"echo": {"role": "measure", "n": 3}}
    assert run_child("twice", tmp_path).payload == {"echo": 1}


def test_a_child_that_sends_nothing_is_incomplete(tmp_path: Path) -> None:
    received = run_child("silent", tmp_path)
    assert (received.payload, received.tampered) == (None, "")


def test_a_channel_held_open_by_another_process_is_tampering(tmp_path: Path) -> None:
    channel = JudgeChannel({})
    try:
        # A grandchild keeps the child's end after the child is gone.
        holder = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(30)"], pass_fds=channel.child_fds
        )
        channel.started()
        received = channel.receive(wait=0.3)
        assert received.tampered == "the channel was still held open after the run ended"
    finally:
        holder.kill()
        holder.wait()
        channel.close()


def test_an_unstarted_channel_closes_every_end() -> None:
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    JudgeChannel({"x": 1}).close()
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before


def test_a_child_started_without_instructions_waits_for_them(tmp_path: Path) -> None:
    # A fresh run started early (plugin/fresh_kill.py, Parked) holds until told what to run.
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    channel = JudgeChannel(None)
    try:
        process = subprocess.Popen(
            [sys.executable, str(script), channel.argument, "honest"],
            pass_fds=channel.child_fds,
            env={k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_WORKER"},
        )
        channel.started()
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=0.5)  # still waiting for its instructions
        channel.instruct({"role": "fresh", "only": ["t::a"]})
        assert process.wait(timeout=60) == 0
        assert channel.receive().payload == {"echo": {"role": "fresh", "only": ["t::a"]}}
    finally:
        channel.close()


def test_a_child_never_instructed_reads_end_of_file_when_the_channel_closes(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    channel = JudgeChannel(None)
    process = subprocess.Popen(
        [sys.executable, str(script), channel.argument, "honest"],
        pass_fds=channel.child_fds,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_WORKER"},
    )
    channel.started()
    channel.close()
    _, err = process.communicate(timeout=60)
    assert process.returncode != 0 and b"malformed" in err  # no instructions: it runs nothing


def test_a_moved_command_reads_its_channel_at_the_fixed_numbers_and_writes_to_the_log(
    tmp_path: Path,
) -> None:
    # A fresh run is started by the mutation child, whose descriptor numbers are not the
    # judge's: moved, its channel and its output are where a measuring run's are.
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    log = tmp_path / "output.txt"
    log.write_text("before\n")
    channel = JudgeChannel({"role": "fresh"})
    stray = os.open(tmp_path, os.O_RDONLY)
    try:
        probe = "import os; print(sorted(int(fd) for fd in os.listdir('/proc/self/fd')))"
        command = moved_command([sys.executable, "-c", probe], channel.child_fds, str(log))
        subprocess.run(command, pass_fds=(*channel.child_fds, stray), check=True, timeout=60)
        moved = moved_command(
            [sys.executable, str(script), CHILD_ARGUMENT, "honest"], channel.child_fds
        )
        process = subprocess.Popen(
            moved,
            pass_fds=channel.child_fds,
            env={k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_WORKER"},
        )
        channel.started()
        assert process.wait(timeout=60) == 0
        assert channel.receive().payload == {"echo": {"role": "fresh"}}
    finally:
        os.close(stray)
        channel.close()
    # 0-2, the channel at 3 and 4, the listing's own descriptor: the stray one is closed.
    assert log.read_text() == "before\n[0, 1, 2, 3, 4, 5]\n"


def test_a_first_part_for_a_child_that_is_gone_is_no_error() -> None:
    # The child ended before its first part could be written (no reader left): nothing to send.
    channel = JudgeChannel(None, {"role": "check"})
    try:
        channel.started()  # closes our copies of the child's ends: nobody reads the first part
        assert channel.running.is_set()
    finally:
        channel.close()
