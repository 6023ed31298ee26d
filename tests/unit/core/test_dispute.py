"""Disputed lines and branches: how they are read and the facts a dispute ends with."""

from __future__ import annotations

from pytest_quest.core.dispute import Spot, parse_spots, reached_fact, unreachable_fact
from pytest_quest.core.model import Fact


def test_a_spot_names_a_line_or_a_branch() -> None:
    assert Spot(None, 12).text() == "line 12"
    assert Spot("a.py", 12, 14).text() == "branch 12->14"
    assert Spot(None, 12, -1).text() == "branch 12->exit"


def test_a_line_spot_is_missing_only_among_the_missing_lines() -> None:
    assert Spot(None, 5).missing_in([4, 5], []) is True
    assert Spot(None, 5).missing_in([4, 6], [(5, 6)]) is False


def test_a_branch_spot_is_missing_only_as_that_arc() -> None:
    arcs = [(5, 7), (8, -3)]
    assert Spot(None, 5, 7).missing_in([5], arcs) is True
    assert Spot(None, 5, 6).missing_in([5], arcs) is False
    assert Spot(None, 7, 5).missing_in([], arcs) is False


def test_an_exit_spot_matches_any_exit_arc_of_its_line() -> None:
    assert Spot(None, 8, -1).missing_in([], [(8, -3)]) is True
    assert Spot(None, 8, -1).missing_in([], [(8, 9), (7, -3)]) is False
    assert Spot(None, 8, -1).missing_in([], [(8, 0)]) is False


def test_spots_are_read_in_order_without_repeats_or_blanks() -> None:
    assert parse_spots("src/m.py:3, 4->exit,5->7,5->7,, 9") == [
        Spot("src/m.py", 3),
        Spot(None, 4, -1),
        Spot(None, 5, 7),
        Spot(None, 9),
    ]


def test_any_part_that_is_not_a_spot_refuses_the_whole_text() -> None:
    assert parse_spots("3, x") is None
    assert parse_spots("3->") is None
    assert parse_spots(" , ") is None
    assert parse_spots("") is None


def test_an_unreachable_spot_is_left_to_a_person_with_the_suite_counted() -> None:
    fact = unreachable_fact("src/m.py", Spot(None, 4, -1), "guarded by a platform check", 1)
    assert fact == Fact(
        check="dispute.unreachable",
        field="src/m.py:4->exit",
        expected="a person decides whether the code can be reached",
        actual="no test of the whole suite (1 test run) reaches it",
        message=(
            "disputed branch 4->exit is reached by no test of the whole suite (1 test run, "
            "measured); the reason given: 'guarded by a platform check'; a person excludes it "
            "(--quest-accept, --quest-exclude) or reopens the quest (--quest-reopen)"
        ),
    )
    assert unreachable_fact("src/m.py", Spot(None, 7), "r", 12).field == "src/m.py:7"


def test_a_reached_spot_is_refused_naming_the_one_test() -> None:
    fact = reached_fact("src/m.py", Spot(None, 7), ["tests/t.py::test_a"])
    assert fact == Fact(
        check="dispute.refused",
        field="src/m.py:7",
        expected="no test reaches the disputed code",
        actual="reached by tests/t.py::test_a",
        message=(
            "dispute of line 7 refused: tests/t.py::test_a reaches it (measured over the whole "
            "suite); it is reachable: test it as that test does (a try is spent)"
        ),
    )


def test_a_spot_reached_by_one_of_many_names_three_and_counts_the_rest() -> None:
    tests = [f"t.py::test_{n}" for n in range(5)]
    fact = reached_fact("src/m.py", Spot(None, 7, 9), tests)
    assert fact.field == "src/m.py:7->9"
    assert (
        fact.actual == "reached by a test among t.py::test_0, t.py::test_1, t.py::test_2 and 2 more"
    )
    assert reached_fact("m.py", Spot(None, 7), tests[:3]).actual == (
        "reached by a test among t.py::test_0, t.py::test_1, t.py::test_2"
    )
    assert reached_fact("m.py", Spot(None, 7), tests[:2]).actual == (
        "reached by a test among t.py::test_0, t.py::test_1"
    )
