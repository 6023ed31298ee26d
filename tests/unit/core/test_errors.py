"""The errors pytest-quest raises name what is wrong and where."""

from __future__ import annotations

from pytest_quest.core.errors import RatchetFileError


def test_a_ratchet_file_error_names_the_file_the_problem_and_the_fix() -> None:
    error = RatchetFileError("quest.json", "not valid JSON", "restore it from git")
    assert str(error) == "quest.json: not valid JSON (restore it from git)"
    assert (error.path, error.problem, error.fix) == (
        "quest.json",
        "not valid JSON",
        "restore it from git",
    )


def test_a_ratchet_file_error_without_a_fix_adds_no_parentheses() -> None:
    error = RatchetFileError("quest.json", "not valid JSON")
    assert str(error) == "quest.json: not valid JSON"
    assert error.fix == ""
