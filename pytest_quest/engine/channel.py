"""The judge's channel to a child pytest: a nonce in on one pipe, one framed JSON message out on another.

docs/judge.md ("Evidence the tests cannot rewrite") says what it defends against and what it cannot.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import select
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

MAGIC = b"PQC1"
NONCE_BYTES = 16
_LENGTH_BYTES = 8
HEADER_BYTES = len(MAGIC) + NONCE_BYTES + _LENGTH_BYTES
# More than this from a child is not a report of ours.
MAX_BYTES = 256 * 1024 * 1024

#: Where every gate child finds its channel (write end, read end), whatever role it has
#: and whoever starts it: the measuring run, the mutation child and its fresh runs have
#: the same open descriptors and the same ``--quest-channel`` value, so neither tells a
#: test which run it is in.
CHILD_FDS = (3, 4)
CHILD_ARGUMENT = f"{CHILD_FDS[0]},{CHILD_FDS[1]}"

# Defines `move_channel(spec, output)`, run in a child just before it runs its command:
# the channel's ends `spec` ("W,R") moved to CHILD_FDS, its output (when a path is given)
# to that file, and every other descriptor above 2 closed.  Plain stdlib: it also runs
# inside the reaping shim (engine/reaper.py), before any of pytest-quest is importable.
MOVE_CHANNEL = r"""
def move_channel(spec, output):
    import fcntl, os
    ends = [int(part) for part in spec.split(",")]
    # Above every number taken or wanted first: no end is overwritten by another's move.
    held = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in ends]
    for fd, target in zip(held, (3, 4)):
        os.dup2(fd, target)
    if output:
        try:
            log = os.open(output, os.O_WRONLY)
            os.lseek(log, 0, os.SEEK_END)
            os.dup2(log, 1)
            os.dup2(log, 2)
        except OSError:
            pass  # the output goes where it went
    try:
        others = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:
        others = list(range(5, max(held + ends) + 1))
    for fd in others:
        if fd > 4:
            try:
                os.close(fd)
            except OSError:
                pass
"""

# Run as `python -I -S -c MOVED W,R OUTPUT -- command...`: the channel moved, then the
# command in this process's place (its pid is the child's).
MOVED = (
    MOVE_CHANNEL
    + """
import os, sys
move_channel(sys.argv[1], sys.argv[2])
os.execvp(sys.argv[4], sys.argv[4:])
"""
)


def moved_command(command: list[str], ends: tuple[int, int], output: str = "") -> list[str]:
    """`command` run with the channel `ends` moved to `CHILD_FDS` (pass `ends` to Popen).

    `output`: a file the child's output goes to instead of its stdout and stderr.
    """
    spec = f"{ends[0]},{ends[1]}"
    return [sys.executable, "-I", "-S", "-c", MOVED, spec, output, "--", *command]


def frame(nonce: bytes, payload: dict[str, Any]) -> bytes:
    """One message: magic, nonce, length (8 bytes, big-endian), then the JSON of `payload`."""
    assert len(nonce) == NONCE_BYTES
    body = json.dumps(payload).encode("utf-8")
    return MAGIC + nonce + len(body).to_bytes(_LENGTH_BYTES, "big") + body


@dataclass
class Received:
    """What came over a channel: the payload, or why it cannot be believed.

    ``payload is None and not tampered``: nothing came (an incomplete run).
    """

    payload: dict[str, Any] | None = None
    tampered: str = ""


def _split(data: bytes) -> tuple[bytes, bytes, bytes] | str:
    """(nonce, body, rest) of the first message in `data`, or what is wrong with it."""
    if data[: len(MAGIC)] != MAGIC[: len(data)]:
        return "bytes that are not a message of the judge's channel"
    if len(data) < HEADER_BYTES:
        return f"a truncated message ({len(data)} bytes)"
    nonce = data[len(MAGIC) : len(MAGIC) + NONCE_BYTES]
    length = _declared_length(data)
    end = HEADER_BYTES + length
    if end > len(data):
        return f"a truncated message ({len(data) - HEADER_BYTES} of {length} bytes)"
    return nonce, data[HEADER_BYTES:end], data[end:]


def _declared_length(data: bytes | bytearray) -> int:
    """The body length a message's header (at least HEADER_BYTES of `data`) declares."""
    return int.from_bytes(data[len(MAGIC) + NONCE_BYTES : HEADER_BYTES], "big")


def _whole(data: bytearray) -> bool:
    """Whether `data` holds at least one whole message (whatever its nonce or content)."""
    return len(data) >= HEADER_BYTES and len(data) >= HEADER_BYTES + _declared_length(data)


def parse(data: bytes, nonce: bytes) -> Received:
    """The one message with `nonce` that `data` must be, nothing before or after it."""
    if not data:
        return Received()
    split = _split(data)
    if isinstance(split, str):
        return Received(tampered=split)
    got, body, rest = split
    if not hmac.compare_digest(got, nonce):
        return Received(tampered="a message with the wrong nonce")
    if rest:
        second = _split(rest)
        if isinstance(second, tuple):
            return Received(tampered="two messages")
        return Received(tampered=f"{len(rest)} extra bytes after the message")
    try:
        payload = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return Received(tampered=f"a message that is not JSON ({exc})")
    if not isinstance(payload, dict):
        return Received(tampered="a message that is not a JSON object")
    return Received(payload=payload)


def parse_unchecked(data: bytes) -> tuple[bytes, dict[str, Any]]:
    """The child's side: the nonce and payload the judge sent (ValueError if malformed)."""
    split = _split(data)
    if isinstance(split, str) or split[2]:
        raise ValueError(
            f"the judge's message is malformed: {split if isinstance(split, str) else 'extra bytes'}"
        )
    payload = json.loads(split[1].decode("utf-8"))
    if not isinstance(payload, dict):
        raise ValueError("the judge's message is not a JSON object")
    return split[0], payload


#: In a first message, what says the rest of the instructions comes later (`read_rest`).
MORE = "more"


def read_instructions(argument: str) -> tuple[int, bytes, dict[str, Any]]:
    """The child's end: read the judge's one message from the descriptors `argument` names.

    Returns the descriptor to answer on (no longer inherited by what the child
    starts), the nonce and the instructions; ValueError if the message is malformed.
    A first message marked `MORE` (a child started before its work was known)
    is returned as it is, its pipe left open for `read_rest`.
    """
    write_fd, read_fd = (int(part) for part in argument.split(","))
    try:
        first = _read_frame(read_fd)
        nonce, instructions = parse_unchecked(first)
        if instructions.get(MORE) is True:
            os.set_inheritable(write_fd, False)
            os.set_inheritable(read_fd, False)
            return write_fd, nonce, instructions
        nonce, instructions = parse_unchecked(first + _read_all(read_fd))
    except BaseException:
        os.close(read_fd)
        raise
    os.close(read_fd)
    os.set_inheritable(write_fd, False)
    return write_fd, nonce, instructions


def read_rest(argument: str, nonce: bytes) -> dict[str, Any]:
    """The rest of the instructions after a first message marked `MORE`: one message, then
    end of file, with the same nonce (ValueError otherwise); the pipe is closed."""
    read_fd = int(argument.split(",")[1])
    try:
        got, rest = parse_unchecked(_read_all(read_fd))
    finally:
        os.close(read_fd)
    if not hmac.compare_digest(got, nonce):
        raise ValueError("the judge's message is malformed: another nonce")
    return rest


def _read_frame(fd: int) -> bytes:
    """Exactly one frame's bytes from `fd` (fewer at end of file: the parse says what is wrong)."""
    data = bytearray()
    while True:
        if len(data) < HEADER_BYTES:
            need = HEADER_BYTES - len(data)
        else:
            need = HEADER_BYTES + _declared_length(data) - len(data)
        if need <= 0:
            return bytes(data)
        chunk = os.read(fd, min(need, 1 << 16))
        if not chunk or data[: len(MAGIC)] != MAGIC[: len(data)]:
            return bytes(data + chunk)  # ended early, or not a frame: the parse names it
        data += chunk


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def answer(fd: int, nonce: bytes, payload: dict[str, Any]) -> None:
    """The child's end: write its one message on `fd`, then close it."""
    try:
        view = memoryview(frame(nonce, payload))
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


class JudgeChannel:
    """Two pipes to one child: `instructions` (with a fresh nonce) in, one message back.

    Use: ``channel.argument`` on the child's command line (two descriptor
    numbers, no path), ``pass_fds=channel.child_fds``, ``channel.started()``
    once the child is running, ``channel.receive()`` once it has ended.
    """

    def __init__(
        self, instructions: dict[str, Any] | None, first: dict[str, Any] | None = None
    ) -> None:
        """`instructions` None: given later (`instruct`); the child waits for them meanwhile.

        `first` (with `instructions` None): a first part sent as the child
        starts, marked `MORE`; the child reads it and then waits for the rest.
        """
        self.nonce = secrets.token_bytes(NONCE_BYTES)
        self._message = b"" if instructions is None else frame(self.nonce, instructions)
        self._first = b"" if first is None else frame(self.nonce, {**first, MORE: True})
        self._in_read, self._in_write = os.pipe()
        self._out_read, self._out_write = os.pipe()
        self._data = bytearray()
        self._eof = threading.Event()
        # Set once a whole message is in: the child has nothing more to say.
        self.reported = threading.Event()
        # Set once a whole message is in and every holder of the child's end has
        # closed it: nothing can be added; what the child does now reaches no verdict.
        self.finished = threading.Event()
        # Set once the child runs (`started`): instructions may be given from then.
        self.running = threading.Event()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._deferred = False

    @property
    def child_fds(self) -> tuple[int, int]:
        return (self._out_write, self._in_read)

    @property
    def argument(self) -> str:
        """The ends' numbers here (for a child started with them where they are)."""
        return f"{self._out_write},{self._in_read}"

    def started(self) -> None:
        """The child runs: drop our copies of its ends, send the instructions, start reading.

        Without instructions yet, only the first: `instruct` does the rest.
        """
        os.close(self._out_write)
        os.close(self._in_read)
        self.running.set()
        if self._message:
            self._start()
        else:
            self._deferred = True
            if self._first:
                try:
                    # A few hundred bytes: the pipe takes them whole, without blocking.
                    os.write(self._in_write, self._first)
                except OSError:
                    pass  # the child ended already: it reports nothing

    def instruct(self, instructions: dict[str, Any]) -> None:
        """The instructions of a child started without them (it waits for them until now)."""
        assert self._deferred and not self._threads, "instructions sent once"
        self._message = frame(self.nonce, instructions)
        self._start()

    def _start(self) -> None:
        for target in (self._send, self._read):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self._threads.append(thread)

    def _send(self) -> None:
        try:
            view = memoryview(self._message)
            while view and not self._stop.is_set():
                written = os.write(self._in_write, view[:65536])
                view = view[written:]
        except OSError:
            pass  # the child ended or closed its end without reading: it reports nothing
        finally:
            os.close(self._in_write)

    def _read(self) -> None:
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([self._out_read], [], [], 0.05)
                if not ready:
                    continue
                chunk = os.read(self._out_read, 1 << 16)
                if not chunk:
                    if _whole(self._data):
                        self.finished.set()
                    self._eof.set()
                    return
                self._data += chunk
                if len(self._data) > MAX_BYTES:
                    return
                if not self.reported.is_set() and _whole(self._data):
                    self.reported.set()
        except OSError:
            return

    def receive(self, wait: float = 5.0) -> Received:
        """After the child ended: its one message, or what was wrong (up to `wait` s for EOF)."""
        if self._deferred and not self._threads:
            self.close()
            return Received()  # never given its instructions: nothing of it is read
        deadline = time.monotonic() + wait
        while not self._eof.is_set() and time.monotonic() < deadline:
            if len(self._data) > MAX_BYTES:
                break
            self._eof.wait(0.05)
        eof = self._eof.is_set()
        self.close()
        data = bytes(self._data)
        if len(data) > MAX_BYTES:
            return Received(tampered=f"more than {MAX_BYTES} bytes")
        if not eof:
            # A process the tests started still holds the child's end: it
            # could write after this verdict, so nothing of it is believed.
            return Received(tampered="the channel was still held open after the run ended")
        return parse(data, self.nonce)

    def abandon(self) -> None:
        """The child's work is not wanted: nothing it sends will be read (`finished` is set)."""
        self.finished.set()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=1.0)
        os.close(self._out_read)
        if self._deferred and not self._threads:
            os.close(self._in_write)  # started, never instructed: the child reads end of file
        elif not self._threads:  # never started: every end is still ours
            for fd in (self._out_write, self._in_read, self._in_write):
                os.close(fd)
