"""engine/channel.py, the child's side: the judge's message parsed, and the rest of the
instructions read from a pipe with the same nonce."""

from __future__ import annotations

import json
import os

import pytest

from pytest_quest.engine.channel import (
    HEADER_BYTES,
    MAGIC,
    NONCE_BYTES,
    frame,
    parse_unchecked,
    read_rest,
)

NONCE = b"n" * NONCE_BYTES
OTHER = b"o" * NONCE_BYTES


def _message(body: bytes, nonce: bytes = NONCE) -> bytes:
    return MAGIC + nonce + len(body).to_bytes(HEADER_BYTES - len(MAGIC) - NONCE_BYTES, "big") + body


def test_parse_unchecked_of_a_message() -> None:
    assert parse_unchecked(frame(NONCE, {"role": "mutate", "n": [1]})) == (
        NONCE,
        {"role": "mutate", "n": [1]},
    )


def test_parse_unchecked_of_a_payload_that_is_no_object() -> None:
    for body in (b"[1, 2]", b'"x"', b"null"):
        with pytest.raises(ValueError) as caught:
            parse_unchecked(_message(body))
        assert str(caught.value) == "the judge's message is not a JSON object"


def test_parse_unchecked_of_a_malformed_message() -> None:
    with pytest.raises(ValueError) as caught:
        parse_unchecked(b"junk")
    assert str(caught.value) == (
        "the judge's message is malformed: bytes that are not a message of the judge's channel"
    )
    with pytest.raises(ValueError) as caught:
        parse_unchecked(frame(NONCE, {}) + b"x")
    assert str(caught.value) == "the judge's message is malformed: extra bytes"


def test_parse_unchecked_of_a_body_that_is_not_json() -> None:
    with pytest.raises(json.JSONDecodeError):
        parse_unchecked(_message(b"{nope"))


def _pipe_with(data: bytes) -> str:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, data)
    os.close(write_fd)
    return f"99,{read_fd}"


def _closed(argument: str) -> bool:
    try:
        os.fstat(int(argument.split(",")[1]))
    except OSError:
        return True
    return False


def test_read_rest_with_the_same_nonce() -> None:
    argument = _pipe_with(frame(NONCE, {"tests": ["t::a"]}))
    assert read_rest(argument, NONCE) == {"tests": ["t::a"]}
    assert _closed(argument)


def test_read_rest_with_another_nonce() -> None:
    argument = _pipe_with(frame(OTHER, {"tests": ["t::a"]}))
    with pytest.raises(ValueError) as caught:
        read_rest(argument, NONCE)
    assert str(caught.value) == "the judge's message is malformed: another nonce"
    assert _closed(argument)


def test_read_rest_of_a_malformed_message_closes_the_pipe() -> None:
    argument = _pipe_with(frame(NONCE, {}) + b"more")
    with pytest.raises(ValueError) as caught:
        read_rest(argument, NONCE)
    assert str(caught.value) == "the judge's message is malformed: extra bytes"
    assert _closed(argument)
