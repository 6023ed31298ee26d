"""The gate (L1): measured facts in, a verdict with facts out; no I/O.

Its steps run cheapest first; what each one blocks is in docs/gate.md.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from pytest_quest.core.model import (
    Fact,
    FunctionFacts,
    Quest,
    Verdict,
    branch_fact,
    line_fact,
)
from pytest_quest.core.mutant_ast import change_text
from pytest_quest.core.observed import possibly_equivalent
from pytest_quest.core.run import RunReport, SurvivingMutant

#: Failing tests named one by one in a FAIL's facts; the rest are counted.
NAMED_FAILURES = 10


@dataclass
class Evidence:
    """Everything the gate looks at for one submission."""

    quest: Quest
    current: FunctionFacts | None
    run: RunReport
    config_then: dict[str, Any] = field(default_factory=dict)
    config_now: dict[str, Any] = field(default_factory=dict)
    new_exclusions: list[tuple[int, str]] = field(default_factory=list)
    # The judge's own copy: the digest sealed in the quest at issue, and the
    # digest of the configuration measured now with the recorded policy.
    sealed_config: str | None = None
    config_digest_now: str | None = None
    surviving_mutants: list[SurvivingMutant] | None = None
    # Per line of the function's file, the passing tests that ran it (step 4 tries
    # a mutant against those of its statement only).
    line_tests: dict[int, set[str]] = field(default_factory=dict)
    mutation_problem: str = ""
    # Why the mutation child could not complete when the cause lies outside
    # the submission (core/environment.py): no verdict, as for the measuring run.
    mutation_environment: str = ""
    unstable_tests: list[str] | None = None
    # Per unstable test, its outcome in each run (the gate's run first), with the
    # first error line of a run where it did not pass.
    unstable_outcomes: dict[str, list[str]] = field(default_factory=dict)
    extra_checks: list[tuple[Verdict, Fact]] = field(default_factory=list)
    # The children's evidence, cross-checked (app/trust.py): a report that is
    # not the child's own, and mutants nobody showed were tried.
    tampered: list[Fact] = field(default_factory=list)
    unverified: list[Fact] = field(default_factory=list)
    # The test files the submission adds or changes (relative to the rootdir).
    submitted: list[str] = field(default_factory=list)
    # Gate step 4's rule (core/policy.py `MUTANT_RULES`): "on" holds a survivor
    # against the tests only with a witness or a reason; "strict" holds every one.
    mutants_rule: str = "on"

    def held_mutants(self) -> list[SurvivingMutant]:
        """The survivors that fail the quest under `mutants_rule`."""
        found = self.surviving_mutants or []
        if self.mutants_rule == "strict":
            return list(found)
        return [mutant for mutant in found if not mutant.unwitnessed]

    def unwitnessed_mutants(self) -> list[SurvivingMutant]:
        """The survivors no call tells apart, the function's every effect compared (not held)."""
        if self.mutants_rule == "strict":
            return []
        return [mutant for mutant in self.surviving_mutants or [] if mutant.unwitnessed]


@dataclass
class GateResult:
    verdict: Verdict
    facts: list[Fact]
    step: str
    # The survivors recorded as unwitnessed (`unwitnessed_record`): not held against the tests.
    unwitnessed: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "verdict": self.verdict.value,
            "step": self.step,
            "facts": [fact.to_dict() for fact in self.facts],
        }
        if self.unwitnessed:
            found["unwitnessed"] = [dict(m) for m in self.unwitnessed]
        return found


def unwitnessed_record(mutant: SurvivingMutant) -> dict[str, Any]:
    """An unwitnessed survivor as the quest records it (``Quest.unwitnessed``)."""
    return {
        "id": mutant.mutant_id,
        "line": mutant.line,
        "operator": mutant.operator,
        "original": mutant.original,
        "mutated": mutant.mutated,
    }


def judge(evidence: Evidence) -> GateResult:
    """Run the gate's steps over `evidence` and return the first decisive result."""
    for step in (
        step_identity,
        step_exclusions,
        step_environment,
        step_coverage,
        step_failing,
        step_tampered,
        step_mutants,
        step_stable,
        step_unverified,
        step_extra,
    ):
        result = step(evidence)
        if result is not None:
            break
    else:
        result = GateResult(Verdict.PASS, [], "pass")
    if evidence.surviving_mutants:
        result.unwitnessed = [unwitnessed_record(m) for m in evidence.unwitnessed_mutants()]
    return result


def step_identity(evidence: Evidence) -> GateResult | None:
    """Step 1: the function is still the function (same fingerprint), else REVIEW."""
    quest, current = evidence.quest, evidence.current
    where = f"{quest.file}:{quest.first}"
    if current is None:
        return GateResult(
            Verdict.REVIEW,
            [
                Fact(
                    check="identity.gone",
                    field=where,
                    expected=f"function {quest.qualname} exists",
                    actual="no such function in the current code (deleted or renamed)",
                    message=f"function {quest.qualname} is gone (deleted or renamed)",
                )
            ],
            "1-identity",
        )
    if current.fingerprint != quest.fingerprint:
        return GateResult(
            Verdict.REVIEW,
            [
                Fact(
                    check="identity.changed",
                    field=f"{current.file}:{current.first}",
                    expected=f"the code of {quest.qualname} as issued ({quest.fingerprint})",
                    actual=f"changed code ({current.fingerprint})",
                    message=(
                        f"function {quest.qualname} was changed since the quest was issued; "
                        "a person must review it"
                    ),
                )
            ],
            "1-identity",
        )
    return None


def step_exclusions(evidence: Evidence) -> GateResult | None:
    """Step 2: nothing was newly excluded from coverage, else FAIL."""
    facts = []
    for setting in sorted(set(evidence.config_then) | set(evidence.config_now)):
        then = evidence.config_then.get(setting)
        now = evidence.config_now.get(setting)
        if evidence.config_then and then != now:
            facts.append(
                Fact(
                    check="exclusion.config",
                    field=f"coverage:{setting}",
                    expected=f"{then!r} (as at scan)",
                    actual=repr(now),
                    message=f"coverage setting {setting} changed from {then!r} to {now!r}",
                )
            )
    named = bool(facts)  # a changed setting already named: the digest adds nothing
    facts += [
        f for f in sealed_config_facts(evidence) if not (named and f.check == "exclusion.config")
    ]
    file = evidence.current.file if evidence.current else evidence.quest.file
    for line, pattern in evidence.new_exclusions:
        facts.append(
            Fact(
                check="exclusion.new",
                field=f"{file}:{line}",
                expected="no coverage exclusion added since the quest was issued",
                actual=f"excluded by pattern {pattern!r}" if pattern else "excluded",
                message=(
                    f"line {line} newly excluded from coverage"
                    + (f" by pattern {pattern!r}" if pattern else "")
                ),
            )
        )
    return GateResult(Verdict.FAIL, facts, "2-exclusions") if facts else None


def sealed_config_facts(evidence: Evidence) -> list[Fact]:
    """Step 2 against the sealed copy: the coverage configuration and the gate policy at issue."""
    then, now = evidence.sealed_config, evidence.config_digest_now
    if not then or not now or then == now:
        return []
    parts_then = dict(part.partition(":")[::2] for part in then.split(";"))
    parts_now = dict(part.partition(":")[::2] for part in now.split(";"))
    facts = []
    for key, what in (("cfg", "coverage configuration"), ("pol", "gate policy")):
        if parts_then.get(key) != parts_now.get(key):
            facts.append(
                Fact(
                    check="exclusion.config" if key == "cfg" else "exclusion.policy",
                    field=f"{evidence.quest.id}:{what.replace(' ', '_')}",
                    expected=f"the {what} sealed at issue ({key}:{parts_then.get(key)})",
                    actual=f"{key}:{parts_now.get(key)}",
                    message=(
                        f"the {what} differs from the copy sealed when the quest was issued"
                        + (
                            "; only a person changes the policy (pytest --quest-policy KEY=VALUE)"
                            if key == "pol"
                            else ""
                        )
                    ),
                )
            )
    return facts


def step_environment(evidence: Evidence) -> GateResult | None:
    """The run completed (else REVIEW) and collected without error (else FAIL)."""
    run = evidence.run
    if run.tampered:
        return GateResult(
            Verdict.REVIEW,
            [
                Fact(
                    check="evidence.tampered",
                    field=evidence.quest.id,
                    expected="one message with the judge's nonce from the test run",
                    actual=run.tampered,
                    message=f"could not confirm: the test run's report was tampered with ({run.tampered})",
                )
            ],
            "environment",
        )
    if not run.completed:
        return GateResult(
            Verdict.REVIEW,
            [
                Fact(
                    check="environment.outside" if run.environment else "environment",
                    field=evidence.quest.id,
                    expected="the test run completes",
                    actual=run.problem or "the run did not complete",
                    message=f"could not confirm: {run.problem or 'the run did not complete'}",
                )
            ],
            "environment",
        )
    if run.collection_errors:
        return GateResult(
            Verdict.FAIL,
            [
                Fact(
                    check="collection.error",
                    field=f"{error.file}:{error.line}" if error.line else error.file,
                    expected="the tests are collected without error",
                    actual=error.message,
                    message=f"collection error: {error.message}",
                )
                for error in run.collection_errors
            ],
            "collection",
        )
    return None


def step_coverage(evidence: Evidence) -> GateResult | None:
    """Step 3: every line and branch executed by passing tests, else FAIL."""
    current = evidence.current
    assert current is not None  # step 1 returned otherwise
    facts = coverage_facts(current)
    if facts:
        # What the agent must fix first: its tests that did not pass, with their errors.
        facts = [*failed_test_facts(evidence.run), *facts]
    if current.statements == 0 and not facts:
        facts.append(
            Fact(
                check="coverage.empty",
                field=f"{current.file}:{current.first}",
                expected="a function with measurable statements",
                actual="no statement left to measure",
                message="the function has no measurable statement",
            )
        )
    return GateResult(Verdict.FAIL, facts, "3-coverage") if facts else None


def step_failing(evidence: Evidence) -> GateResult | None:
    """A failing test of a submitted file that tests the function: FAIL, whatever it covers.

    Step 3 names failing tests beside the lines they leave uncovered; here,
    any other failing test of a file the submission adds or changes, when a
    test of that file reached the function.  Untouched files are the project's.
    """
    current = evidence.current
    reaching = {nodeid.split("::")[0] for nodeid in current.covering_tests} if current else set()
    files = set(evidence.submitted) & reaching
    failed = {nodeid for nodeid in evidence.run.failed if nodeid.split("::")[0] in files}
    if not failed:
        return None
    run = evidence.run
    only = RunReport(
        outcomes={nodeid: run.outcomes[nodeid] for nodeid in failed},
        errors={nodeid: run.errors[nodeid] for nodeid in failed if nodeid in run.errors},
    )
    return GateResult(Verdict.FAIL, failed_test_facts(only), "3-tests")


def step_tampered(evidence: Evidence) -> GateResult | None:
    """The mutation child's report is its own (else REVIEW: nothing of it is believed)."""
    return GateResult(Verdict.REVIEW, evidence.tampered, "4-mutants") if evidence.tampered else None


def step_unverified(evidence: Evidence) -> GateResult | None:
    """Every mutant was applied and reached, the original passed throughout, reports agree."""
    if not evidence.unverified:
        return None
    return GateResult(Verdict.REVIEW, evidence.unverified, "4-mutants")


def step_mutants(evidence: Evidence) -> GateResult | None:
    """Step 4: no mutant survives the covering tests (FAIL), or REVIEW when it cannot run.

    A mutation child ended from outside the submission is step ``environment``
    (``environment.outside``): the caller records no verdict for it (core/environment.py).
    """
    if evidence.mutation_problem:
        outside = bool(evidence.mutation_environment)
        return GateResult(
            Verdict.REVIEW,
            [
                Fact(
                    check="environment.outside" if outside else "mutation.environment",
                    field=evidence.quest.id,
                    expected="the mutation check completes",
                    actual=evidence.mutation_problem,
                    message=f"could not confirm: {evidence.mutation_problem}",
                )
            ],
            "environment" if outside else "4-mutants",
        )
    held = evidence.held_mutants()
    if not held:
        return None
    strict = evidence.mutants_rule == "strict"
    return GateResult(
        Verdict.FAIL,
        [survivor_fact(m, evidence.quest.id, strict=strict) for m in held],
        "4-mutants",
    )


def survivor_fact(mutant: SurvivingMutant, quest_id: str = "", *, strict: bool = False) -> Fact:
    """A surviving mutant as a FAIL fact: where, what changed, the operator and the mutant id.

    With its witness when one was found; otherwise why it is held without
    one (`strict`: the policy holds every survivor), and the whole command
    line that disputes it.
    """
    change = change_text(mutant.original, mutant.mutated)
    named = f"operator {mutant.operator}"
    dispute = ""
    if mutant.mutant_id:
        named += f", mutant {mutant.mutant_id}"
    if mutant.witnessed:
        # A call tells them apart: not equivalent, and a dispute of it is
        # refused (app/dispute.py).
        seen = f"; {mutant.observed or mutant.witness}; it is not equivalent: assert on that"
    else:
        if strict:
            seen = "; no witness call was found, and the gate policy holds every survivor (mutants=strict)"
        elif mutant.held_because:
            seen = f"; held without a witness call: {mutant.held_because}"
        else:
            seen = ""
        if mutant.whole_suite:
            seen += "; " + possibly_equivalent(mutant.line, list(mutant.whole_suite))
        if mutant.mutant_id:
            which = f" --quest-id {shlex.quote(quest_id)}" if quest_id else ""
            dispute = (
                "; if no input can tell them apart, dispute it: "
                f"pytest --quest submit{which} --quest-dispute {mutant.mutant_id} "
                '--quest-reason "why no input can tell them apart"'
            )
    return Fact(
        check=f"mutation.{mutant.operator}",
        field=f"{mutant.file}:{mutant.line}",
        expected="a covering test fails when the code is changed",
        actual=f"every covering test passes with {change} ({named})",
        message=(
            f"mutant survived: {change}; no covering test fails with it ({named}){seen}{dispute}"
        ),
    )


def _runs_text(outcomes: list[str] | None) -> str:
    """A test's outcome in each run, in order: ``runs: passed, passed, error (E...)``."""
    if not outcomes:
        return "a different outcome"
    return "runs: " + ", ".join(outcomes)


def step_stable(evidence: Evidence) -> GateResult | None:
    """Step 5: the covering tests give the same outcome again, else REVIEW."""
    if not evidence.unstable_tests:
        return None
    return GateResult(
        Verdict.REVIEW,
        [
            Fact(
                check="stability.flaky",
                field=nodeid,
                expected="the same outcome on a repeated run",
                actual=_runs_text(evidence.unstable_outcomes.get(nodeid)),
                message=(
                    f"flaky, could not confirm: {nodeid} changed outcome on a repeated run"
                    + (
                        f": {_runs_text(evidence.unstable_outcomes[nodeid])}"
                        if evidence.unstable_outcomes.get(nodeid)
                        else ""
                    )
                ),
            )
            for nodeid in evidence.unstable_tests
        ],
        "5-stable",
    )


def step_extra(evidence: Evidence) -> GateResult | None:
    """The project's own checks (``pytest_quest_l1_check``): FAIL first, then REVIEW."""
    fails = [fact for verdict, fact in evidence.extra_checks if verdict is Verdict.FAIL]
    if fails:
        return GateResult(Verdict.FAIL, fails, "l1-extra")
    reviews = [fact for verdict, fact in evidence.extra_checks if verdict is Verdict.REVIEW]
    if reviews:
        return GateResult(Verdict.REVIEW, reviews, "l1-extra")
    return None


def coverage_facts(current: FunctionFacts) -> list[Fact]:
    """The facts of every missing line and branch of a function, in line order.

    Each says when only tests that did not pass executed it.
    """
    lines, arcs = set(current.failing_lines), set(current.failing_branches)
    facts = [
        line_fact(current.file, line, by_failing=line in lines) for line in current.missing_lines
    ]
    facts += [
        branch_fact(current.file, arc, by_failing=tuple(arc) in arcs)
        for arc in current.missing_branches
    ]
    return facts


def failed_test_facts(run: RunReport) -> list[Fact]:
    """One fact per test of the run that failed or erred, with its error; the rest counted."""
    failed = sorted(run.failed)
    facts = []
    for nodeid in failed[:NAMED_FAILURES]:
        outcome = run.outcomes[nodeid]
        error = run.errors.get(nodeid, "")
        said = f"{outcome}: {error}" if error else outcome
        facts.append(
            Fact(
                check=f"test.{outcome}",
                field=nodeid,
                expected="the test passes",
                actual=said,
                message=said,
            )
        )
    if len(failed) > NAMED_FAILURES:
        more = len(failed) - NAMED_FAILURES
        facts.append(
            Fact(
                check="test.more",
                field="",
                expected="the tests pass",
                actual=f"{more} more tests did not pass",
                message=f"and {more} more tests that did not pass",
            )
        )
    return facts
