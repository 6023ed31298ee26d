"""Counted nouns and summarised lists: the small words of the text output."""

from __future__ import annotations

import pytest

from pytest_quest.report.text import counted, summarised


@pytest.mark.parametrize(
    ("number", "noun", "plural", "expected"),
    [
        (0, "test", "", "0 tests"),
        (1, "test", "", "1 test"),
        (2, "new quest", "", "2 new quests"),
        (1, "branch", "branches", "1 branch"),
        (3, "branch", "branches", "3 branches"),
    ],
)
def test_counted(number: int, noun: str, plural: str, expected: str) -> None:
    assert counted(number, noun, plural) == expected


def test_summarised_keeps_a_short_list_whole() -> None:
    assert summarised(["a", "b"]) == "a; b"
    assert summarised([]) == ""


def test_summarised_shows_the_first_few_and_a_count() -> None:
    items = [f"tests/test_{n}.py:1: ModuleNotFoundError" for n in range(69)]
    text = summarised(items)
    assert text.endswith("; and 64 more")
    assert text.count("ModuleNotFoundError") == 5
    assert len(text) < 300


def test_summarised_cuts_each_long_item() -> None:
    text = summarised(["x" * 1000], width=50)
    assert text == "x" * 47 + "..."
