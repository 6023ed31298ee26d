"""Cross-checks of the mutation child's report: what it could not show was tried is REVIEW, not PASS.

docs/judge.md ("Evidence the tests cannot rewrite") lists each fact and its limits.
"""

from __future__ import annotations

from typing import Any

from pytest_quest.core.kills import IMPORTED_BEFORE_SIGN
from pytest_quest.core.model import Fact, FunctionFacts
from pytest_quest.core.mutant_ast import change_text
from pytest_quest.engine.mutation import MutationReport


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


def _mutant_facts(report: MutationReport, function: FunctionFacts) -> list[Fact]:
    """Mutants never applied, or not run by a test that also ran the original."""
    facts = []
    excluded = set(function.excluded_lines)
    for mutant in report.mutants:
        status = mutant.get("status")
        if int(mutant["line"]) in excluded:
            continue  # excluded from coverage: no test need run it (step 2 judges the exclusion)
        if status == "not_applied":
            reason = str(mutant.get("reason") or "no live function took it")
            facts.append(
                Fact(
                    check="mutation.not_applied",
                    field=_where(function, mutant),
                    expected="the mutant is swapped into the function the tests run",
                    actual=reason,
                    message=(
                        f"could not confirm: mutant {_change(mutant)} was never applied ({reason})"
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
    return facts


def _copy_fact(nodeid: str, how: str, function: FunctionFacts) -> Fact:
    """A test that made its own copy of the function while judged (a read of its code
    is no fact: the kills of that run are discounted, plugin/mutation_child.py)."""
    return Fact(
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


def _unconfirmed_fact(nodeid: str, why: str, function: FunctionFacts) -> Fact:
    """A kill the fresh process did not confirm."""
    if IMPORTED_BEFORE_SIGN in why:
        doubt = "a person reviews it"
    else:
        doubt = (
            f"its expected values may come from {function.qualname} itself "
            "(computed at import, in parametrize, or on an earlier run), which "
            "no mutant can change"
        )
    return Fact(
        check="mutation.kill_unconfirmed",
        field=nodeid,
        expected="the test fails with the mutant in place from the start of a process",
        actual=why,
        message=f"could not confirm: {nodeid}: {why}; {doubt}",
    )


def _outside_fact(nodeid: str, mutant: str, function: FunctionFacts) -> Fact:
    """A killing test that fails as well where the mutant's code runs nowhere."""
    return Fact(
        check="mutation.kill_outside",
        field=nodeid,
        expected=f"the test passes with {function.qualname} unchanged in its process",
        actual=f"it failed there while the file held {mutant}, whose code ran nowhere",
        message=(
            f"could not confirm: {nodeid} kills {mutant}, but fails as well with "
            f"{function.qualname} unchanged in the test's process while its file holds "
            "that mutant and no process runs the mutant's code: it tells the run apart "
            "by what it reads, not by what the function does"
        ),
    )


def _stale_fact(nodeid: str, what: str, function: FunctionFacts) -> Fact:
    """A test whose expected values were read from an earlier run of the function."""
    return Fact(
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


def unverified_facts(report: MutationReport, function: FunctionFacts) -> list[Fact]:
    """Mutants not applied or not reached, tests that fail on the original, disagreeing reports."""
    facts = _mutant_facts(report, function)
    facts += [
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
        for nodeid in report.detects_run
    ]
    facts += [_copy_fact(n, how, function) for n, how in sorted(report.own_copy.items())]
    facts += [
        _unconfirmed_fact(n, why, function) for n, why in sorted(report.kill_unconfirmed.items())
    ]
    facts += [
        _outside_fact(n, mutant, function) for n, mutant in sorted(report.kill_outside.items())
    ]
    facts += [_stale_fact(n, what, function) for n, what in sorted(report.stale_reads.items())]
    facts += disagreement_facts(report, function)
    return facts


def disagreement_facts(report: MutationReport, function: FunctionFacts) -> list[Fact]:
    """Covering tests (per the measuring run) that passed but did not run the original here.

    None when every mutant was run by a test that also ran the original: the
    verdict then rests on those runs.  Honest suites get here too: a test that
    imports a module for the first time may reach the function in the
    measuring run only.
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
