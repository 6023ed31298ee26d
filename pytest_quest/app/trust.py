"""Cross-checks of the mutation child's report: what it could not show was tried is REVIEW, not PASS.

docs/judge.md ("Evidence the tests cannot rewrite") lists each fact and its limits.
"""

from __future__ import annotations

from typing import Any

from pytest_quest.core.kills import IMPORTED_BEFORE_SIGN
from pytest_quest.core.model import Fact, FunctionFacts
from pytest_quest.core.mutant_ast import change_text
from pytest_quest.engine.mutation import MutationReport
from pytest_quest.engine.own_copy import CODE_READ


def tampered_facts(report: MutationReport, quest_id: str) -> list[Fact]:
    """The report did not come as the child's one message with the judge's nonce."""
    if not report.tampered:
        return []
    return [
        Fact(
            check="evidence.tampered",
            field=quest_id,
            expected="one message with the judge's nonce from the mutation run",
            actual=report.tampered,
            message=(
                f"could not confirm: the mutation run's report was tampered with ({report.tampered})"
            ),
        )
    ]


def _where(function: FunctionFacts, mutant: dict[str, Any]) -> str:
    return f"{function.file}:{int(mutant['line'])}"


def _change(mutant: dict[str, Any]) -> str:
    return change_text(str(mutant["original"]), str(mutant["mutated"]))


def unverified_facts(report: MutationReport, function: FunctionFacts) -> list[Fact]:
    """Mutants not applied or not reached, tests that fail on the original, disagreeing reports."""
    facts = []
    excluded = set(function.excluded_lines)
    for mutant in report.mutants:
        status = mutant.get("status")
        if int(mutant["line"]) in excluded:
            continue  # excluded from coverage: no test need run it (step 2 judges the exclusion)
        if status == "not_applied":
            facts.append(
                Fact(
                    check="mutation.not_applied",
                    field=_where(function, mutant),
                    expected="the mutant is swapped into the function the tests run",
                    actual=str(mutant.get("reason") or "no live function took it"),
                    message=(
                        f"could not confirm: mutant {_change(mutant)} was never applied "
                        f"({mutant.get('reason') or 'no live function took it'})"
                    ),
                )
            )
        elif status == "unreached":
            facts.append(
                Fact(
                    check="mutation.unreached",
                    field=_where(function, mutant),
                    expected="a covering test that ran the original runs the mutant",
                    actual="no covering test ran both",
                    message=(
                        f"could not confirm: mutant {_change(mutant)} was not run by a test "
                        "that also ran the original function"
                    ),
                )
            )
    for nodeid in report.detects_run:
        facts.append(
            Fact(
                check="mutation.detects_run",
                field=nodeid,
                expected="the test passes against the original function among the mutant runs",
                actual="it failed there",
                message=(
                    f"could not confirm: {nodeid} fails against the unchanged function "
                    "when run among the mutants (it can tell the mutation run apart)"
                ),
            )
        )
    for nodeid, how in sorted(report.own_copy.items()):
        if how.startswith(CODE_READ):
            facts.append(
                Fact(
                    check="mutation.code_read",
                    field=nodeid,
                    expected="the test checks what the function does, not its code",
                    actual=f"it {how} while judged",
                    message=(
                        f"could not confirm: {nodeid} {how} during the mutant runs; the code "
                        "tells a mutant from the original, so a test that compares it kills "
                        "every mutant without checking what the function does"
                    ),
                )
            )
            continue
        facts.append(
            Fact(
                check="mutation.own_copy",
                field=nodeid,
                expected="the test checks the function it is given, not a copy it made",
                actual=f"it made its own copy of {function.qualname} while judged: {how}",
                message=(
                    f"could not confirm: {nodeid} made its own copy of {function.qualname} "
                    f"during the mutant runs ({how}); a copy is never mutated, so comparing "
                    "the function with it kills every mutant without checking anything"
                ),
            )
        )
    for nodeid, why in sorted(report.kill_unconfirmed.items()):
        facts.append(
            Fact(
                check="mutation.kill_unconfirmed",
                field=nodeid,
                expected="the test fails with the mutant in place from the start of a process",
                actual=why,
                message=(
                    f"could not confirm: {nodeid}: {why}; "
                    + (
                        "a person reviews it"
                        if IMPORTED_BEFORE_SIGN in why
                        else f"its expected values may come from {function.qualname} itself "
                        "(computed at import, in parametrize, or on an earlier run), which "
                        "no mutant can change"
                    )
                ),
            )
        )
    for nodeid, what in sorted(report.stale_reads.items()):
        facts.append(
            Fact(
                check="mutation.stale_read",
                field=nodeid,
                expected="each run of the test checks the function against what the test knows",
                actual=what,
                message=(
                    f"could not confirm: {nodeid} {what} (the measuring run or an earlier "
                    f"mutant run): its expected values may come from {function.qualname} "
                    "itself, which no mutant can change"
                ),
            )
        )
    facts += disagreement_facts(report, function)
    return facts


def disagreement_facts(report: MutationReport, function: FunctionFacts) -> list[Fact]:
    """Covering tests (per the measuring run) that passed but did not run the original here.

    None when every mutant was run by a test that also ran the original: the
    verdict then rests on those tests' runs (a test that did not reach the
    function can kill no mutant), and a line no such test reached would have
    made its mutant `mutation.unreached`.  Honest suites get there through
    what a process does once: a test whose body imports a module for the
    first time reaches the function in the measuring run only (seen on
    python-dotenv's zip import tests, which made every submit of the
    functions they reach REVIEW).
    """
    if not report.probed or not report.runs:
        return []
    excluded = set(function.excluded_lines)
    judged = [m for m in report.mutants if int(m["line"]) not in excluded]
    if judged and all(m.get("status") in ("killed", "survived") for m in judged):
        return []
    reached = set(report.original_reached)
    stable = [
        nodeid
        for nodeid in function.covering_tests
        if all(run.get(nodeid) == "passed" for run in report.runs)
    ]
    return [
        Fact(
            check="evidence.disagree",
            field=nodeid,
            expected="the test runs the function in the mutation run, as in the measuring run",
            actual="it did not run the original function in the mutation run",
            message=(
                f"could not confirm: {nodeid} ran {function.qualname} in the measuring run "
                "but not in the mutation run"
            ),
        )
        for nodeid in stable
        if nodeid not in reached
    ]


__all__ = ["disagreement_facts", "tampered_facts", "unverified_facts"]
