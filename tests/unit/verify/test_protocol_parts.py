"""The pieces of the verifiers' reply parser: items, discrepancies, one finding, JSON findings."""

from __future__ import annotations

import pytest

from pytest_quest.verify.protocol import (
    Finding,
    ProtocolError,
    _discrepancies,
    _items,
    finding_from_json,
    parse_finding,
    parse_reply,
)


def test_items_without_bullets_are_the_non_empty_lines() -> None:
    assert _items("  one \n\n two\n   \n") == ["one", "two"]
    assert _items("") == []


def test_items_with_bullets_join_continuation_lines() -> None:
    block = "text before\n- first\n  goes on\n* second\n3. third\n4)\n  fourth\n-\n"
    assert _items(block) == ["text before", "first goes on", "second", "third", "fourth"]


def test_discrepancies_that_say_none() -> None:
    assert _discrepancies("  ") == []
    assert _discrepancies("No discrepancies found.") == []
    assert _discrepancies("- none") == []
    # "1none" is no spelling of nothing, the one item "None found" is.
    assert _discrepancies("1. None found") == []


def test_discrepancies_are_parsed_one_finding_per_item() -> None:
    assert _discrepancies("- `t.py:3` `x = 1` too weak\n- none") == [
        Finding("t.py", 3, "x = 1", "too weak"),
        Finding("", 0, "", "none"),
    ]


def test_parse_finding_location_in_backticks_and_a_quote() -> None:
    assert parse_finding("- `tests/t.py:12` `assert f() == 1` is too weak") == Finding(
        "tests/t.py", 12, "assert f() == 1", "is too weak"
    )


def test_parse_finding_double_backtick_quote_and_a_bare_location() -> None:
    assert parse_finding("at tests/t.py:7: `` a `b` c `` - never checked;") == Finding(
        "tests/t.py", 7, "a `b` c", "at : - never checked"
    )


def test_parse_finding_keeps_the_first_location_and_the_first_quote() -> None:
    text = "`a.py:1` `b.py:2` `q1` `q2` reason"
    assert parse_finding(text) == Finding("a.py", 1, "b.py:2", "`q1` `q2` reason")


def test_parse_finding_without_a_location_keeps_the_text_as_reason() -> None:
    assert parse_finding("the test `x` is weak") == Finding("", 0, "x", "the test is weak")
    assert parse_finding("nothing here") == Finding("", 0, "", "nothing here")


def test_parse_finding_ignores_a_location_inside_a_quote() -> None:
    assert parse_finding("`f('a.py:3')` wrong") == Finding("", 0, "f('a.py:3')", "wrong")


def test_finding_from_json_of_a_string_parses_it() -> None:
    assert finding_from_json("`t.py:2` `x` r") == Finding("t.py", 2, "x", "r")


def test_finding_from_json_refuses_what_is_neither_object_nor_string() -> None:
    with pytest.raises(ProtocolError) as caught:
        finding_from_json(3)
    assert str(caught.value) == "JSON reply: each discrepancy must be an object or a string"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (5, 5),
        (" 12 ", 12),
        ("１２", 0),
        ("x", 0),
        (4.0, 4),
        (4.5, 0),
        (True, 0),
        (None, 0),
    ],
)
def test_finding_from_json_line(line: object, expected: int) -> None:
    assert finding_from_json({"file": "t.py", "line": line}).line == expected


def test_finding_from_json_fields_and_their_defaults() -> None:
    assert finding_from_json({"file": "t.py", "line": 3, "quote": "q", "reason": "r"}) == Finding(
        "t.py", 3, "q", "r"
    )
    assert finding_from_json({}) == Finding("", 0, "", "")
    assert finding_from_json({"file": None, "quote": 0, "reason": 7}) == Finding("", 0, "", "7")


JSON_REPLY = (
    '{"status": "verified-with-corrections", "questions": %s, "answers": %s,'
    ' "discrepancies": [{"file": "t.py", "line": 1, "quote": "q"}], "final": "f"}'
)


def test_json_reply_questions_as_a_string_or_a_list() -> None:
    reply = parse_reply(JSON_REPLY % ('"- one\\n- two"', '[" yes ", "", "no"]'))
    assert reply.questions == ("one", "two")
    assert reply.answers == ("yes", "no")


@pytest.mark.parametrize("questions", ["3", '["a", 1]', "null"])
def test_json_reply_questions_of_another_type_are_refused(questions: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_reply(JSON_REPLY % (questions, '["yes"]'))
    assert str(caught.value) == "JSON reply: questions must be a list of strings"
