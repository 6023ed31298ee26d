"""Reading a file in the writer's layout for `status` and `next` (``codec.view``).

Attacks first: each edit below is made on a file as the writer lays it out;
the reader must name the field at once, or when the list is first used, or
hand the file back (None) to `codec.loads`, which names it.
"""

from __future__ import annotations

import json
import re

import pytest
from msgspec.structs import fields

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import DECODED_ON_USE, Event, Fact, Quest, Ratchet, State
from pytest_quest.engine import codec
from tests.unit.engine.test_codec import FILE, sample


@pytest.fixture(scope="module")
def text() -> bytes:
    return codec.dump_bytes(sample())


def lazy(text: bytes | str) -> Ratchet:
    return codec.loads(text, "quest.json", lazy=True)


def line_of(text: bytes, qid: str) -> bytes:
    return next(line for line in text.split(b"\n") if line.startswith(f'"{qid}": '.encode()))


def edited(text: bytes, qid: str, old: bytes, new: bytes) -> bytes:
    line = line_of(text, qid)
    assert old in line, (old, line)
    return text.replace(line, line.replace(old, new, 1))


TODO_ID = f"{FILE}::C.f1"
PASS_ID = f"{FILE}::C.f2"
REVIEW_ID = f"{FILE}::C.f3"


# -- what it reads: the same ratchet as every other reader ----------------------------


def test_the_same_ratchet_as_the_full_reader_and_the_same_bytes_written(text: bytes) -> None:
    view = codec.view(text, "quest.json")
    assert view is not None
    assert view == codec.loads(text) == sample()
    assert codec.dump_bytes(view) == text


def test_lists_and_the_tests_table_wait_for_their_first_use(text: bytes) -> None:
    view = codec.view(text, "quest.json")
    assert view is not None
    quest = view.quests[TODO_ID]
    assert not DECODED_ON_USE & vars(quest).keys()
    assert "test_table" not in vars(view)
    assert quest.covering_tests == ["tests/test_m.py::test_0", "tests/test_m.py::test_1"]
    assert "test_table" not in vars(view)  # a quest's tests are resolved on their own
    assert [fact.field for fact in quest.facts] == [f"{FILE}:12", f"{FILE}:13->exit"]
    assert view.test_table == codec.loads(text).test_table


def test_status_and_next_take_this_path_for_a_file_the_writer_wrote(text: bytes) -> None:
    shown = lazy(text)
    assert "_s" in vars(next(iter(shown.quests.values())))


# -- what it hands to the other readers ------------------------------------------------


@pytest.mark.parametrize(
    ("qid", "old", "new", "message"),
    [
        (TODO_ID, b'"statements"', b'"statementz"', r"unknown field"),
        (TODO_ID, b'"lines": [11, 18]', b'"lines": [18, 11]', r"\.lines"),
        (TODO_ID, b'"tries": 1', b'"tries": -1', r"\.tries"),
        (TODO_ID, b'"tries": 1', b'"tries": true', r"\.tries"),
        (TODO_ID, b'"qualname": "C.f1"', b'"qualname": "C.f1\\u001b[2J"', r"qualname"),
        (
            PASS_ID,
            b'"covering_tests": [0, 1, 2]',
            b'"covering_tests": []',
            r"must record the tests",
        ),
        (
            PASS_ID,
            b'"covering_tests": [0, 1, 2]',
            b'"covering_tests": [ ]',
            r"must record the tests",
        ),
        (PASS_ID, b'"passed_at"', b'"missing_lines": [ 3 ], "passed_at"', r"missing"),
        (PASS_ID, b'"passed_at": "2026-01-02T00:00:00Z", ', b"", r"passed_at"),
        (TODO_ID, b'"issued_seal": "sha256:', b'"issued_seal": 1e400, "x": "', r"extra"),
    ],
)
def test_a_damaged_field_is_named(
    text: bytes, qid: str, old: bytes, new: bytes, message: str
) -> None:
    damaged = edited(text, qid, old, new)
    with pytest.raises(RatchetFileError, match=message):
        lazy(damaged)


def test_a_quest_written_twice_is_left_to_the_reader_that_refuses_it(text: bytes) -> None:
    line = line_of(text, TODO_ID)
    twice = text.replace(line, line + b"\n" + line)
    assert codec.view(twice, "quest.json") is None
    with pytest.raises(RatchetFileError, match=r"duplicate key"):
        lazy(twice)


def test_a_field_of_the_file_written_twice_or_spelled_out_is_left_to_the_others(
    text: bytes,
) -> None:
    twice = text.replace(b'"schema": 2,\n', b'"schema": 2,\n"schema": 2,\n')
    assert codec.view(twice, "quest.json") is None
    with pytest.raises(RatchetFileError, match=r"duplicate key"):
        lazy(twice)
    ratchet = sample()
    ratchet.removed = []
    plain = codec.dump_bytes(ratchet)
    assert codec.view(plain, "quest.json") is not None
    spelled = plain.replace(b'"schema": 2,\n', b'"removed": [],\n"schema": 2,\n')
    assert codec.view(spelled, "quest.json") is None
    assert lazy(spelled) == codec.loads(spelled)


def test_a_field_written_twice_inside_one_quest_shows_its_last_value_and_no_writer_takes_it(
    text: bytes,
) -> None:
    """The documented limit of this reader (docs/reliability.md): the writers refuse the file."""
    damaged = edited(text, TODO_ID, b'"tries": 1', b'"tries": 2, "tries": 1')
    view = codec.view(damaged, "quest.json")
    assert view is not None and view.quests[TODO_ID].tries == 1
    with pytest.raises(RatchetFileError, match=r"duplicate key"):
        codec.loads(damaged)


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        (b'"missing_lines": [12]', b'"missing_lines": ["x"]', "missing_lines"),
        (b'"missing_branches": [[13, -11]]', b'"missing_branches": [[13]]', "missing_branches"),
        (b'"covering_tests": [0, 1]', b'"covering_tests": [0, 99]', "covering_tests"),
        (b'"covering_tests": [0, 1]', b'"covering_tests": [0, -1]', "covering_tests"),
        (b'"check": "gate.stability"', b'"check": 5', "facts"),
    ],
)
def test_a_bad_list_element_is_named_at_once_or_on_its_use(
    text: bytes, old: bytes, new: bytes, field: str
) -> None:
    qid = REVIEW_ID if field == "facts" else TODO_ID
    damaged = edited(text, qid, old, new)
    with pytest.raises(RatchetFileError, match=rf"quests\['{re.escape(qid)}'\]\.{field}"):
        getattr(lazy(damaged).quests[qid], field)


def test_a_bad_tests_table_is_named_when_a_quest_needs_it(text: bytes) -> None:
    damaged = text.replace(b'"tests/test_m.py::test_0"', b"0", 1)
    view = codec.view(damaged, "quest.json")
    assert view is not None
    assert view.quests[TODO_ID].state is State.TODO  # the rest is shown
    with pytest.raises(RatchetFileError, match=r"tests\[0\]"):
        view.quests[TODO_ID].covering_tests  # noqa: B018 - the read is the test


def test_a_file_laid_out_otherwise_is_read_by_the_others(text: bytes) -> None:
    indented = json.dumps(json.loads(text), indent=2).encode()
    assert codec.view(indented, "quest.json") is None
    assert lazy(indented) == codec.loads(text)
    not_ascii = text.replace(b"C.f1", "C.f\u00e91".encode())
    assert codec.view(not_ascii, "quest.json") is None


# -- the Structs name the fields the writer writes -------------------------------------


def test_the_structs_name_every_field_the_writer_writes() -> None:
    """A field the writer writes but no Struct names would be refused on the next read."""

    def names(struct: type) -> set[str]:
        return {field.encode_name for field in fields(struct)}

    quest = Quest(id="", file="", qualname="", first=1, last=1, fingerprint="")
    assert names(codec.QuestS) == set(codec.quest_to_dict(quest)) | {"extra"}
    head = set(codec.ratchet_to_dict(Ratchet())) | {"policy", "policy_history", "tests"}
    assert names(codec.HeadS) == head
    assert names(codec.FactS) == set(Fact("", "", "", "", message="m").to_dict())
    event = Event(at="", action="", verdict="v", by="b", note="n", reason="r", fingerprint="f")
    assert names(codec.EventS) == set(event.to_dict())
