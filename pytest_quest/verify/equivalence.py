"""The verifiers' view on a disputed mutant: one fact added to the dispute's REVIEW.

With verification on, each verifier is asked whether an input tells a
disputed mutant apart; the answers go through the usual reply protocol and
vote and become a ``verify.equivalence`` fact.  The verdict stays REVIEW
whatever they say (docs/gate.md, "Disputing a mutant").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_quest.core.model import Fact
from pytest_quest.core.observed import quoted
from pytest_quest.verify.adapters import Verifier, run_verification
from pytest_quest.verify.prompt import Request, function_section, reply_format, tests_section
from pytest_quest.verify.protocol import STATUS_CLEAN, STATUS_CORRECTIONS
from pytest_quest.verify.vote import Verification

QUESTION = (
    "Is there an input for which the function with the change returns or raises something "
    "else, or leaves its arguments or its object otherwise, than the function as written?"
)

#: Tests that reach the changed line shown to the verifiers (the first, in order).
TESTS_SHOWN = 5


def equivalence_request(request: Request) -> Request:
    """`request` (the function, the tests shown, their files) asking the one question."""
    return dataclasses.replace(request, questions=[QUESTION], tests=request.tests[:TESTS_SHOWN])


def equivalence_prompt(request: Request, mutant: dict[str, Any], reason: str) -> str:
    """The prompt sent on stdin to each verifier about one disputed mutant."""
    line = int(mutant.get("line", 0))
    parts = [
        (
            "You are an independent reviewer of a claim about one function. A mutation-testing "
            "gate changed one line of it; no test of the project's suite fails with the change, "
            "and the test writer claims no input can tell the changed function from the "
            "original. Judge only from the code below and your knowledge of Python; look for "
            "an input that tells them apart before you answer."
        ),
        "",
        *function_section(request, "Function"),
        "",
        "## The change",
        "",
        f"Line {line}: `{mutant.get('original', '')}` becomes `{mutant.get('mutated', '')}`",
        "",
        "## The test writer's reason",
        "",
        str(reason),
        "",
        "## Tests that reach the changed line and pass with the change",
        *tests_section(request.tests),
        "",
        "## Questions (answer with yes or no, then one short reason)",
        "",
        f"1. {QUESTION}",
        *reply_format(
            "- the question above",
            "- yes or no, then a short reason",
            (
                f"- {request.function_file}:{line} `the original code of that line, quoted "
                "exactly` the input that tells them apart, and what each version does with it"
            ),
        ),
        "",
        (
            f"Answer yes only with an input: write it in <discrepancies>, citing line {line} of "
            f"{request.function_file} and quoting its original code between backticks (status "
            f"{STATUS_CORRECTIONS}); a citation of another line, or a quote not on it, is "
            f"discarded. Answer no with `none` in <discrepancies> (status {STATUS_CLEAN})."
        ),
    ]
    return "\n".join(parts) + "\n"


def ask(
    request: Request,
    mutant: dict[str, Any],
    reason: str,
    verifiers: Sequence[Verifier],
    *,
    threshold: int | None,
    rootdir: Path | None,
) -> Verification:
    """Every verifier asked about `mutant`, in isolation; their findings re-checked and voted."""
    asked = equivalence_request(request)
    prompt = equivalence_prompt(asked, mutant, reason)
    return run_verification(
        asked, list(verifiers), threshold=threshold, rootdir=rootdir, prompt=prompt
    )


def equivalence_fact(file: str, mutant: dict[str, Any], verification: Verification) -> Fact:
    """What the verifiers said of a disputed mutant, for the person who decides (REVIEW stays)."""
    line = int(mutant.get("line", 0))
    told: dict[str, str] = {}
    for item in [*verification.confirmed, *verification.below_threshold]:
        if item.line != line:
            continue  # an input is named on the changed line only
        for name in item.raised_by:
            told.setdefault(name, item.reason)
    failed = [answer.verifier for answer in verification.errors]
    none = [
        a.verifier
        for a in verification.answers
        if not a.error and not a.abstained and a.verifier not in told
    ]
    said = [f"{quoted(name, 60)}: {quoted(why, 160)}" for name, why in told.items()]
    parts = [f"{len(told)} of {verification.voters} name an input that tells them apart"]
    if said:
        parts[0] += " (" + "; ".join(said) + ")"
    parts.append(f"{len(none)} find none")
    if failed:
        parts.append(f"{len(failed)} could not answer ({', '.join(quoted(n, 60) for n in failed)})")
    summary = ", ".join(parts)
    return Fact(
        check="verify.equivalence",
        field=f"{file}:{line}",
        expected="the verifiers find no input that tells the disputed mutant from the function",
        actual=summary,
        message=(
            f"the verifiers on disputed mutant {mutant.get('id', '')}: {summary}; "
            "a person decides (verification only adds to this REVIEW)"
        ),
    )
