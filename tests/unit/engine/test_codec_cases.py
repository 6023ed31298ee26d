"""engine/codec.py's small pieces: the tests table's layout, field names, strict parsing, PASS rules."""

from __future__ import annotations

import pytest

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import State
from pytest_quest.engine import codec
from tests.unit.engine.test_codec import sample

FAIL = codec._Fail("quest.json")


@pytest.mark.parametrize(
    ("raw", "names", "expected"),
    [
        (b"[]", [], True),
        (b"[ ]", [], False),
        (b"[\n]", [], False),
        (b'[\n"a"\n]', ["a"], True),
        (b'[\n"a",\n"b"\n]', ["a", "b"], True),
        (b'["a",\n"b"]', ["a", "b"], False),
        (b'[\n"a", "b"\n]', ["a", "b"], False),
        (b'[\n"a",\n"b" \n]', ["a", "b"], False),
        (b'[\n"a",\n"b"]\n', ["a", "b"], False),
        (b'[ "a",\n"b"\n]', ["a", "b"], False),
        (b'[\n "a",\n"b"]', ["a", "b"], False),
    ],
)
def test_one_a_line(raw: bytes, names: list[str], expected: bool) -> None:
    assert codec._one_a_line(raw, names) is expected


def test_named_active() -> None:
    message = "Expected `str | null`, got `int` - at `$.active`"
    assert codec._named(message, "", {}, codec.HeadS, []) == (
        "active",
        "expected a quest id or null",
    )


def test_a_non_string_active_is_named_when_read() -> None:
    text = codec.dump_bytes(sample()).replace(b'"active": "', b'"active": 5, "x": "', 1)
    with pytest.raises(RatchetFileError) as caught:
        codec.loads(text)
    assert caught.value.problem == "active: expected a quest id or null"


def test_a_key_written_twice_in_two_spellings_has_no_line() -> None:
    with pytest.raises(RatchetFileError) as caught:
        codec.strict_parse_file('{"a": 1, "\\u0061": 2}', "q.json")
    assert str(caught.value) == (
        "q.json: duplicate key 'a': a quest id or a field appears twice in one object "
        "(keep one of the two entries, or restore it from version control if unsure)"
    )


def test_a_key_written_twice_is_named_with_its_line() -> None:
    with pytest.raises(RatchetFileError) as caught:
        codec.strict_parse_file('{"a": 1,\n\n"a": 2}', "q.json")
    assert caught.value.problem == (
        "duplicate key 'a' at line 3: a quest id or a field appears twice in one object"
    )


def test_strict_parse_file_reads_bytes_and_text() -> None:
    assert codec.strict_parse_file(b'{"a": [1, 2.5]}', "q.json") == {"a": [1, 2.5]}
    assert codec.strict_parse_file('{"a": null}', "q.json") == {"a": None}


def test_strict_parse_file_refuses_what_is_not_json() -> None:
    with pytest.raises(RatchetFileError) as caught:
        codec.strict_parse_file(b"\xff{}", "q.json")
    assert caught.value.problem == "not UTF-8 text (byte 0xff at offset 0)"
    with pytest.raises(RatchetFileError) as caught:
        codec.strict_parse_file(" \n", "q.json")
    assert caught.value.problem == "the file is empty"
    with pytest.raises(RatchetFileError) as caught:
        codec.strict_parse_file('{\n"a": }', "q.json")
    assert caught.value.problem == "not valid JSON at line 2 column 6"
    assert caught.value.fix == codec.RESTORE


def _pass_quest(**fields: object) -> codec.QuestS:
    base: dict[str, object] = {
        "file": "src/m.py",
        "qualname": "f",
        "lines": (1, 3),
        "fingerprint": "sha256:" + "0" * 64,
        "state": State.PASS,
        "passed_at": "2026-01-02T00:00:00Z",
        "covering_tests": [0],
    }
    base.update(fields)
    return codec.QuestS(**base)  # type: ignore[arg-type]


def test_pass_rules_accept_a_complete_pass() -> None:
    codec._pass_rules("src/m.py::f", _pass_quest(), FAIL)  # no error


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        (
            {"passed_at": ""},
            "quests['src/m.py::f'].passed_at: a PASS quest must record when it passed",
        ),
        (
            {"fingerprint": ""},
            "quests['src/m.py::f'].fingerprint: a PASS quest must record its fingerprint",
        ),
        (
            {"covering_tests": []},
            "quests['src/m.py::f'].covering_tests: a PASS quest must record the tests that cover it",
        ),
        (
            {"missing_lines": [2]},
            "quests['src/m.py::f']: a PASS quest cannot have missing lines or branches",
        ),
        (
            {"missing_branches": [(2, 3)]},
            "quests['src/m.py::f']: a PASS quest cannot have missing lines or branches",
        ),
    ],
)
def test_pass_rules_name_the_rule_broken(fields: dict[str, object], problem: str) -> None:
    with pytest.raises(RatchetFileError) as caught:
        codec._pass_rules("src/m.py::f", _pass_quest(**fields), FAIL)
    assert caught.value.problem == problem


def test_origin_used_is_computed_once() -> None:
    origin = codec.Origin(b"", codec.HeadS(schema=2), codec._Table(None, FAIL, []))
    origin.pristine = {
        "a": {"_s": _pass_quest(covering_tests=[0, 2])},
        "b": {"_s": _pass_quest(covering_tests=[2, 5])},
    }
    first = origin.used()
    assert first == {0, 2, 5}
    origin.pristine = {}
    assert origin.used() is first


def test_a_policy_key_with_a_space_is_named_under_policy() -> None:
    text = codec.dump_bytes(sample()).replace(b'"policy": {', b'"policy": {"a b": 1, ', 1)
    with pytest.raises(RatchetFileError) as caught:
        codec.loads(text)
    assert caught.value.problem.startswith("policy: a b: unknown field (known: ")


def test_a_removed_entry_that_is_not_strings_is_named() -> None:
    text = codec.dump_bytes(sample()).replace(
        b'"removed": [{"at": "2026-01-01T00:00:00Z"', b'"removed": [{"at": 5', 1
    )
    with pytest.raises(RatchetFileError) as caught:
        codec.loads(text)
    assert caught.value.problem == "removed[0]: expected an object of strings"
