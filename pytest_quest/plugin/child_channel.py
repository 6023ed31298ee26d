"""A gate child's end of the judge's channel: instructions read once, early; one message sent, then closed.

The nonce stays in this module's memory only; docs/judge.md says what that does and does not stop.
"""

from __future__ import annotations

import os
from typing import Any

from pytest_quest.engine.channel import MORE, answer, read_instructions, read_rest

_state: dict[str, Any] = {}


def open_channel(argument: str) -> dict[str, Any]:
    """Read the judge's instructions from ``W,R`` (descriptor numbers); the same on every call.

    The read end is closed at once; the write end is kept for `send`, and
    made non-inheritable so that no program the tests start gets it.
    """
    if "instructions" in _state:
        return dict(_state["instructions"])
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # A pytest-xdist worker of the measuring child: started by it, not by
        # the judge, so the descriptors are not its own.  It hands its data to
        # the controller (plugin/xdist.py), which reports.
        _state["instructions"] = {"role": "measure"}
        return {"role": "measure"}
    _state["output"] = _output_file()
    write_fd, nonce, instructions = read_instructions(argument)
    _state.update(fd=write_fd, nonce=nonce, instructions=instructions)
    if instructions.get(MORE) is True:
        _state["rest"] = argument  # a first part: the rest is read by `complete`
    return dict(instructions)


def _output_file() -> str:
    """The file this process's output goes to at its start (its log), or ""."""
    try:
        target = os.readlink("/proc/self/fd/1")
    except OSError:
        return ""
    return target if target.startswith("/") and os.path.isfile(target) else ""


def output_file() -> str:
    """Where this child's output went when it read its instructions: its fresh runs' goes there too."""
    return str(_state.get("output", ""))


def complete() -> dict[str, Any]:
    """The whole instructions: after a first part, the rest read now (waiting for it), merged.

    Called before any conftest is imported: the pipe is closed then, as when
    the instructions came whole.
    """
    argument = _state.pop("rest", None)
    if argument is not None:
        first = {k: v for k, v in _state["instructions"].items() if k != MORE}
        _state["instructions"] = {**first, **read_rest(argument, _state["nonce"])}
    return instructions()


def opened() -> bool:
    return "instructions" in _state


def instructions() -> dict[str, Any]:
    return dict(_state.get("instructions") or {})


def send(payload: dict[str, Any]) -> None:
    """Write the one message and close the channel (a second call sends nothing)."""
    fd = _state.pop("fd", None)
    nonce = _state.pop("nonce", None)
    if fd is None or nonce is None:
        return
    answer(fd, nonce, payload)


def close() -> None:
    """Close the channel without a message (the judge then sees an incomplete run)."""
    fd = _state.pop("fd", None)
    _state.pop("nonce", None)
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass
