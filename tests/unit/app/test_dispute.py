"""Disputed mutants: the verdict from the whole suite's mutation report, and the facts (in-process)."""

from __future__ import annotations

from pytest_quest.app.dispute import decide
from pytest_quest.core import dispute
from pytest_quest.core.model import Fact, Quest, State, Verdict
from pytest_quest.engine.mutation import MutationReport

QUEST = Quest(id="src/m.py::f", file="src/m.py", qualname="f", first=1, last=3, fingerprint="x")


def mutant(mutant_id: str, status: str, **more: object) -> dict[str, object]:
    return {
        "id": mutant_id,
        "operator": "condition.true",
        "line": 3,
        "original": "a if b else c",
        "mutated": "a if True else c",
        "status": status,
        "reached_by": ["tests/t.py::t1", "tests/t.py::t2"],
        **more,
    }


def report(*mutants: dict[str, object], **more: object) -> MutationReport:
    runs = [{"tests/t.py::t1": "passed", "tests/t.py::t2": "passed"}] * 2
    return MutationReport(runs=runs, mutants=list(mutants), **more)  # type: ignore[arg-type]


def test_ids_are_split_on_commas_without_repeats() -> None:
    assert dispute.parse_ids(" m1, m2,,m1 ") == ("m1", "m2")
    assert dispute.parse_ids("") == ()


def test_a_mutant_no_test_kills_is_review_with_the_reason_and_the_tests() -> None:
    result = decide(QUEST, ("m1",), report(mutant("m1", "survived")), "never empty")
    assert (result.verdict, result.step) == (Verdict.REVIEW, "dispute")
    fact, others = result.facts
    assert fact.check == "dispute.equivalent" and fact.field == "src/m.py:3"
    assert "'never empty'" in fact.message and "m1" in fact.message
    assert fact.actual == "2 tests of the suite reach it and pass: tests/t.py::t1, tests/t.py::t2"
    # What was sought and not found, and the person's whole command lines.
    assert "survives all 2 tests of the suite that reach line 3" in fact.message
    assert (
        "none fails with it, and none of their inputs was seen making it return or raise "
        "otherwise" in fact.message
    )
    assert 'pytest --quest-accept src/m.py::f --quest-reason "..."' in fact.message
    assert 'pytest --quest-reopen src/m.py::f --quest-reason "..."' in fact.message
    assert others.check == "dispute.others_killed" and others.field == QUEST.id
    assert others.message.startswith("no other mutant of the function was planned")


def test_a_dispute_review_names_every_other_mutant_killed_and_by_which_test() -> None:
    killed = [
        mutant(f"k{i}", "killed", line=2, original="x", mutated="y", killed_by=f"tests/t.py::t{i}")
        for i in range(12)
    ]
    result = decide(QUEST, ("m1",), report(mutant("m1", "survived")), "why", others=killed)
    assert result.verdict is Verdict.REVIEW
    others = result.facts[-1]
    assert others.check == "dispute.others_killed" and others.actual == "12 killed"
    assert others.message.startswith(
        "all 12 other mutants of the function killed by the covering tests: "
        "k0 (line 2, `x` -> `y`) by tests/t.py::t0; k1 (line 2, `x` -> `y`) by tests/t.py::t1;"
    )
    assert others.message.endswith("by tests/t.py::t9; and 2 more")
    one = decide(QUEST, ("m1",), report(mutant("m1", "survived")), "why", others=killed[:1])
    assert one.facts[-1].message.startswith("the one other mutant of the function killed by ")
    # A refusal or an unconfirmed dispute is not for a person to weigh: no such fact.
    killed_too = report(mutant("m1", "killed", killed_by="t"))
    refused = decide(QUEST, ("m1",), killed_too, "w", others=killed)
    assert [f.check for f in refused.facts] == ["dispute.refused"]


def test_one_test_reaching_a_disputed_mutant_is_said_in_the_singular() -> None:
    alone = mutant("m1", "survived", reached_by=["tests/t.py::t1"])
    fact = decide(QUEST, ("m1",), report(alone), "why").facts[0]
    assert fact.actual == "1 test of the suite reaches it and passes: tests/t.py::t1"
    assert "survives the one test of the suite that reaches line 3 (tests/t.py::t1)" in (
        fact.message
    )
    assert "all 1 tests" not in fact.message


def test_a_mutant_a_test_kills_is_refused_naming_the_test() -> None:
    killed = mutant("m1", "killed", killed_by="tests/t.py::t2", how="failed")
    result = decide(QUEST, ("m1", "m2"), report(killed, mutant("m2", "survived")), "why")
    assert (result.verdict, result.step) == (Verdict.FAIL, "dispute")
    (fact,) = result.facts
    assert fact.check == "dispute.refused"
    assert "a test of the suite, tests/t.py::t2, failed with" in fact.message


def test_what_could_not_run_is_review_never_pass() -> None:
    for status in ("unreached", "not_applied"):
        result = decide(QUEST, ("m1",), report(mutant("m1", status)), "why")
        assert result.verdict is Verdict.REVIEW
        assert [f.check for f in result.facts] == ["dispute.unconfirmed"]
    result = decide(QUEST, ("m1",), report(), "why")
    assert "m1: not run" in result.facts[0].message
    broken = decide(QUEST, ("m1",), report(completed=False, problem="timeout"), "why")
    assert broken.verdict is Verdict.REVIEW and "timeout" in broken.facts[0].message
    flaky = MutationReport(runs=[{"t": "passed"}, {"t": "failed"}], mutants=[])
    assert decide(QUEST, ("m1",), flaky, "why").verdict is Verdict.REVIEW


def test_a_dispute_review_is_told_apart() -> None:
    quest = Quest(id="q", file="f", qualname="q", first=1, last=2, fingerprint="x")
    quest.state = State.REVIEW
    quest.facts = [Fact("dispute.equivalent", "f:1", "e", "a")]
    assert dispute.is_dispute(quest)
    quest.facts = [Fact("stability.flaky", "t", "e", "a")]
    assert not dispute.is_dispute(quest)
    quest.state = State.TODO
    quest.facts = [Fact("dispute.refused", "f:1", "e", "a")]
    assert not dispute.is_dispute(quest)
    assert dispute.not_judged_fact("q", "why").check == "dispute.not_judged"


def test_survivors_are_possibly_equivalent_only_for_the_whole_suite_and_known_tests() -> None:
    from pytest_quest.app.deep_checks import survivors

    observed = {
        "test": "tests/t.py::t1",
        "args": "x=1",
        "mutant": "returns 2",
        "original": "returns 3",
    }
    forged = ["tests/t.py::t1", "tests/t.py::t2", "tests/forged.py::t9", 7]
    found = report(mutant("m1", "survived", reached_by=forged, observed=observed))
    (plain,) = survivors(found, "src/m.py")
    assert plain.whole_suite == ()
    assert plain.observed == (
        "in `tests/t.py::t1`, with `x=1` the mutant returns `2` where the function "
        "returns `3`; no test noticed"
    )
    known = frozenset({"tests/t.py::t1", "tests/t.py::t2"})
    (labelled,) = survivors(found, "src/m.py", known)
    assert labelled.whole_suite == ("tests/t.py::t1", "tests/t.py::t2")
    (odd,) = survivors(report(mutant("m1", "survived", reached_by="x")), "src/m.py", known)
    assert odd.whole_suite == () and odd.observed == ""


def test_a_disputed_survivor_seen_doing_otherwise_is_refused_with_what_it_did() -> None:
    # A test's own inputs tell it apart: not equivalent, whatever the reason says.
    observed = {
        "test": "tests/t.py::t1",
        "args": "",
        "mutant": "returns 1",
        "original": "raises E()",
    }
    seen = mutant("m1", "survived", observed=observed)
    result = decide(QUEST, ("m1", "m2"), report(seen, mutant("m2", "survived")), "why")
    assert (result.verdict, result.step) == (Verdict.FAIL, "dispute")
    (fact,) = result.facts
    assert fact.check == "dispute.refused" and fact.field == "src/m.py:3"
    assert fact.message.startswith("dispute of mutant m1 (condition.true) refused: ")
    assert "the mutant returns `1` where the function raises `E()`" in fact.message
    assert "it is not equivalent" in fact.message and "a try is spent" in fact.message
    # What the child could not word (a forged or partial observation) refuses nothing.
    odd = mutant("m1", "survived", observed={"test": "t", "mutant": "returns 1"})
    assert decide(QUEST, ("m1",), report(odd), "why").verdict is Verdict.REVIEW


def test_a_disputed_survivor_with_a_searched_witness_is_refused_with_the_call() -> None:
    # No test's call tells it apart, the witness search's does: refused, a try spent.
    search = {
        "calls": 12,
        "escapes": "",
        "problem": "",
        "witness": {"call": "f(0)", "mutant": "returns 1", "original": "returns 0"},
    }
    found = mutant("m1", "survived", search=search)
    result = decide(QUEST, ("m1",), report(found), "why")
    assert (result.verdict, result.step) == (Verdict.FAIL, "dispute")
    (fact,) = result.facts
    assert fact.check == "dispute.refused"
    assert "with `f(0)` the mutant returns `1` where the function returns `0`" in fact.message
    # A clean search without a witness refuses nothing: the dispute is for a person.
    clean = mutant("m1", "survived", search={**search, "witness": None})
    assert decide(QUEST, ("m1",), report(clean), "why").verdict is Verdict.REVIEW


def test_a_survivor_seen_doing_otherwise_is_not_called_possibly_equivalent() -> None:
    from pytest_quest.core.gate import survivor_fact
    from pytest_quest.core.run import SurvivingMutant

    whole = ("tests/t.py::t1",)
    plain = SurvivingMutant("src/m.py", 3, "a", "b", "condition.true", "m1", "", whole)
    fact = survivor_fact(plain)
    assert "possibly equivalent" in fact.message and "--quest-dispute m1" in fact.message
    seen = SurvivingMutant("src/m.py", 3, "a", "b", "condition.true", "m1", "in `t`, ...", whole)
    fact = survivor_fact(seen)
    assert "possibly equivalent" not in fact.message and "--quest-dispute" not in fact.message
    assert fact.message.endswith("in `t`, ...; it is not equivalent: assert on that")


def test_lines_and_branches_are_told_from_mutant_ids() -> None:
    from pytest_quest.core.dispute import Spot, parse_spots

    assert parse_spots("7, src/pkg/a.py:3,5->7,8->exit") == [
        Spot(None, 7),
        Spot("src/pkg/a.py", 3),
        Spot(None, 5, 7),
        Spot(None, 8, -1),
    ]
    assert parse_spots("m1a2b3c4d") is None
    assert parse_spots("7,m1a2b3c4d") is None
    assert Spot(None, 8, -1).missing_in([], [(8, -1)])
    assert not Spot(None, 5, 7).missing_in([7], [(5, 6)])
