"""The value a `return.changed` mutant returns, for each kind, and a plan with no function."""

from __future__ import annotations

import math

from pytest_quest.core.mutants import changed_value, plan_mutants


def test_a_bool_is_negated() -> None:
    assert changed_value(True) is False
    assert changed_value(False) is True


def test_an_int_goes_to_the_other_side_of_zero_in_reverse_order() -> None:
    assert changed_value(0) == -1
    assert changed_value(5) == -6
    assert changed_value(-3) == 2
    assert type(changed_value(5)) is int


def test_a_float_moves_by_at_least_its_own_size() -> None:
    assert changed_value(0.5) == 1.5
    assert changed_value(10.0) == 20.0
    assert changed_value(-4.0) == 0.0
    assert changed_value(0.0) == 1.0


def test_a_float_that_is_not_finite_becomes_zero() -> None:
    assert changed_value(math.nan) == 0.0
    assert changed_value(math.inf) == 0.0
    assert changed_value(-math.inf) == 0.0
    assert type(changed_value(math.inf)) is float


def test_a_complex_number_moves_by_one() -> None:
    assert changed_value(2j) == 1 + 2j
    assert type(changed_value(2j)) is complex


def test_text_and_bytes_become_empty_or_a_marker() -> None:
    assert changed_value("abc") == ""
    assert changed_value("") == "pytest-quest-mutant"
    assert changed_value(b"abc") == b""
    assert changed_value(b"") == b"pytest-quest-mutant"


def test_a_list_or_a_tuple_loses_its_last_item_or_gains_none() -> None:
    assert changed_value([1, 2, 3]) == [1, 2]
    assert changed_value([]) == [None]
    assert changed_value((1, 2)) == (1,)
    assert changed_value(()) == (None,)


def test_a_dict_loses_its_last_key_or_gains_none() -> None:
    assert changed_value({"a": 1, "b": 2}) == {"a": 1}
    assert changed_value({"a": 1}) == {}
    assert changed_value({}) == {None: None}


def test_a_set_keeps_its_type_and_loses_an_item_or_gains_none() -> None:
    assert changed_value(set()) == {None}
    assert changed_value(frozenset()) == frozenset({None})
    assert type(changed_value(frozenset())) is frozenset
    assert changed_value({7}) == set()
    smaller = changed_value(frozenset({1, 2}))
    assert type(smaller) is frozenset
    assert len(smaller) == 1
    assert smaller < frozenset({1, 2})


def test_any_other_value_becomes_a_new_object() -> None:
    value = changed_value(None)
    assert type(value) is object
    assert changed_value(None) is not value


def test_no_mutants_are_planned_where_no_function_starts() -> None:
    assert plan_mutants("x = 1\n\ndef f():\n    return 1\n", 1) == []
    assert plan_mutants("x = 1\n", 5) == []
