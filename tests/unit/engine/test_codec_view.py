"""The reader of `status` and `next` (engine/codec_view.py): lists kept raw, the rest checked.

Attacks first: each edit below is made on a file as the writer lays it out
(the only files this reader takes); it must hand back None, so a reader that
names the field judges it, or name the field when the list is first used.
"""

from __future__ import annotations

import json
import re

import pytest
from msgspec.structs import fields

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import DECODED_ON_USE, State
from pytest_quest.engine import codec, codec_fast, codec_lazy, codec_view
from tests.unit.engine.test_codec_fast import FILE, sample


@pytest.fixture(scope="module")
def text() -> bytes:
    return codec.dump_bytes(sample())


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
    view = codec_view.read(text)
    assert view is not None
    assert view == codec.loads(text) == sample()
    assert codec.dump_bytes(view) == text


def test_lists_and_the_tests_table_wait_for_their_first_use(text: bytes) -> None:
    view = codec_view.read(text)
    assert view is not None
    quest = view.quests[TODO_ID]
    assert not DECODED_ON_USE & vars(quest).keys()
    assert "test_table" not in vars(view)
    assert quest.covering_tests == ["tests/test_m.py::test_0", "tests/test_m.py::test_1"]
    assert "test_table" not in vars(view)  # a quest's tests are resolved on their own
    assert [fact.field for fact in quest.facts] == [f"{FILE}:12", f"{FILE}:13->exit"]
    assert view.test_table == codec.loads(text).test_table


def test_status_and_next_take_this_path_for_a_file_the_writer_wrote(text: bytes) -> None:
    lazy = codec_lazy.loads_lazy(text)
    assert "_v" in vars(next(iter(lazy.quests.values())))


# -- what it hands to the other readers ------------------------------------------------


@pytest.mark.parametrize(
    ("qid", "old", "new", "message"),
    [
        (TODO_ID, b'"statements"', b'"statementz"', r"unknown field"),
        (TODO_ID, b'"lines": [11, 18]', b'"lines": [18, 11]', r"\.lines"),
        (TODO_ID, b'"tries": 1', b'"tries": -1', r"\.tries"),
        (TODO_ID, b'"tries": 1', b'"tries": true', r"\.tries"),
        (TODO_ID, b'"qualname": "C.f1"', b'"qualname": "C.f1\\u001b[2J"', r"qualname"),
        (PASS_ID, b'"covering_tests": [0, 1, 2]', b'"covering_tests": []', r"must record the tests"),
        (PASS_ID, b'"covering_tests": [0, 1, 2]', b'"covering_tests": [ ]', r"must record the tests"),
        (PASS_ID, b'"passed_at"', b'"missing_lines": [ 3 ], "passed_at"', r"missing"),
        (PASS_ID, b'"passed_at": "2026-01-02T00:00:00Z", ', b"", r"passed_at"),
        (TODO_ID, b'"issued_seal": "sha256:', b'"issued_seal": 1e400, "x": "', r"extra"),
    ],
)
def test_a_damaged_field_is_left_to_the_reader_that_names_it(
    text: bytes, qid: str, old: bytes, new: bytes, message: str
) -> None:
    damaged = edited(text, qid, old, new)
    assert codec_view.read(damaged) is None
    with pytest.raises(RatchetFileError, match=message):
        codec_lazy.loads_lazy(damaged)


def test_a_quest_written_twice_is_left_to_the_reader_that_refuses_it(text: bytes) -> None:
    line = line_of(text, TODO_ID)
    twice = text.replace(line, line + b"\n" + line)
    assert codec_view.read(twice) is None
    with pytest.raises(RatchetFileError, match=r"duplicate key"):
        codec_lazy.loads_lazy(twice)


def test_a_field_of_the_file_written_twice_or_spelled_out_is_left_to_the_others(text: bytes) -> None:
    twice = text.replace(b'"schema": 2,\n', b'"schema": 2,\n"schema": 2,\n')
    assert codec_view.read(twice) is None
    with pytest.raises(RatchetFileError, match=r"duplicate key"):
        codec_lazy.loads_lazy(twice)
    ratchet = sample()
    ratchet.removed = []
    plain = codec.dump_bytes(ratchet)
    assert codec_view.read(plain) is not None
    spelled = plain.replace(b'"schema": 2,\n', b'"removed": [],\n"schema": 2,\n')
    assert codec_view.read(spelled) is None
    assert codec_lazy.loads_lazy(spelled) == codec.loads(spelled)


def test_a_field_written_twice_inside_one_quest_shows_its_last_value_and_no_writer_takes_it(
    text: bytes,
) -> None:
    """The documented limit of this reader (docs/reliability.md): the writers refuse the file."""
    damaged = edited(text, TODO_ID, b'"tries": 1', b'"tries": 2, "tries": 1')
    view = codec_view.read(damaged)
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
def test_a_bad_list_element_waits_for_its_use_then_is_named(
    text: bytes, old: bytes, new: bytes, field: str
) -> None:
    qid = REVIEW_ID if field == "facts" else TODO_ID
    damaged = edited(text, qid, old, new)
    view = codec_view.read(damaged)
    assert view is not None
    with pytest.raises(RatchetFileError, match=rf"quests\['{re.escape(qid)}'\]\.{field}"):
        getattr(view.quests[qid], field)


def test_a_bad_tests_table_is_named_when_a_quest_needs_it(text: bytes) -> None:
    damaged = text.replace(b'"tests/test_m.py::test_0"', b"0", 1)
    view = codec_view.read(damaged)
    assert view is not None
    assert view.quests[TODO_ID].state is State.TODO  # the rest is shown
    with pytest.raises(RatchetFileError, match=r"tests\[0\]"):
        view.quests[TODO_ID].covering_tests  # noqa: B018 - the read is the test


def test_a_file_laid_out_otherwise_is_read_by_the_others(text: bytes) -> None:
    indented = json.dumps(json.loads(text), indent=2).encode()
    assert codec_view.read(indented) is None
    assert codec_lazy.loads_lazy(indented) == codec.loads(text)
    assert codec_view.read(text.decode().replace("C.f1", "C.f\u00e91")) is None  # not ASCII


# -- the Structs say what the field-by-field reader says ------------------------------


def test_the_structs_of_both_typed_readers_name_the_fields_the_full_reader_knows() -> None:
    """A field added to the model and the full reader but not to a Struct would be refused."""
    def names(struct: type) -> set[str]:
        return {field.encode_name for field in fields(struct)}

    assert names(codec_fast.QuestS) == names(codec_view.QuestViewS) == set(codec._QUEST_KEYS)
    assert names(codec_fast.HeadS) == names(codec_view.HeadViewS) == set(codec._RATCHET_KEYS)
    assert names(codec_fast.FactS) == set(codec._FACT_KEYS)
    assert names(codec_fast.EventS) == set(codec._EVENT_KEYS)
