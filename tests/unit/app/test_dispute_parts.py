"""The pieces of a dispute's judgement: a spot's field, whether it is missing, who reached it."""

from __future__ import annotations

from pytest_quest.app.dispute import _kept, _missing, _reaching, _spot_field
from pytest_quest.core.dispute import Spot
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, FunctionFacts, Verdict


def _facts(**changes: object) -> FunctionFacts:
    values: dict[str, object] = {
        "file": "a.py",
        "qualname": "f",
        "ordinal": 1,
        "start": 1,
        "first": 1,
        "last": 9,
        "fingerprint": "x",
        "statements": 5,
        "branches": 2,
    }
    values.update(changes)
    return FunctionFacts(**values)  # type: ignore[arg-type]


def test_spot_field_is_the_line_or_the_arc() -> None:
    assert _spot_field(Spot(None, 7)) == "7"
    assert _spot_field(Spot("a.py", 7, 9)) == "7->9"
    assert _spot_field(Spot(None, 7, -1)) == "7->exit"


def test_missing_counts_only_what_no_test_reached_failing_reach_is_reach() -> None:
    current = _facts(
        missing_lines=[3, 4],
        failing_lines=[4],
        missing_branches=[(5, 6), (5, 8)],
        failing_branches=[(5, 8)],
    )
    assert _missing(Spot(None, 3), current) is True
    assert _missing(Spot(None, 4), current) is False  # a failing test ran it
    assert _missing(Spot(None, 2), current) is False
    assert _missing(Spot(None, 5, 6), current) is True
    assert _missing(Spot(None, 5, 8), current) is False
    assert _missing(Spot(None, 3), _facts()) is False


def test_reaching_prefers_the_covering_tests_then_the_failed_then_says_a_test() -> None:
    assert _reaching(Spot(None, 3), _facts(covering_tests=["t::b", "t::a"]), {"t::z"}) == [
        "t::a",
        "t::b",
    ]
    assert _reaching(Spot(None, 3), _facts(), {"t::z", "t::y"}) == ["t::y", "t::z"]
    assert _reaching(Spot(None, 3), _facts(), set()) == ["a test of the suite"]


def test_kept_drops_the_mutation_facts_only() -> None:
    line = Fact("coverage.line", "a.py:3", "e", "a")
    survived = Fact("mutation.survived", "a.py:4", "e", "a")
    unconfirmed = Fact("mutation.kill_unconfirmed", "a.py:5", "e", "a")
    failed = Fact("test.failed", "t::a", "e", "a")
    result = GateResult(Verdict.FAIL, [line, survived, unconfirmed, failed], "l1-mutation")
    assert _kept(result) == [line, failed]
    assert _kept(GateResult(Verdict.PASS, [], "pass")) == []
