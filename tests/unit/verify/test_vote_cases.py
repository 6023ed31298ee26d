"""The re-check of one finding: why it is dropped, or that it holds."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.verify.protocol import Finding
from pytest_quest.verify.vote import recheck

FILES = {
    "tests/test_a.py": [
        "def test_a():",
        "    assert f(1) == 2",
        "    assert g() is None",
    ]
}


def test_a_finding_without_a_file_or_a_positive_line_cites_nothing() -> None:
    assert recheck(Finding("", 2, "f(1)"), FILES) == "cites no file:line"
    assert recheck(Finding("tests/test_a.py", 0, "f(1)"), FILES) == "cites no file:line"
    assert recheck(Finding("tests/test_a.py", -1, "f(1)"), FILES) == "cites no file:line"


def test_a_file_outside_the_submission_is_named_as_given() -> None:
    assert recheck(Finding("./tests/other.py", 1, "x"), FILES) == (
        "./tests/other.py is not a file of the submission"
    )


def test_a_line_past_the_end_names_the_line_count() -> None:
    assert recheck(Finding("./tests/test_a.py", 4, "x"), FILES) == (
        "tests/test_a.py has 3 lines, no line 4"
    )
    assert recheck(Finding("tests/test_a.py", 3, "g()"), FILES) is None


def test_a_blank_quote_quotes_no_code() -> None:
    assert recheck(Finding("tests/test_a.py", 2, " \t "), FILES) == "quotes no code"


def test_a_quote_holds_on_its_line_whitespace_aside_and_may_run_on() -> None:
    assert recheck(Finding("tests/test_a.py", 2, "assert f( 1 )==2"), FILES) is None
    assert recheck(Finding("tests/test_a.py", 2, "== 2 assert g()"), FILES) is None
    assert recheck(Finding("tests/test_a.py", 1, "def test_a():"), FILES) is None


def test_a_quote_starting_below_or_absent_is_not_at_the_line() -> None:
    assert recheck(Finding("tests/test_a.py", 1, "assert f(1)"), FILES) == (
        "the quoted code is not at tests/test_a.py:1"
    )
    assert recheck(Finding("tests/test_a.py", 2, "assert h()"), FILES) == (
        "the quoted code is not at tests/test_a.py:2"
    )


def test_an_absolute_path_is_read_relative_to_the_rootdir() -> None:
    finding = Finding("/root/project/tests/test_a.py", 2, "f(1)")
    assert recheck(finding, FILES, Path("/root/project")) is None
    assert recheck(finding, FILES) == (
        "/root/project/tests/test_a.py is not a file of the submission"
    )


def test_a_quote_runs_on_over_at_most_twenty_following_lines() -> None:
    lines = [f"x{n} = {n}" for n in range(1, 26)]
    files = {"t.py": lines}
    assert recheck(Finding("t.py", 1, " ".join(lines[:21])), files) is None
    assert recheck(Finding("t.py", 1, " ".join(lines[:22])), files) == (
        "the quoted code is not at t.py:1"
    )
