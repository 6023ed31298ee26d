"""A covering test's time budget against a mutant: from its own baseline runs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_quest.core.budget import FACTOR, MARGIN, mutant_budget

SECONDS = st.floats(min_value=0.0, max_value=1e5, allow_nan=False)


def test_a_test_of_one_second_runs_away_in_twelve() -> None:
    # The slower of its two runs, ten times, plus two seconds.
    assert mutant_budget([0.9, 1.0]) == 12.0
    assert mutant_budget([1.0, 0.9]) == 12.0


def test_a_test_of_a_few_milliseconds_gets_the_margin() -> None:
    assert 2.0 <= mutant_budget([0.001, 0.002]) < 2.1
    assert mutant_budget([]) == MARGIN == 2.0


def test_a_negative_time_counts_as_none() -> None:
    # A clock read across a suspend never gives less than the margin.
    assert mutant_budget([-5.0]) == MARGIN


@given(st.lists(SECONDS, min_size=1, max_size=4))
def test_the_budget_holds_ten_times_the_slower_run_and_two_seconds(runs: list[float]) -> None:
    budget = mutant_budget(runs)
    assert budget >= max(MARGIN, FACTOR * max(runs))
    assert budget == FACTOR * max(runs) + MARGIN


@given(st.lists(SECONDS, min_size=1, max_size=4), SECONDS)
def test_a_slower_run_never_shortens_the_budget(runs: list[float], more: float) -> None:
    assert mutant_budget([*runs, more]) >= mutant_budget(runs)
