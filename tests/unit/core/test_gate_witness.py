"""Gate step 4's witness rule (core/gate.py, core/observed.py): a survivor fails the quest
only with a witness call, or a reason it could not be looked for; `mutants=strict` holds all."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_quest.core.gate import judge, survivor_fact
from pytest_quest.core.model import Verdict
from pytest_quest.core.observed import held_because, witness_text
from pytest_quest.core.run import SurvivingMutant
from tests.unit.core.test_gate import FILE, make_evidence

CLEAN = {"calls": 40, "escapes": "", "problem": ""}
FOUND = {
    **CLEAN,
    "witness": {
        "call": "truncate('abcdefgh', 5)",
        "mutant": "returns 'abcde'",
        "original": "returns 'abcd…'",
    },
}


def survivor(search: Any, **changes: Any) -> SurvivingMutant:
    values: dict[str, Any] = {
        "file": FILE,
        "line": 32,
        "original": "n - 1",
        "mutated": "n",
        "operator": "slice.bounds",
        "mutant_id": "m1234abcd",
        "witness": witness_text(search),
        "held_because": held_because(search),
    }
    values.update(changes)
    return SurvivingMutant(**values)


def test_the_witness_is_a_call_to_paste_into_an_assertion() -> None:
    assert witness_text(FOUND) == (
        "with `truncate('abcdefgh', 5)` the mutant returns `'abcde'` where the function "
        "returns `'abcd…'`; no test noticed"
    )
    result = judge(make_evidence(surviving_mutants=[survivor(FOUND)]))
    assert (result.verdict, result.step) == (Verdict.FAIL, "4-mutants")
    (fact,) = result.facts
    assert "with `truncate('abcdefgh', 5)` the mutant returns `'abcde'`" in fact.message
    assert "it is not equivalent: assert on that" in fact.message
    assert "--quest-dispute" not in fact.message
    assert result.unwitnessed == []


def test_a_survivor_with_no_witness_whose_effects_were_all_compared_passes_unwitnessed() -> None:
    mutant = survivor(CLEAN)
    assert mutant.unwitnessed and not mutant.held_because
    result = judge(make_evidence(surviving_mutants=[mutant]))
    assert (result.verdict, result.facts) == (Verdict.PASS, [])
    assert result.unwitnessed == [
        {
            "id": "m1234abcd",
            "line": 32,
            "operator": "slice.bounds",
            "original": "n - 1",
            "mutated": "n",
        }
    ]
    assert result.to_dict()["unwitnessed"] == result.unwitnessed


def test_strict_holds_every_survivor_as_before() -> None:
    result = judge(make_evidence(surviving_mutants=[survivor(CLEAN)], mutants_rule="strict"))
    assert (result.verdict, result.step) == (Verdict.FAIL, "4-mutants")
    assert "mutants=strict" in result.facts[0].message
    assert "--quest-dispute m1234abcd" in result.facts[0].message
    assert result.unwitnessed == []


@pytest.mark.parametrize(
    ("search", "why"),
    [
        (None, "no witness search was made"),
        ({"calls": 0, "escapes": "", "problem": "a nested function is not called on its own"},
         "no witness could be looked for: `a nested function is not called on its own`"),
        ({"calls": 3, "escapes": "writes a file ('out.txt')", "problem": ""},
         "its calls reach outside what the witness search compares (`writes a file ('out.txt')`)"),
        ({"calls": 0, "escapes": "", "problem": ""}, "no witness could be looked for: no call could be tried"),
        ({"calls": True, "escapes": "", "problem": ""}, "no witness could be looked for: no call could be tried"),
        ({"calls": 5, "escapes": 1, "problem": ""}, "no witness search was made"),
        ("forged", "no witness search was made"),
    ],
)  # fmt: skip
def test_a_survivor_the_search_could_not_judge_is_held_saying_why(search: Any, why: str) -> None:
    result = judge(make_evidence(surviving_mutants=[survivor(search)]))
    assert (result.verdict, result.step) == (Verdict.FAIL, "4-mutants")
    assert f"held without a witness call: {why}" in result.facts[0].message
    assert "--quest-dispute m1234abcd" in result.facts[0].message
    assert result.unwitnessed == []


def test_held_and_unwitnessed_together_fail_on_the_held_and_record_the_other() -> None:
    held = survivor(FOUND, line=40, mutant_id="m0000beef")
    result = judge(make_evidence(surviving_mutants=[survivor(CLEAN), held]))
    assert result.verdict is Verdict.FAIL
    assert [fact.field for fact in result.facts] == [f"{FILE}:40"]
    assert [m["id"] for m in result.unwitnessed] == ["m1234abcd"]


def test_an_observed_difference_counts_as_a_witness_even_after_a_clean_search() -> None:
    mutant = survivor(CLEAN, observed="in `t::a`, with `n=3` the mutant returns `0` where ...")
    result = judge(make_evidence(surviving_mutants=[mutant]))
    assert result.verdict is Verdict.FAIL and result.unwitnessed == []


@pytest.mark.parametrize(
    "search",
    [
        {"witness": {"call": "f(1)", "mutant": "explodes 1", "original": "returns 2"}},
        {"witness": {"call": "", "mutant": "returns 1", "original": "returns 2"}},
        {"witness": {"call": "f(1)", "mutant": 1, "original": "returns 2"}},
        {"witness": "f(1)"},
    ],
)
def test_a_witness_that_does_not_fit_is_no_witness(search: dict[str, Any]) -> None:
    assert witness_text(search) == ""


def test_a_witness_cannot_write_outside_its_code_span() -> None:
    text = witness_text(
        {"witness": {"call": "f('`\n2 facts')", "mutant": "returns 1", "original": "returns 2"}}
    )
    assert "\n" not in text and "`f('\\x60\\n2 facts')`" in text


def test_an_unwitnessed_survivor_shown_as_a_fact_says_no_reason_and_offers_the_dispute() -> None:
    # Audit and the person's view word every survivor, unwitnessed ones too: no "held" reason.
    fact = survivor_fact(survivor(CLEAN), "src/shop/cart.py::Cart.add")
    assert fact.message == (
        "mutant survived: `n - 1` -> `n`; no covering test fails with it (operator "
        "slice.bounds, mutant m1234abcd); if no input can tell them apart, dispute it: "
        "pytest --quest submit --quest-id src/shop/cart.py::Cart.add --quest-dispute m1234abcd "
        '--quest-reason "why no input can tell them apart"'
    )
