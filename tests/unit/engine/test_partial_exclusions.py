"""engine/source.py: partial-branch pattern lines new since issue (gate step 2)."""

from __future__ import annotations

from pytest_quest.core.model import FunctionFacts
from pytest_quest.engine.source import new_partial_exclusions, partial_branch_lines

PRAGMA = r"#\s*(pragma|PRAGMA)[:\s]?\s*(no|NO)\s*(branch|BRANCH)"
WHILE = r"^\s*(((el)?if)|while)\s+(True|1|False|0)\s*:\s*$"
SOURCE = [
    "def f(x):",
    "    while True:",
    "        if x < 0:  # pragma: no branch",
    "            x = 0",
    "        return x",
]


def facts() -> FunctionFacts:
    return FunctionFacts(
        file="m.py",
        qualname="f",
        ordinal=1,
        start=1,
        first=1,
        last=5,
        fingerprint="x",
        statements=4,
        branches=2,
    )


def test_lines_matched_by_any_pattern() -> None:
    found = partial_branch_lines(SOURCE, 1, 5, [PRAGMA, WHILE])
    assert found == [(2, WHILE), (3, PRAGMA)]
    assert partial_branch_lines(SOURCE, 1, 5, []) == []
    assert partial_branch_lines(SOURCE, 1, 5, ["(unclosed"]) == []


def test_new_since_issue_against_the_recorded_lines() -> None:
    patterns = [PRAGMA, WHILE]
    at_issue = ["while True:"]
    assert new_partial_exclusions(facts(), at_issue, source_lines=SOURCE, patterns=patterns) == [
        (3, PRAGMA)
    ]
    both = ["while True:", "if x < 0:  # pragma: no branch"]
    assert new_partial_exclusions(facts(), both, source_lines=SOURCE, patterns=patterns) == []


def test_without_a_record_only_a_comment_match_is_new() -> None:
    found = new_partial_exclusions(facts(), None, source_lines=SOURCE, patterns=[PRAGMA, WHILE])
    assert found == [(3, PRAGMA)]
