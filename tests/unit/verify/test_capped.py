"""Reading a verifier's output in chunks up to a cap; feeding it the prompt; sizes in words."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import BinaryIO

import pytest

from pytest_quest.verify.capped import CHUNK, CappedReader, feed, size_text


def _stream_of(tmp_path: Path, data: bytes) -> BinaryIO:
    path = tmp_path / "out"
    path.write_bytes(data)
    return path.open("rb")


def test_a_reader_keeps_everything_under_the_cap(tmp_path: Path) -> None:
    stream = _stream_of(tmp_path, b"caf\xc3\xa9 \xff")
    reader = CappedReader(stream, 100, stop_when_over=True)
    reader.run()
    assert reader.chunks == [b"caf\xc3\xa9 \xff"]
    assert reader.size == 7
    assert not reader.over.is_set()
    assert reader.text() == "café \ufffd"
    assert stream.closed


def test_a_reader_over_the_cap_stops_when_told(tmp_path: Path) -> None:
    stream = _stream_of(tmp_path, b"x" * (CHUNK + 10))
    reader = CappedReader(stream, CHUNK + 5, stop_when_over=True)
    reader.run()
    assert reader.over.is_set()
    assert reader.size == CHUNK
    assert reader.text() == "x" * CHUNK
    assert stream.closed


def test_a_reader_over_the_cap_drains_the_rest_when_told_not_to_stop(tmp_path: Path) -> None:
    stream = _stream_of(tmp_path, b"a" * CHUNK + b"b" * CHUNK + b"c" * 3)
    reader = CappedReader(stream, CHUNK + 3, stop_when_over=False)
    reader.run()
    assert reader.over.is_set()
    assert reader.text() == "a" * CHUNK + "ccc"
    assert reader.size == CHUNK + 3


class _Directory(io.RawIOBase):
    """A stream whose descriptor cannot be read: os.read raises IsADirectoryError."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDONLY)
        self.close_calls = 0

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        self.close_calls += 1
        os.close(self.fd)


def test_a_reader_ends_quietly_when_the_read_fails(tmp_path: Path) -> None:
    stream = _Directory(tmp_path)
    reader = CappedReader(stream, 10, stop_when_over=True)  # type: ignore[arg-type]
    reader.run()
    assert reader.chunks == []
    assert not reader.over.is_set()
    assert stream.close_calls == 1


class _Stdin(io.BytesIO):
    def __init__(self, write_error: bool, close_error: bool) -> None:
        super().__init__()
        self.write_error = write_error
        self.close_error = close_error
        self.close_calls = 0
        self.written = b""

    def write(self, data: object) -> int:
        if self.write_error:
            raise BrokenPipeError(32, "Broken pipe")
        assert isinstance(data, bytes)
        self.written += data
        return len(data)

    def close(self) -> None:
        self.close_calls += 1
        if self.close_error:
            raise BrokenPipeError(32, "Broken pipe")
        super().close()


@pytest.mark.parametrize(
    ("write_error", "close_error", "written"),
    [(False, False, b"prompt"), (True, False, b""), (False, True, b"prompt"), (True, True, b"")],
)
def test_feed_writes_then_closes_whatever_the_verifier_does(
    write_error: bool, close_error: bool, written: bytes
) -> None:
    stdin = _Stdin(write_error, close_error)
    feed(stdin, b"prompt")
    assert stdin.written == written
    assert stdin.close_calls == 1


def test_size_text_in_the_largest_whole_unit() -> None:
    assert size_text(1024 * 1024) == "1 MB"
    assert size_text(3 * 1024 * 1024) == "3 MB"
    assert size_text(1024 * 1024 + 1024) == "1025 KB"
    assert size_text(2048) == "2 KB"
    assert size_text(1000) == "1000 bytes"
    assert size_text(0) == "0 MB"
