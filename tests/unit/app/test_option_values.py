"""Each option value checked by its kind: counts, seconds, choices, texts, quest ids, shard options."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_quest.app.options import (
    QuestOptions,
    _shown,
    check_shard_options,
    parse_choice,
    parse_count,
    parse_quest_id,
    parse_seconds,
    parse_text,
)
from pytest_quest.core.errors import QuestUsageError


def _options(format: str) -> QuestOptions:
    return QuestOptions(
        command="next",
        sources=[],
        quest_file=Path("quest.json"),
        max_tries=3,
        format=format,
        quest_id=None,
        timeout=60.0,
        lock_timeout=5.0,
        strict=False,
        reopen=None,
        accept=None,
        export_to=None,
        export_force=False,
        mutants=True,
        verify="off",
        measure_out=None,
    )


def test_json_is_the_json_format_only() -> None:
    assert _options("json").json is True
    assert _options("text").json is False
    assert _options("JSON").json is False


def test_shown_quotes_text_and_cuts_it_at_forty() -> None:
    assert _shown("ab") == "'ab'"
    assert _shown(12) == "12"
    assert _shown("x" * 38) == "'" + "x" * 38 + "'"  # 40 characters: kept
    assert _shown("x" * 39) == "'" + "x" * 36 + "..."
    assert _shown("a\nb") == "'a\\nb'"


ALLOWED = "allowed: a whole number from 1 to 1000"


def test_parse_count_accepts_ints_and_text() -> None:
    assert parse_count(1) == 1
    assert parse_count(1000) == 1000
    assert parse_count(" 7 ") == 7
    assert parse_count("5", high=5) == 5


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, f"True is not a whole number ({ALLOWED})"),
        ("x", f"'x' is not a whole number ({ALLOWED})"),
        ("1.5", f"'1.5' is not a whole number ({ALLOWED})"),
        (2.0, f"2.0 is not a whole number ({ALLOWED})"),
        (None, f"None is not a whole number ({ALLOWED})"),
        (0, f"0 must be 1 or more ({ALLOWED})"),
        ("-3", f"-3 must be 1 or more ({ALLOWED})"),
        (1001, f"1001 is more than 1000 ({ALLOWED})"),
    ],
)
def test_parse_count_refuses(value: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_count(value)
    assert str(caught.value) == message


def test_parse_count_with_another_high() -> None:
    with pytest.raises(ValueError) as caught:
        parse_count(6, high=5)
    assert str(caught.value) == "6 is more than 5 (allowed: a whole number from 1 to 5)"


RANGE = "allowed: more than 0 and at most 604800 seconds (one week)"


def test_parse_seconds_accepts_numbers_and_text() -> None:
    assert parse_seconds(1) == 1.0
    assert parse_seconds(0.5) == 0.5
    assert parse_seconds(" 2.5 ") == 2.5
    assert parse_seconds(604800) == 604800.0


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (False, f"False is not a number of seconds ({RANGE})"),
        ("soon", f"'soon' is not a number of seconds ({RANGE})"),
        (None, f"None is not a number of seconds ({RANGE})"),
        ("nan", f"'nan' is not a finite number of seconds ({RANGE})"),
        (float("inf"), f"inf is not a finite number of seconds ({RANGE})"),
        (10**400, f"{str(10**400)[:37]}... is not a finite number of seconds ({RANGE})"),
        (0, f"0 must be more than 0 seconds ({RANGE})"),
        ("-1.5", f"-1.5 must be more than 0 seconds ({RANGE})"),
        (604800.5, f"604800 seconds is more than one week ({RANGE})"),
        (1e9, f"1e+09 seconds is more than one week ({RANGE})"),
    ],
)
def test_parse_seconds_refuses(value: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_seconds(value)
    assert str(caught.value) == message


def test_parse_choice_keeps_a_choice_and_suggests_a_near_miss() -> None:
    assert parse_choice("json", ("text", "json"), "format") == "json"
    with pytest.raises(ValueError) as caught:
        parse_choice("jsno", ("text", "json"), "format")
    assert str(caught.value) == "unknown format 'jsno' (choose from text, json); did you mean json?"
    with pytest.raises(ValueError) as caught:
        parse_choice(3, ("on", "off"), "mode")
    assert str(caught.value) == "unknown mode '3' (choose from on, off)"


def test_parse_text() -> None:
    assert parse_text(" a b ", "pattern") == " a b "
    assert parse_text(5, "id") == "5"
    with pytest.raises(ValueError) as caught:
        parse_text(" \t", "path")
    assert str(caught.value) == "expected a path, got an empty value"
    with pytest.raises(ValueError) as caught:
        parse_text("a\0b", "quest id")
    assert str(caught.value) == "'a\\x00b': a quest id cannot hold a NUL character"


def test_parse_quest_id_reads_console_escapes_back() -> None:
    assert parse_quest_id("src/gr\\xfc\\xdf.py::f") == "src/grüß.py::f"
    assert parse_quest_id("a.py::\\u03c0") == "a.py::π"
    assert parse_quest_id("a.py::\\U0001F600x") == "a.py::\U0001f600x"
    assert parse_quest_id("a.py::f\\n\\xZZ") == "a.py::f\\n\\xZZ"
    with pytest.raises(ValueError) as caught:
        parse_quest_id("")
    assert str(caught.value) == "expected a quest id, got an empty value"


def test_check_shard_options() -> None:
    check_shard_options("submit", None, ["--quest-base"])
    check_shard_options("submit", "", [])
    check_shard_options("scan", "shards/1", [])
    check_shard_options("check", Path("out"), [])
    with pytest.raises(QuestUsageError) as caught:
        check_shard_options("next", "out", [])
    assert str(caught.value) == (
        "--quest-shard-out is an option of `pytest --quest scan` and `pytest --quest check`"
    )
    with pytest.raises(QuestUsageError) as caught:
        check_shard_options("check", "out", ["--quest-base", "--quest-since"])
    assert str(caught.value) == (
        "--quest-base belongs to `pytest --quest combine`, which runs the check on the shards; "
        "a job with --quest-shard-out only measures its part of the suite"
    )
