"""Start-up reads the recorded policy from the ratchet file's head only, the same as from all of it."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from pytest_quest.core.model import Ratchet
from pytest_quest.core.policy import GatePolicy
from pytest_quest.engine.codec import dumps, dumps_v1
from pytest_quest.plugin.options import header_fields
from tests.unit.engine.test_layout import passed, ratchet_of, todo


def ratchet_with_policy() -> Ratchet:
    ratchet = ratchet_of(todo("a", ["t::x"]), passed("p", ["t::y"]))
    ratchet.policy = GatePolicy(sources=("src",))
    ratchet.active = "src/pkg/m.py::a"
    return ratchet


@pytest.mark.parametrize("write", [dumps, dumps_v1])
def test_the_head_holds_what_the_whole_file_holds(write: Callable[[Ratchet], str]) -> None:
    raw = write(ratchet_with_policy()).encode()
    whole = json.loads(raw)
    head = header_fields(raw)
    assert head["policy"] == whole["policy"] and head["active"] == whole["active"]


def test_a_policy_after_the_head_is_read_from_the_whole_file() -> None:
    raw = dumps(ratchet_of(todo("a", ["t::x"]))).encode()
    moved = raw[:-3] + b',\n"policy": {"sources": ["lib"]}\n}\n'
    assert header_fields(moved)["policy"] == {"sources": ["lib"]}
    assert "policy" not in header_fields(raw)


def test_a_head_that_is_not_json_is_left_to_the_whole_parse() -> None:
    raw = dumps(ratchet_with_policy()).encode().replace(b'"schema": 2', b'"schema": 2 2', 1)
    with pytest.raises(ValueError):
        header_fields(raw)
