"""How a mutant's change is shown to a person."""

from __future__ import annotations

from pytest_quest.core.mutant_ast import change_text


def test_a_change_is_shown_as_the_original_an_arrow_and_the_mutated_code() -> None:
    assert change_text("x = 1", "x = 2") == "`x = 1` -> `x = 2`"
    assert change_text("return a", "return pytest_quest_changed(a)") == (
        "`return a` -> another value of its kind returned in place of `a`"
    )
    assert change_text("return a", "return pytest_quest_changed(a") == (
        "`return a` -> `return pytest_quest_changed(a`"
    )
    assert change_text("return a", "return other(a)") == "`return a` -> `return other(a)`"
