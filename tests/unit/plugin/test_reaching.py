"""plugin/reaching.py: a mutant is tried against the stable tests that ran its statement."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_quest.plugin.reaching import Reaching

SOURCE = """\
def parity(x):
    if x % 2 == 0:
        return "even"
    return "odd"
"""


@dataclass
class Item:
    nodeid: str


A, B, C = Item("t::a"), Item("t::b"), Item("t::c")
STABLE = [A, B, C]


def test_only_the_tests_that_ran_the_statement() -> None:
    reaching = Reaching(SOURCE, 1, {"2": ["t::a", "t::b"], "3": ["t::a"], "4": ["t::b"]})
    assert reaching.tests(3, STABLE) == [A]
    assert reaching.tests(4, STABLE) == [B]
    assert reaching.tests(2, STABLE) == [A, B]


def test_without_line_data_every_stable_test() -> None:
    assert Reaching(SOURCE, 1, None).tests(3, STABLE) == STABLE
    assert Reaching(SOURCE, 1, {}).tests(3, STABLE) == STABLE
    assert Reaching(SOURCE, 1, {"4": ["t::b"]}).tests(3, STABLE) == STABLE  # line 3 unknown
    # only tests that are stable here; names of the wrong type or lines that are not numbers
    assert Reaching(SOURCE, 1, {"3": ["t::z", 5], "x": ["t::a"]}).tests(3, STABLE) == STABLE
    assert Reaching("def f(:\n", 1, {"1": ["t::a"]}).tests(1, STABLE) == STABLE
    assert Reaching(SOURCE, 9, {"3": ["t::a"]}).tests(3, STABLE) == STABLE
