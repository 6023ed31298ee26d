"""The deterministic re-check of verifiers' findings and the vote on them (pure)."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, Quest, Verdict
from pytest_quest.core.words import counted
from pytest_quest.verify.protocol import Finding


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def normalize_path(file: str, rootdir: Path | None = None) -> str:
    path = file.strip().replace("\\", "/")
    if rootdir is not None and os.path.isabs(path):
        try:
            path = Path(os.path.relpath(path, rootdir)).as_posix()
        except ValueError:
            return path
    while path.startswith("./"):
        path = path[2:]
    return path


def recheck(
    finding: Finding, files: Mapping[str, Sequence[str]], rootdir: Path | None = None
) -> str | None:
    """Why `finding` must be dropped, or None when it holds.

    It holds when its file is a file of the submission, its line exists there,
    and its quoted code (whitespace ignored) is found at that line; a quote
    longer than the line may run on into the following lines, but must start
    on the cited one.
    """
    if not finding.file or finding.line <= 0:
        return "cites no file:line"
    path = normalize_path(finding.file, rootdir)
    lines = files.get(path)
    if lines is None:
        return f"{finding.file} is not a file of the submission"
    if finding.line > len(lines):
        return f"{path} has {counted(len(lines), 'line')}, no line {finding.line}"
    quote = _squash(finding.quote)
    if not quote:
        return "quotes no code"
    cited = _squash(lines[finding.line - 1])
    joined = cited + "".join(_squash(line) for line in lines[finding.line : finding.line + 20])
    # The first match is the earliest: if it starts below the cited line, all do.
    if 0 <= joined.find(quote) < len(cited):
        return None
    return f"the quoted code is not at {path}:{finding.line}"


@dataclass
class Answer:
    """What one verifier produced: findings, or an error; and how long it took."""

    verifier: str
    seconds: float
    findings: list[Finding] = field(default_factory=list)
    error: str = ""
    status: str = ""
    abstained: bool = False


@dataclass
class Confirmed:
    """A finding raised by enough verifiers: where, and who raised it."""

    file: str
    line: int
    quote: str
    reason: str
    raised_by: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "quote": self.quote,
            "reason": self.reason,
            "raised_by": list(self.raised_by),
        }


@dataclass
class Verification:
    """The outcome of L2 for one submission: the vote, the dropped findings, the calls."""

    threshold: int
    voters: int
    questions: int
    answers: list[Answer]
    confirmed: list[Confirmed]
    below_threshold: list[Confirmed]
    dropped: list[dict[str, Any]]

    @property
    def errors(self) -> list[Answer]:
        return [answer for answer in self.answers if answer.error]

    @property
    def hallucinations(self) -> int:
        return len(self.dropped)

    def facts(self) -> list[Fact]:
        facts = [
            Fact(
                check="verify.error",
                field=answer.verifier,
                expected="a reply in the verification protocol",
                actual=answer.error,
                message=f"verifier could not confirm: {answer.error}",
            )
            for answer in self.errors
        ]
        for item in self.confirmed:
            count = f"{len(item.raised_by)} of {counted(self.voters, 'verifier')}"
            facts.append(
                Fact(
                    check="verify.discrepancy",
                    field=f"{item.file}:{item.line}",
                    expected=(
                        f"no finding raised by {self.threshold} or more of "
                        f"{counted(self.voters, 'verifier')}"
                    ),
                    actual=f"raised by {count} ({', '.join(item.raised_by)}): {item.reason}",
                    message=f"`{item.quote}`: {item.reason} (raised by {count})",
                )
            )
        return facts

    def judge(self, result: GateResult) -> GateResult:
        """Apply L2 to an L1 `result`: a PASS may become REVIEW; nothing else changes."""
        if result.verdict is not Verdict.PASS:
            return result
        facts = self.facts()
        if not facts:
            return result
        return GateResult(Verdict.REVIEW, facts, "l2-verify")

    def record(self) -> dict[str, Any]:
        """What the quest's record keeps of this verification (``Quest.extra["verification"]``)."""
        if self.errors:
            outcome = "could_not_verify"
        elif self.confirmed:
            outcome = "verified_with_discrepancy"
        else:
            outcome = "verified_clean"
        return {
            "result": outcome,
            "verified_with_discrepancy": bool(self.confirmed),
            "threshold": self.threshold,
            "verifiers": self.voters,
            "questions": self.questions,
            "discrepancies": [item.to_dict() for item in self.confirmed],
            "below_threshold": [item.to_dict() for item in self.below_threshold],
            "hallucinations": self.hallucinations,
            "dropped": self.dropped,
            "calls": [
                {
                    "verifier": answer.verifier,
                    "seconds": round(answer.seconds, 3),
                    "status": "abstained"
                    if answer.abstained
                    else ("error" if answer.error else answer.status),
                    "findings": len(answer.findings),
                    **({"error": answer.error} if answer.error else {}),
                }
                for answer in self.answers
            ],
        }


def majority(voters: int) -> int:
    return voters // 2 + 1


def vote(
    answers: Sequence[Answer],
    files: Mapping[str, Sequence[str]],
    *,
    threshold: int | None,
    questions: int = 0,
    rootdir: Path | None = None,
) -> Verification:
    """Re-check every finding, then keep those at least `threshold` verifiers raised.

    A finding's identity is its normalized file and line: two verifiers
    quoting the same line in different words agree.  A verifier raising the
    same line twice counts once.  `threshold` None means a majority of the
    verifiers that did not abstain.
    """
    voters = sum(1 for answer in answers if not answer.abstained)
    needed = threshold if threshold is not None else majority(voters)
    raised: dict[tuple[str, int], dict[str, Finding]] = {}
    dropped: list[dict[str, Any]] = []
    for answer in answers:
        for finding in answer.findings:
            why = recheck(finding, files, rootdir)
            if why is not None:
                dropped.append({"verifier": answer.verifier, **finding.to_dict(), "why": why})
                continue
            key = (normalize_path(finding.file, rootdir), finding.line)
            raised.setdefault(key, {}).setdefault(answer.verifier, finding)
    confirmed: list[Confirmed] = []
    below: list[Confirmed] = []
    for (file, line), by in sorted(raised.items()):
        first = next(iter(by.values()))
        item = Confirmed(file, line, first.quote, first.reason, list(by))
        (confirmed if len(by) >= needed else below).append(item)
    return Verification(
        threshold=needed,
        voters=voters,
        questions=questions,
        answers=list(answers),
        confirmed=confirmed,
        below_threshold=below,
        dropped=dropped,
    )


def excluded_by(quest: Quest, patterns: Sequence[str]) -> str | None:
    """The first pattern of `patterns` matching the quest's id or file, if any."""
    for pattern in patterns:
        pattern = pattern.strip()
        if pattern and (
            fnmatch.fnmatchcase(quest.id, pattern) or fnmatch.fnmatchcase(quest.file, pattern)
        ):
            return pattern
    return None
