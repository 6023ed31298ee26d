"""Disputed spots taken as reached: which missing lines and branches the gate still judges."""

from __future__ import annotations

from pytest_quest.core.dispute import Spot, assumed_reached
from pytest_quest.core.model import FunctionFacts


def _facts(lines: list[int], arcs: list[tuple[int, int]]) -> FunctionFacts:
    return FunctionFacts(
        file="src/m.py",
        qualname="f",
        ordinal=0,
        start=1,
        first=2,
        last=20,
        fingerprint="fp",
        statements=10,
        branches=4,
        missing_lines=lines,
        missing_branches=arcs,
        covering_tests=["t.py::test_a"],
    )


def test_disputed_lines_leave_the_missing_lines_and_the_rest_stay() -> None:
    facts = _facts([3, 5, 7], [(4, 5), (8, -1)])
    result = assumed_reached(facts, [Spot(None, 5), Spot("src/m.py", 7)])
    assert result.missing_lines == [3]
    assert result.missing_branches == [(4, 5), (8, -1)]
    assert result.file == "src/m.py"
    assert result.covering_tests == ["t.py::test_a"]
    assert facts.missing_lines == [3, 5, 7]


def test_disputed_branches_leave_the_missing_branches_and_lines_stay() -> None:
    facts = _facts([4, 5], [(4, 5), (4, 6), (8, -3), (9, 10)])
    result = assumed_reached(facts, [Spot(None, 4, 5), Spot(None, 8, -1)])
    assert result.missing_lines == [4, 5]
    assert result.missing_branches == [(4, 6), (9, 10)]


def test_a_line_spot_does_not_take_away_a_branch_from_that_line() -> None:
    facts = _facts([4], [(4, 6)])
    result = assumed_reached(facts, [Spot(None, 4)])
    assert result.missing_lines == []
    assert result.missing_branches == [(4, 6)]


def test_no_spots_keep_every_fact() -> None:
    facts = _facts([2, 3], [(2, 3)])
    assert assumed_reached(facts, []) == facts
