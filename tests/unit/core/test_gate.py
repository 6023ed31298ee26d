"""Unit tests of the pure gate (``pytest_quest/gate.py``): hand-built evidence, no I/O.

Each step is checked on its own (verdict, step name, every fact with its
exact check/field/expected/actual and text rendering), then the order of
the steps: the first step that does not pass decides.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pytest_quest.core.gate import Evidence, GateResult, coverage_facts, judge
from pytest_quest.core.model import Fact, FunctionFacts, Quest, Verdict
from pytest_quest.core.run import CollectionError, RunReport, SurvivingMutant
from tests.support import quests

FILE = "src/shop/cart.py"
PRINT = "sha256:" + "a" * 32
OTHER_PRINT = "sha256:" + "b" * 32


# The quest of these tests: Cart.add, lines 30-50, one line and one branch missing.
CART_ADD = {
    "id": f"{FILE}::Cart.add",
    "file": FILE,
    "qualname": "Cart.add",
    "first": 30,
    "last": 50,
    "fingerprint": PRINT,
    "statements": 9,
    "branches": 4,
    "missing_lines": [41],
    "missing_branches": [(41, 44)],
}


def make_quest(**changes: Any) -> Quest:
    return quests.make_quest(**{**CART_ADD, **changes})


def make_current(**changes: Any) -> FunctionFacts:
    values: dict[str, Any] = {
        "file": FILE,
        "qualname": "Cart.add",
        "ordinal": 1,
        "start": 30,
        "first": 30,
        "last": 50,
        "fingerprint": PRINT,
        "statements": 9,
        "branches": 4,
        "covering_tests": ["tests/test_cart.py::test_add"],
    }
    values.update(changes)
    return FunctionFacts(**values)


def make_evidence(**changes: Any) -> Evidence:
    values: dict[str, Any] = {"quest": make_quest(), "current": make_current(), "run": RunReport()}
    values.update(changes)
    return Evidence(**values)


def test_everything_holds_is_pass_with_no_facts() -> None:
    result = judge(make_evidence())
    assert result == GateResult(Verdict.PASS, [], "pass")
    assert result.to_dict() == {"verdict": "PASS", "step": "pass", "facts": []}


# -- step 1: identity ------------------------------------------------------------


def test_gone_function_is_review_with_one_fact() -> None:
    result = judge(make_evidence(current=None))
    assert result.verdict is Verdict.REVIEW
    assert result.step == "1-identity"
    assert result.facts == [
        Fact(
            check="identity.gone",
            field="src/shop/cart.py:30",
            expected="function Cart.add exists",
            actual="no such function in the current code (deleted or renamed)",
            message="function Cart.add is gone (deleted or renamed)",
        )
    ]
    assert result.facts[0].text() == (
        "src/shop/cart.py:30: function Cart.add is gone (deleted or renamed)"
    )


def test_changed_body_is_review_naming_both_fingerprints() -> None:
    result = judge(make_evidence(current=make_current(fingerprint=OTHER_PRINT, first=33)))
    assert result.verdict is Verdict.REVIEW
    assert result.step == "1-identity"
    [fact] = result.facts
    assert fact.check == "identity.changed"
    assert fact.field == "src/shop/cart.py:33"
    assert fact.expected == f"the code of Cart.add as issued ({PRINT})"
    assert fact.actual == f"changed code ({OTHER_PRINT})"
    assert fact.text().startswith("src/shop/cart.py:33: function Cart.add was changed")


def test_identity_comes_before_every_other_step() -> None:
    evidence = make_evidence(
        current=make_current(fingerprint=OTHER_PRINT, missing_lines=[41]),
        run=RunReport(completed=False, problem="timeout"),
        config_then={"run:branch": True},
        config_now={"run:branch": False},
        new_exclusions=[(41, "pragma: no cover")],
        surviving_mutants=[SurvivingMutant(FILE, 41, "a < b", "a >= b", "compare")],
        unstable_tests=["tests/test_cart.py::test_add"],
        extra_checks=[(Verdict.FAIL, Fact("x", "y", "z", "w"))],
    )
    result = judge(evidence)
    assert (result.verdict, result.step) == (Verdict.REVIEW, "1-identity")
    assert [fact.check for fact in result.facts] == ["identity.changed"]


# -- step 2: exclusions -----------------------------------------------------------


def test_new_exclusion_is_fail_with_line_and_pattern() -> None:
    result = judge(
        make_evidence(
            new_exclusions=[
                (41, "#\\s*(pragma|PRAGMA)[:\\s]?\\s*(no|NO)\\s*(cover|COVER)"),
                (44, ""),
            ]
        )
    )
    assert (result.verdict, result.step) == (Verdict.FAIL, "2-exclusions")
    first, second = result.facts
    assert first.check == "exclusion.new"
    assert first.field == "src/shop/cart.py:41"
    assert first.expected == "no coverage exclusion added since the quest was issued"
    assert first.actual.startswith("excluded by pattern '#")
    assert first.text().startswith(
        "src/shop/cart.py:41: line 41 newly excluded from coverage by pattern"
    )
    assert second == Fact(
        check="exclusion.new",
        field="src/shop/cart.py:44",
        expected="no coverage exclusion added since the quest was issued",
        actual="excluded",
        message="line 44 newly excluded from coverage",
    )
    assert second.text() == "src/shop/cart.py:44: line 44 newly excluded from coverage"


def test_changed_coverage_config_is_fail_per_setting_in_sorted_order() -> None:
    evidence = make_evidence(
        config_then={"run:omit": [], "run:branch": True, "report:exclude_lines": ["a"]},
        config_now={"run:omit": ["src/*"], "run:branch": True, "report:exclude_lines": ["a"]},
    )
    result = judge(evidence)
    assert (result.verdict, result.step) == (Verdict.FAIL, "2-exclusions")
    assert result.facts == [
        Fact(
            check="exclusion.config",
            field="coverage:run:omit",
            expected="[] (as at scan)",
            actual="['src/*']",
            message="coverage setting run:omit changed from [] to ['src/*']",
        )
    ]


def test_a_setting_that_appears_or_vanishes_counts_as_changed() -> None:
    evidence = make_evidence(config_then={"run:branch": True}, config_now={"run:plugins": ["x"]})
    result = judge(evidence)
    assert [fact.field for fact in result.facts] == ["coverage:run:branch", "coverage:run:plugins"]


def test_no_recorded_config_is_no_config_fact() -> None:
    # A ratchet file from before configs were recorded has nothing to compare.
    result = judge(make_evidence(config_then={}, config_now={"run:branch": True}))
    assert result.verdict is Verdict.PASS


def test_exclusions_come_before_environment_and_coverage() -> None:
    evidence = make_evidence(
        current=make_current(missing_lines=[41]),
        run=RunReport(collection_errors=[CollectionError("tests/test_x.py", 3, "boom")]),
        new_exclusions=[(42, "")],
    )
    result = judge(evidence)
    assert result.step == "2-exclusions"
    assert [fact.check for fact in result.facts] == ["exclusion.new"]


# -- environment and collection ----------------------------------------------------


def test_incomplete_run_is_review_never_fail() -> None:
    evidence = make_evidence(
        current=make_current(missing_lines=[41, 42]),
        run=RunReport(completed=False, problem="the test run exceeded --quest-timeout (5s)"),
    )
    result = judge(evidence)
    assert (result.verdict, result.step) == (Verdict.REVIEW, "environment")
    assert result.facts == [
        Fact(
            check="environment",
            field="src/shop/cart.py::Cart.add",
            expected="the test run completes",
            actual="the test run exceeded --quest-timeout (5s)",
            message="could not confirm: the test run exceeded --quest-timeout (5s)",
        )
    ]


def test_incomplete_run_without_a_stated_problem_still_says_so() -> None:
    result = judge(make_evidence(run=RunReport(completed=False)))
    assert result.facts[0].actual == "the run did not complete"


def test_collection_error_is_fail_with_file_and_line() -> None:
    run = RunReport(
        collection_errors=[
            CollectionError("tests/test_new.py", 7, "NameError: name 'x' is not defined"),
            CollectionError("tests/test_other.py", 0, "ImportError: no module named nope"),
        ]
    )
    result = judge(make_evidence(run=run, current=make_current(missing_lines=[41])))
    assert (result.verdict, result.step) == (Verdict.FAIL, "collection")
    first, second = result.facts
    assert first == Fact(
        check="collection.error",
        field="tests/test_new.py:7",
        expected="the tests are collected without error",
        actual="NameError: name 'x' is not defined",
        message="collection error: NameError: name 'x' is not defined",
    )
    assert first.text() == (
        "tests/test_new.py:7: collection error: NameError: name 'x' is not defined"
    )
    # Without a line number the field is the file alone; its text still names it.
    assert second.field == "tests/test_other.py"
    assert second.text() == (
        "tests/test_other.py: collection error: ImportError: no module named nope"
    )


def test_environment_comes_before_collection_errors() -> None:
    run = RunReport(
        completed=False, problem="crashed", collection_errors=[CollectionError("t.py", 1, "x")]
    )
    assert judge(make_evidence(run=run)).step == "environment"


# -- step 3: coverage ---------------------------------------------------------------


def test_missing_lines_and_branches_are_one_fact_each_lines_first() -> None:
    current = make_current(missing_lines=[41, 45], missing_branches=[(40, 41), (41, 44)])
    result = judge(make_evidence(current=current))
    assert (result.verdict, result.step) == (Verdict.FAIL, "3-coverage")
    assert [fact.to_dict() for fact in result.facts] == [
        {
            "check": "coverage.line",
            "field": "src/shop/cart.py:41",
            "expected": "executed by a passing test",
            "actual": "never executed",
            "message": "line 41 not covered",
        },
        {
            "check": "coverage.line",
            "field": "src/shop/cart.py:45",
            "expected": "executed by a passing test",
            "actual": "never executed",
            "message": "line 45 not covered",
        },
        {
            "check": "coverage.branch",
            "field": "src/shop/cart.py:40->41",
            "expected": "branch taken by a passing test",
            "actual": "never taken",
            "message": "branch 40->41 not taken",
        },
        {
            "check": "coverage.branch",
            "field": "src/shop/cart.py:41->44",
            "expected": "branch taken by a passing test",
            "actual": "never taken",
            "message": "branch 41->44 not taken",
        },
    ]
    assert [fact.text() for fact in result.facts] == [
        "src/shop/cart.py:41: line 41 not covered",
        "src/shop/cart.py:45: line 45 not covered",
        "src/shop/cart.py:40: branch 40->41 not taken",
        "src/shop/cart.py:41: branch 41->44 not taken",
    ]


def test_exit_arc_is_rendered_as_exit() -> None:
    current = make_current(file="src/shop/text.py", missing_branches=[(16, -16)])
    result = judge(make_evidence(current=current))
    [fact] = result.facts
    assert fact.field == "src/shop/text.py:16->exit"
    assert fact.message == "branch 16->exit not taken"
    assert fact.text() == "src/shop/text.py:16: branch 16->exit not taken"


def test_only_a_missing_branch_is_enough_to_fail() -> None:
    result = judge(make_evidence(current=make_current(missing_branches=[(41, 44)])))
    assert result.verdict is Verdict.FAIL
    assert [fact.check for fact in result.facts] == ["coverage.branch"]


def test_function_without_statements_cannot_pass() -> None:
    result = judge(make_evidence(current=make_current(statements=0, branches=0)))
    assert (result.verdict, result.step) == (Verdict.FAIL, "3-coverage")
    assert result.facts == [
        Fact(
            check="coverage.empty",
            field="src/shop/cart.py:30",
            expected="a function with measurable statements",
            actual="no statement left to measure",
            message="the function has no measurable statement",
        )
    ]


def test_coverage_facts_helper_matches_the_gate() -> None:
    current = make_current(missing_lines=[3], missing_branches=[(2, -1)])
    assert [fact.field for fact in coverage_facts(current)] == [
        "src/shop/cart.py:3",
        "src/shop/cart.py:2->exit",
    ]


def test_coverage_comes_before_mutants_stability_and_extra_checks() -> None:
    evidence = make_evidence(
        current=make_current(missing_lines=[41]),
        surviving_mutants=[SurvivingMutant(FILE, 41, "a < b", "a >= b", "compare")],
        mutation_problem="",
        unstable_tests=["tests/test_cart.py::test_add"],
        extra_checks=[(Verdict.FAIL, Fact("x", "y", "z", "w"))],
    )
    result = judge(evidence)
    assert result.step == "3-coverage"
    assert [fact.check for fact in result.facts] == ["coverage.line"]


# -- step 4: mutants ------------------------------------------------------------------


def test_surviving_mutants_fail_one_fact_each() -> None:
    mutants = [
        SurvivingMutant(FILE, 32, "qty <= 0", "qty > 0", "compare", "m1234abcd"),
        SurvivingMutant(FILE, 40, "return line", "return None", "return"),
    ]
    result = judge(make_evidence(surviving_mutants=mutants))
    assert (result.verdict, result.step) == (Verdict.FAIL, "4-mutants")
    assert result.facts[0] == Fact(
        check="mutation.compare",
        field="src/shop/cart.py:32",
        expected="a covering test fails when the code is changed",
        actual=(
            "every covering test passes with `qty <= 0` -> `qty > 0` "
            "(operator compare, mutant m1234abcd)"
        ),
        message=(
            "mutant survived: `qty <= 0` -> `qty > 0`; no covering test fails with it "
            "(operator compare, mutant m1234abcd); held without a witness call: no witness "
            "search was made; if no input can tell them apart, "
            "dispute it: pytest --quest submit --quest-id src/shop/cart.py::Cart.add "
            '--quest-dispute m1234abcd --quest-reason "why no input can tell them apart"'
        ),
    )
    # The field has no arc: the rendering keeps the whole `path:line`.
    assert result.facts[1].text() == (
        "src/shop/cart.py:40: mutant survived: `return line` -> `return None`; "
        "no covering test fails with it (operator return); held without a witness call: "
        "no witness search was made"
    )
    assert [fact.check for fact in result.facts] == ["mutation.compare", "mutation.return"]


def test_a_surviving_mutant_says_what_it_made_the_function_do() -> None:
    mutant = SurvivingMutant(
        FILE, 32, "a + b", "a - b", "arith.replace", "m1", "with (1, 2) it returns -1, not 3"
    )
    (fact,) = judge(make_evidence(surviving_mutants=[mutant])).facts
    assert "(operator arith.replace, mutant m1); with (1, 2) it returns -1, not 3;" in fact.message


def test_a_mutant_the_whole_suite_lets_through_is_possibly_equivalent_with_the_tests() -> None:
    tests = tuple(f"tests/t.py::t{i}" for i in range(5))
    mutant = SurvivingMutant(FILE, 32, "a", "b", "constant.string", "m1", whole_suite=tests)
    (fact,) = judge(make_evidence(surviving_mutants=[mutant])).facts
    assert fact.message.endswith(
        "; possibly equivalent: it also survives all 5 tests of the suite that reach line 32 "
        "(`tests/t.py::t0`, `tests/t.py::t1`, `tests/t.py::t2` and 2 more)"
        "; if no input can tell them apart, dispute it: pytest --quest submit --quest-id "
        "src/shop/cart.py::Cart.add --quest-dispute m1 "
        '--quest-reason "why no input can tell them apart"'
    )
    one = SurvivingMutant(FILE, 32, "a", "b", "constant.string", whole_suite=tests[:1])
    (fact,) = judge(make_evidence(surviving_mutants=[one])).facts
    assert "survives the one test of the suite that reaches line 32 (`tests/t.py::t0`)" in (
        fact.message
    )
    plain = SurvivingMutant(FILE, 32, "a", "b", "constant.string")
    (fact,) = judge(make_evidence(surviving_mutants=[plain])).facts
    assert "possibly equivalent" not in fact.message


def test_no_surviving_mutant_passes_whether_checked_or_not() -> None:
    assert judge(make_evidence(surviving_mutants=[])).verdict is Verdict.PASS
    assert judge(make_evidence(surviving_mutants=None)).verdict is Verdict.PASS


def test_mutation_problem_is_review_and_wins_over_survivors() -> None:
    evidence = make_evidence(
        mutation_problem="mutant run timed out",
        surviving_mutants=[SurvivingMutant(FILE, 32, "a", "b", "compare")],
    )
    result = judge(evidence)
    assert (result.verdict, result.step) == (Verdict.REVIEW, "4-mutants")
    assert result.facts == [
        Fact(
            check="mutation.environment",
            field="src/shop/cart.py::Cart.add",
            expected="the mutation check completes",
            actual="mutant run timed out",
            message="could not confirm: mutant run timed out",
        )
    ]


def test_mutants_come_before_stability() -> None:
    evidence = make_evidence(
        surviving_mutants=[SurvivingMutant(FILE, 32, "a", "b", "compare")],
        unstable_tests=["tests/test_cart.py::test_add"],
    )
    assert judge(evidence).step == "4-mutants"


# -- step 5: stable, then project checks ------------------------------------------------


def test_unstable_tests_are_review() -> None:
    nodeid = "tests/test_cart.py::test_add[a->b]"
    result = judge(make_evidence(unstable_tests=[nodeid]))
    assert (result.verdict, result.step) == (Verdict.REVIEW, "5-stable")
    [fact] = result.facts
    assert (fact.check, fact.field) == ("stability.flaky", nodeid)
    assert (fact.expected, fact.actual) == (
        "the same outcome on a repeated run",
        "a different outcome",
    )
    # A parametrize id with `->` in it is not an arc: the node id stays whole.
    assert fact.text() == (
        f"{nodeid}: flaky, could not confirm: {nodeid} changed outcome on a repeated run"
    )


def test_stability_comes_before_extra_checks() -> None:
    evidence = make_evidence(
        unstable_tests=["t.py::a"], extra_checks=[(Verdict.FAIL, Fact("x", "y", "z", "w"))]
    )
    assert judge(evidence).step == "5-stable"


def test_extra_fail_facts_win_over_review_facts() -> None:
    fail = Fact("project.docstring", f"{FILE}:30", "a docstring", "none")
    review = Fact("project.style", f"{FILE}:31", "a", "b")
    result = judge(make_evidence(extra_checks=[(Verdict.REVIEW, review), (Verdict.FAIL, fail)]))
    assert (result.verdict, result.step, result.facts) == (Verdict.FAIL, "l1-extra", [fail])
    assert fail.text() == "src/shop/cart.py:30: expected a docstring, got none"


def test_extra_review_facts_alone_are_review() -> None:
    review = Fact("project.style", f"{FILE}:31", "a", "b")
    result = judge(make_evidence(extra_checks=[(Verdict.REVIEW, review)]))
    assert (result.verdict, result.step, result.facts) == (Verdict.REVIEW, "l1-extra", [review])


def test_extra_pass_entries_do_not_block() -> None:
    fact = Fact("project.ok", f"{FILE}:31", "a", "a")
    assert judge(make_evidence(extra_checks=[(Verdict.PASS, fact)])).verdict is Verdict.PASS


# -- determinism ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"current": None},
        {"new_exclusions": [(41, "")]},
        {"current": make_current(missing_lines=[41], missing_branches=[(41, -30)])},
    ],
)
def test_judge_is_deterministic_and_leaves_the_evidence_alone(changes: dict[str, Any]) -> None:
    evidence = make_evidence(**changes)
    before = copy.deepcopy(evidence)
    first = judge(evidence)
    second = judge(evidence)
    assert first == second
    assert first.to_dict() == second.to_dict()
    assert evidence == before


def test_a_mutation_child_ended_from_outside_is_step_environment_not_a_verdict() -> None:
    evidence = make_evidence(
        mutation_problem="the mutation check could not complete: killed by signal SIGKILL",
        mutation_environment="killed by signal SIGKILL, not sent by the gate",
        surviving_mutants=[SurvivingMutant(FILE, 32, "a", "b", "compare")],
    )
    result = judge(evidence)
    assert (result.verdict, result.step) == (Verdict.REVIEW, "environment")
    assert [fact.check for fact in result.facts] == ["environment.outside"]
    assert "SIGKILL" in result.facts[0].actual


def test_a_failing_test_of_a_submitted_file_that_tests_the_function_is_fail() -> None:
    run = RunReport(
        outcomes={
            "tests/test_cart.py::test_add": "passed",
            "tests/test_cart.py::test_other": "failed",
            "tests/test_misc.py::test_x": "failed",
        },
        errors={"tests/test_cart.py::test_other": "AssertionError: off by one"},
    )
    result = judge(make_evidence(run=run, submitted=["tests/test_cart.py", "tests/test_misc.py"]))
    assert (result.verdict, result.step) == (Verdict.FAIL, "3-tests")
    [fact] = result.facts
    assert (fact.check, fact.field) == ("test.failed", "tests/test_cart.py::test_other")
    assert fact.actual == "failed: AssertionError: off by one"
    # A file the submission did not touch, or whose tests reach not the function: not this step's.
    assert judge(make_evidence(run=run, submitted=["tests/test_misc.py"])).verdict is Verdict.PASS
    assert judge(make_evidence(run=run)).verdict is Verdict.PASS


# -- the sealed configuration and policy, and unverified mutants --------------------


def test_a_configuration_sealed_as_now_or_unsealed_gives_no_fact() -> None:
    from pytest_quest.core.gate import sealed_config_facts

    same = "cfg:1111;pol:2222"
    assert sealed_config_facts(make_evidence(sealed_config=same, config_digest_now=same)) == []
    assert sealed_config_facts(make_evidence(sealed_config=None, config_digest_now=same)) == []
    assert sealed_config_facts(make_evidence(sealed_config=same, config_digest_now="")) == []


def test_a_changed_coverage_configuration_and_policy_are_each_a_fact() -> None:
    from pytest_quest.core.gate import sealed_config_facts

    evidence = make_evidence(
        sealed_config="cfg:1111;pol:2222", config_digest_now="cfg:3333;pol:4444"
    )
    assert sealed_config_facts(evidence) == [
        Fact(
            check="exclusion.config",
            field=f"{FILE}::Cart.add:coverage_configuration",
            expected="the coverage configuration sealed at issue (cfg:1111)",
            actual="cfg:3333",
            message="the coverage configuration differs from the copy sealed when the quest was issued",
        ),
        Fact(
            check="exclusion.policy",
            field=f"{FILE}::Cart.add:gate_policy",
            expected="the gate policy sealed at issue (pol:2222)",
            actual="pol:4444",
            message=(
                "the gate policy differs from the copy sealed when the quest was issued; only a "
                "person changes the policy (pytest --quest-policy KEY=VALUE)"
            ),
        ),
    ]


def test_only_the_part_that_changed_is_a_fact() -> None:
    from pytest_quest.core.gate import sealed_config_facts

    policy = sealed_config_facts(
        make_evidence(sealed_config="cfg:1;pol:2", config_digest_now="cfg:1;pol:5")
    )
    assert [fact.check for fact in policy] == ["exclusion.policy"]
    config = sealed_config_facts(
        make_evidence(sealed_config="cfg:1;pol:2", config_digest_now="cfg:9;pol:2")
    )
    assert [(fact.check, fact.actual) for fact in config] == [("exclusion.config", "cfg:9")]
    gone = sealed_config_facts(
        make_evidence(sealed_config="cfg:1;pol:2", config_digest_now="cfg:1")
    )
    assert [(fact.check, fact.actual) for fact in gone] == [("exclusion.policy", "pol:None")]


def test_unverified_mutants_are_review_with_their_facts() -> None:
    from pytest_quest.core.gate import step_unverified

    fact = Fact("mutation.unverified", f"{FILE}:41", "applied", "not reached")
    assert step_unverified(make_evidence()) is None
    assert step_unverified(make_evidence(unverified=[fact])) == GateResult(
        Verdict.REVIEW, [fact], "4-mutants"
    )
