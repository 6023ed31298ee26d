"""L2: independent verification of a would-be PASS; it can only raise REVIEW.

The deterministic gate (L1) is the only layer that may lock PASS.  After it
would PASS, optional verifiers look at the function and the tests that cover
it and answer a few narrow yes/no questions (Chain-of-Verification).  Each
verifier runs on its own: a command that reads a prompt on stdin and answers
in a fixed five-block protocol (or JSON), or a plugin implementing the
``pytest_quest_verify`` hook.

Nothing a verifier says is trusted as such:

* every finding must cite a file and line of the submission and quote the
  code at that line; a finding that does not is dropped and counted as a
  hallucination (`recheck`);
* a finding counts only when at least `threshold` verifiers raise it (same
  file and line), by default a majority (`vote`);
* a verifier that errors, times out or answers outside the protocol could not
  confirm the PASS: REVIEW, with a fact naming it.

Surviving findings turn PASS into REVIEW with one ``verify.discrepancy`` fact
each.  L2 never turns anything into PASS and never into FAIL.

Layout: the reply protocol (`parse_reply`, `format_reply`), the prompt
(`build_request`, `build_prompt`), the re-check and the vote (pure), then the
verifiers (`CommandVerifier`, `HookVerifier`) and `run_verification`, which
puts them together.  ``commands.QuestSession.verify_l2`` is the only caller.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, FunctionFacts, Quest, Verdict
from pytest_quest.app.options import QuestOptions

STATUS_CLEAN = "verified-clean"
STATUS_CORRECTIONS = "verified-with-corrections"
BLOCKS = ("status", "questions", "answers", "discrepancies", "final")

# The narrow questions, asked in this order; `--quest-verify-questions N`
# asks the first N.  Each is phrased so that "no" is the clean answer.
QUESTIONS = (
    (
        "Does any test pass whatever the function returns (it asserts nothing about the "
        "result, or only something every return value satisfies)?"
    ),
    "Does a test's name or docstring claim behaviour that its assertions do not check?",
    (
        "Does an assertion compute its expected value with the code under test, so that it "
        "would still pass if the code were wrong?"
    ),
    (
        "Does a test check an implementation detail (a private attribute, a call count, a "
        "log message) instead of what the function returns or does?"
    ),
    (
        "Does a test catch or ignore an exception (a broad try/except, pytest.raises of a "
        "too general type) so that a wrong result could not fail it?"
    ),
    (
        "Does a test depend on time, randomness, the network, files or the order of tests "
        "in a way that could change its outcome?"
    ),
)


class ProtocolError(ValueError):
    """A verifier's reply is outside the five-block protocol (and not valid JSON)."""


# -- the reply protocol ------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One discrepancy a verifier reports: where (`file`:`line`), the code it quotes, why.

    A finding the parser could not split into those parts keeps its text in
    `reason` with an empty `file`; the re-check drops it.
    """

    file: str
    line: int
    quote: str
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "quote": self.quote, "reason": self.reason}


@dataclass(frozen=True)
class Reply:
    """A parsed verifier reply."""

    status: str
    questions: tuple[str, ...]
    answers: tuple[str, ...]
    findings: tuple[Finding, ...]
    final: str


# One pass over the tags (a backreferencing regex over the whole reply is
# quadratic on a reply full of unclosed tags).
_TAG_RE = re.compile(
    r"<[ \t]*(/?)[ \t]*(status|questions|answers|discrepancies|final)[ \t]*>", re.IGNORECASE
)
_BULLET_RE = re.compile(r"^\s*(?:[-*]|[0-9]+[.)])(?:\s+(.*)|$)")
_LOCATION_RE = re.compile(r"([^\s`:'\"(]+\.[A-Za-z0-9_]+):([0-9]+)")
_QUOTE_RE = re.compile(r"``\s?(.+?)\s?``|`([^`]+)`")
_ANSWER_RE = re.compile(r"^[\W_]*(yes|no)\b", re.IGNORECASE)


def parse_reply(text: str) -> Reply:
    """Parse a verifier's reply: the five blocks in any order, or a JSON object.

    Raises `ProtocolError` (and nothing else) when `text` is neither.  When a
    block appears more than once the last one counts: a verifier that quotes
    the format before answering is still understood.
    """
    blocks = _blocks(text)
    if not blocks:
        data = _json_object(text)
        if data is None:
            raise ProtocolError("no <status> block and no JSON object in the reply")
        return _reply_from_json(data)
    missing = [name for name in BLOCKS if name not in blocks]
    if missing:
        raise ProtocolError("missing block(s): " + ", ".join(f"<{name}>" for name in missing))
    findings = _discrepancies(blocks["discrepancies"])
    return _checked(
        blocks["status"],
        _items(blocks["questions"]),
        _items(blocks["answers"]),
        findings,
        blocks["final"].strip(),
    )


def _blocks(text: str) -> dict[str, str]:
    """Each block's content: an opening tag paired with the next closing tag of its name."""
    blocks: dict[str, str] = {}
    opened: dict[str, int] = {}
    for tag in _TAG_RE.finditer(text):
        name = tag.group(2).lower()
        if not tag.group(1):
            opened.setdefault(name, tag.end())
        elif name in opened:
            blocks[name] = text[opened.pop(name) : tag.start()]
    return blocks


def _checked(
    status: str,
    questions: list[str],
    answers: list[str],
    findings: list[Finding],
    final: str,
) -> Reply:
    status = status.strip().strip("*`'\".").strip().lower().replace("_", "-")
    if status not in (STATUS_CLEAN, STATUS_CORRECTIONS):
        raise ProtocolError(
            f"status {status[:60]!r} is neither {STATUS_CLEAN} nor {STATUS_CORRECTIONS}"
        )
    if not questions:
        raise ProtocolError("the <questions> block lists no question")
    if len(answers) != len(questions):
        raise ProtocolError(f"{len(questions)} questions but {len(answers)} answers")
    for number, answer in enumerate(answers, 1):
        if not _ANSWER_RE.match(answer):
            raise ProtocolError(f"answer {number} does not start with yes or no: {answer[:60]!r}")
    if status == STATUS_CLEAN and findings:
        raise ProtocolError(f"status {STATUS_CLEAN} but {len(findings)} discrepancies listed")
    if status == STATUS_CORRECTIONS and not findings:
        raise ProtocolError(f"status {STATUS_CORRECTIONS} but no discrepancy listed")
    return Reply(status, tuple(questions), tuple(answers), tuple(findings), final)


def _items(block: str) -> list[str]:
    """The bullet items of a block (``-``, ``*`` or ``1.``); continuation lines join the item.

    A block without any bullet has one item per non-empty line.
    """
    lines = [line for line in block.splitlines() if line.strip()]
    if not any(_BULLET_RE.match(line) for line in lines):
        return [line.strip() for line in lines]
    items: list[str] = []
    for line in lines:
        match = _BULLET_RE.match(line)
        if match:
            items.append((match.group(1) or "").strip())
        elif items:
            items[-1] = f"{items[-1]} {line.strip()}".strip()
        else:
            items.append(line.strip())
    return [item for item in items if item]


# How models write "nothing to report", letters only.
_NONE_SPELLINGS = ("", "none", "nonefound", "nodiscrepancies", "nodiscrepanciesfound")


def _is_none(text: str) -> bool:
    return re.sub(r"[\W_]+", "", text).lower() in _NONE_SPELLINGS


def _discrepancies(block: str) -> list[Finding]:
    if _is_none(block):
        return []
    items = _items(block)
    if len(items) == 1 and _is_none(items[0]):
        return []
    return [parse_finding(item) for item in items]


def parse_finding(text: str) -> Finding:
    """Split one discrepancy item into file, line, quoted code and reason.

    The location is the first ``path.ext:line`` (also inside backticks); the
    quote is the first other backtick span.  Whatever is missing stays empty
    (line 0), and the re-check drops the finding.
    """
    file, line, quote = "", 0, ""
    rest = text
    spans = list(_QUOTE_RE.finditer(text))
    for span in spans:
        inner = (span.group(1) or span.group(2) or "").strip()
        location = _LOCATION_RE.fullmatch(inner)
        if location and not file:
            file, line = location.group(1), int(location.group(2))
            rest = rest.replace(span.group(0), " ", 1)
        elif not quote:
            quote = span.group(1) if span.group(1) is not None else (span.group(2) or "")
            rest = rest.replace(span.group(0), " ", 1)
    if not file:
        unquoted = _QUOTE_RE.sub(" ", rest)
        location = _LOCATION_RE.search(unquoted)
        if location:
            file, line = location.group(1), int(location.group(2))
            rest = rest.replace(location.group(0), " ", 1)
    reason = re.sub(r"\s+", " ", rest).strip(" -:—–,;")
    return Finding(file=file, line=line, quote=quote.strip(), reason=reason)


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    fence = re.match(r"^```[A-Za-z]*\s*\n(.*)\n\s*```$", stripped, re.DOTALL)
    if fence:
        stripped = fence.group(1).strip()
    candidates = [stripped]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start : end + 1])
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict):
            return data
    return None


def _reply_from_json(data: dict[str, Any]) -> Reply:
    missing = [name for name in BLOCKS if name not in data]
    if missing:
        raise ProtocolError("JSON reply lacks key(s): " + ", ".join(missing))

    def strings(name: str) -> list[str]:
        value = data[name]
        if isinstance(value, str):
            return _items(value)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ProtocolError(f"JSON reply: {name} must be a list of strings")
        return [item.strip() for item in value if item.strip()]

    if not isinstance(data["status"], str) or not isinstance(data["final"], str):
        raise ProtocolError("JSON reply: status and final must be strings")
    raw = data["discrepancies"]
    findings: list[Finding] = []
    if isinstance(raw, str):
        findings = _discrepancies(raw)
    elif isinstance(raw, list):
        for item in raw:
            findings.append(_finding_from_json(item))
    elif raw is not None:
        raise ProtocolError("JSON reply: discrepancies must be a list, a string or null")
    return _checked(
        data["status"], strings("questions"), strings("answers"), findings, data["final"].strip()
    )


def _finding_from_json(item: Any) -> Finding:
    if isinstance(item, str):
        return parse_finding(item)
    if not isinstance(item, dict):
        raise ProtocolError("JSON reply: each discrepancy must be an object or a string")
    line = item.get("line", 0)
    if isinstance(line, str) and line.strip().isascii() and line.strip().isdigit():
        line = int(line.strip())
    if isinstance(line, float) and line.is_integer():
        line = int(line)
    if not isinstance(line, int) or isinstance(line, bool):
        line = 0
    return Finding(
        file=str(item.get("file", "") or ""),
        line=line,
        quote=str(item.get("quote", "") or ""),
        reason=str(item.get("reason", "") or ""),
    )


def format_reply(reply: Reply) -> str:
    """The five-block text of `reply` (the exact format the prompt asks for)."""

    def bullets(items: Sequence[str]) -> str:
        return "\n".join(f"- {item}" for item in items)

    if reply.findings:
        discrepancies = "\n".join(
            f"- {finding.where} `{finding.quote}` {finding.reason}".rstrip()
            for finding in reply.findings
        )
    else:
        discrepancies = "none"
    return (
        f"<status>{reply.status}</status>\n"
        f"<questions>\n{bullets(reply.questions)}\n</questions>\n"
        f"<answers>\n{bullets(reply.answers)}\n</answers>\n"
        f"<discrepancies>\n{discrepancies}\n</discrepancies>\n"
        f"<final>{reply.final}</final>\n"
    )


# -- the prompt ---------------------------------------------------------------------


@dataclass(frozen=True)
class TestSource:
    """The source of one test shown to verifiers: `text` spans lines `first`..`last` of `file`."""

    __test__ = False  # not a pytest test class, whatever its name

    nodeid: str
    file: str
    first: int
    last: int
    text: str


@dataclass
class Request:
    """What every verifier of one submission is shown.

    `files` holds the lines of each file of the submission (the function's
    file and the test files shown), as read when the prompt was built: the
    re-check looks there, so a verifier is checked against what it saw.
    """

    quest: Quest
    function_file: str
    function_first: int
    function_source: str
    tests: list[TestSource]
    questions: list[str]
    files: dict[str, list[str]] = field(default_factory=dict)


def _numbered(text: str, first: int) -> str:
    return "\n".join(f"{first + index:5d} | {line}" for index, line in enumerate(text.split("\n")))


def _def_span(tree: ast.AST, qualname: list[str]) -> tuple[int, int] | None:
    """Lines (first decorator or def, end) of the function `qualname` in `tree`."""
    body: list[ast.stmt] = list(getattr(tree, "body", []))
    node: ast.AST | None = None
    for name in qualname:
        node = next(
            (  # the last definition of a name is the one pytest runs
                child
                for child in reversed(body)
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and child.name == name
            ),
            None,
        )
        if node is None:
            return None
        body = list(getattr(node, "body", []))
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return first, node.end_lineno or node.lineno


def covering_test_sources(rootdir: Path, nodeids: Sequence[str]) -> list[TestSource]:
    """The source of each test in `nodeids` (parametrized cases shown once), in order."""
    sources: list[TestSource] = []
    seen: set[tuple[str, str]] = set()
    trees: dict[str, tuple[ast.AST, list[str]] | None] = {}
    for nodeid in nodeids:
        base = nodeid.split("[", 1)[0]  # a parameter id may hold anything, even "::"
        file, _, rest = base.partition("::")
        names = [part for part in rest.split("::") if part]
        key = (file, "::".join(names))
        if not names or key in seen:
            continue
        seen.add(key)
        if file not in trees:
            trees[file] = _parse_file(rootdir / file)
        parsed = trees[file]
        if parsed is None:
            continue
        tree, lines = parsed
        span = _def_span(tree, names)
        if span is None:
            continue
        first, last = span
        text = "\n".join(lines[first - 1 : last])
        sources.append(TestSource(base, file, first, last, text))
    return sources


def _parse_file(path: Path) -> tuple[ast.AST, list[str]] | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        return ast.parse(text), text.splitlines()
    except (OSError, SyntaxError, ValueError):
        return None


def build_request(
    rootdir: Path,
    quest: Quest,
    current: FunctionFacts,
    covering_tests: Sequence[str],
    changed_files: Sequence[str],
    questions: int,
) -> Request:
    """Collect what verifiers are shown: the function, the new or changed tests, questions.

    The tests are those covering the function that live in a test file new
    or changed since the scan; when none does, every covering test.
    """
    changed = set(changed_files)
    chosen = [nodeid for nodeid in covering_tests if nodeid.split("::")[0] in changed]
    tests = covering_test_sources(rootdir, chosen or list(covering_tests))
    files: dict[str, list[str]] = {}
    function_lines = _read_lines(rootdir / current.file)
    files[current.file] = function_lines
    first, last = current.start, current.last
    parsed = _parse_file(rootdir / current.file)
    if parsed is not None:
        # Show the decorators too: they are part of what the tests exercise.
        for node in ast.walk(parsed[0]):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == first:
                first = min([first] + [d.lineno for d in node.decorator_list])
                break
    source = "\n".join(function_lines[first - 1 : last])
    for test in tests:
        if test.file not in files:
            files[test.file] = _read_lines(rootdir / test.file)
    return Request(
        quest=quest,
        function_file=current.file,
        function_first=first,
        function_source=source,
        tests=tests,
        questions=list(QUESTIONS[: max(1, questions)]),
        files=files,
    )


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def build_prompt(request: Request) -> str:
    """The prompt sent on stdin to each verifier command (documented in docs/verification.md)."""
    quest = request.quest
    last = request.function_first + request.function_source.count("\n")
    parts = [
        (
            "You are an independent verifier of unit tests written by someone else for one "
            "function. Judge only from the code below: do not trust the tests' names, "
            "docstrings or comments, and answer each question on its own before you list "
            "any discrepancy."
        ),
        "",
        (
            f"## Function under test: {quest.id} ({request.function_file}, lines "
            f"{request.function_first}-{last})"
        ),
        "",
        "```python",
        _numbered(request.function_source, request.function_first),
        "```",
        "",
        "## Tests that cover it (new or changed in this submission)",
    ]
    if not request.tests:
        parts += ["", "(no test source could be shown)"]
    for test in request.tests:
        parts += [
            "",
            f"### {test.nodeid} ({test.file}, lines {test.first}-{test.last})",
            "",
            "```python",
            _numbered(test.text, test.first),
            "```",
        ]
    parts += ["", "## Questions (answer each with yes or no, then one short reason)", ""]
    parts += [f"{number}. {question}" for number, question in enumerate(request.questions, 1)]
    parts += [
        "",
        "## Reply format",
        "",
        "Reply with exactly these five blocks (any order), nothing else is read:",
        "",
        f"<status>{STATUS_CLEAN} or {STATUS_CORRECTIONS}</status>",
        "<questions>",
        "- each question above, one bullet each, in the same order",
        "</questions>",
        "<answers>",
        "- yes or no, then a short reason; one bullet per question, same order",
        "</answers>",
        "<discrepancies>",
        "- path/to/file.py:LINE `the code at that line, quoted exactly` why it is a problem",
        "</discrepancies>",
        "<final>one sentence: your conclusion</final>",
        "",
        (
            "Write `none` in <discrepancies> when there is no discrepancy; the status is then "
            f"{STATUS_CLEAN}, otherwise {STATUS_CORRECTIONS}. Every discrepancy cites a file "
            "and line number shown above and quotes, between backticks, code that is on that "
            "line; a discrepancy that does not is discarded. Instead of the blocks, one JSON "
            'object is accepted: {"status": ..., "questions": [...], "answers": [...], '
            '"discrepancies": [{"file": ..., "line": ..., "quote": ..., "reason": ...}], '
            '"final": ...}.'
        ),
    ]
    return "\n".join(parts) + "\n"


# -- the deterministic re-check and the vote ------------------------------------------


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
        return f"{path} has {len(lines)} lines, no line {finding.line}"
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
            count = f"{len(item.raised_by)} of {self.voters} verifiers"
            facts.append(
                Fact(
                    check="verify.discrepancy",
                    field=f"{item.file}:{item.line}",
                    expected=(
                        f"no finding raised by {self.threshold} or more of {self.voters} verifiers"
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


# -- the verifiers ------------------------------------------------------------------


class Verifier(Protocol):
    name: str

    def __call__(self, request: Request, prompt: str) -> Answer: ...


def _tail(text: str, lines: int = 2) -> str:
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept)[:300]


class CommandVerifier:
    """A command (an LLM CLI, a script) that reads the prompt on stdin and replies on stdout.

    The command line is split with `shlex` and run without a shell, in its
    own process group, from the project's rootdir; at `timeout` seconds the
    group is killed.
    """

    def __init__(self, command: str, timeout: float, cwd: Path) -> None:
        self.command = command
        self.name = command
        self.timeout = timeout
        self.cwd = cwd

    def __call__(self, request: Request, prompt: str) -> Answer:
        started = time.monotonic()

        def failed(error: str) -> Answer:
            return Answer(self.name, time.monotonic() - started, error=error)

        try:
            argv = shlex.split(self.command)
        except ValueError as exc:
            return failed(f"cannot split the command line: {exc}")
        if not argv:
            return failed("empty command")
        try:
            process = subprocess.Popen(
                argv,
                cwd=str(self.cwd),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return failed(f"cannot start: {exc}")
        try:
            out, err = process.communicate(prompt.encode("utf-8"), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            return failed(f"timed out after {self.timeout:g}s (--quest-verify-timeout)")
        except BaseException:
            # Interrupted (Ctrl-C): the verifier runs in its own session.
            _kill_group(process)
            raise
        seconds = time.monotonic() - started
        stdout = out.decode("utf-8", errors="replace")
        if process.returncode != 0:
            stderr = err.decode("utf-8", errors="replace")
            detail = _tail(stderr) or _tail(stdout)
            return Answer(
                self.name,
                seconds,
                error=f"exited with status {process.returncode}"
                + (f": {detail}" if detail else ""),
            )
        return answer_from_text(self.name, seconds, stdout, len(request.questions))


def answer_from_text(name: str, seconds: float, text: str, questions: int) -> Answer:
    """An `Answer` from a reply text: its findings, or the protocol error."""
    try:
        reply = parse_reply(text)
    except ProtocolError as exc:
        return Answer(name, seconds, error=f"reply outside the protocol: {exc}")
    if len(reply.questions) != questions:
        return Answer(
            name,
            seconds,
            error=f"reply outside the protocol: {questions} questions asked, "
            f"{len(reply.questions)} answered",
        )
    return Answer(name, seconds, findings=list(reply.findings), status=reply.status)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    try:
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pass  # a grandchild left the process group and holds the pipes: leave it


class HookVerifier:
    """One plugin's ``pytest_quest_verify`` implementation, called on its own.

    It may return a list of `Finding` (or of dicts with ``file``, ``line``,
    ``quote``, ``reason``, or of discrepancy strings), a reply text in the
    protocol, or None to abstain.  An exception is an error of this verifier.
    """

    def __init__(self, name: str, function: Callable[..., Any], argnames: Sequence[str]) -> None:
        self.name = name
        self.function = function
        self.argnames = list(argnames)

    def __call__(self, request: Request, prompt: str) -> Answer:
        arguments = {
            "quest": request.quest,
            "function_source": request.function_source,
            "tests": list(request.tests),
            "questions": list(request.questions),
            "prompt": prompt,
        }
        started = time.monotonic()
        try:
            unknown = [name for name in self.argnames if name not in arguments]
            if unknown:
                raise TypeError(f"unknown hook argument(s) {', '.join(unknown)}")
            returned = self.function(*[arguments[name] for name in self.argnames])
        except Exception as exc:  # noqa: BLE001 -- a plugin bug is REVIEW, not a crash
            return Answer(
                self.name, time.monotonic() - started, error=f"{type(exc).__name__}: {exc}"
            )
        seconds = time.monotonic() - started
        if returned is None:
            return Answer(self.name, seconds, abstained=True)
        if isinstance(returned, str):
            return answer_from_text(self.name, seconds, returned, len(request.questions))
        try:
            findings = [_hook_finding(item) for item in returned]
        except (TypeError, ProtocolError) as exc:
            return Answer(self.name, seconds, error=f"unusable findings: {exc}")
        status = STATUS_CORRECTIONS if findings else STATUS_CLEAN
        return Answer(self.name, seconds, findings=findings, status=status)


def _hook_finding(item: Any) -> Finding:
    if isinstance(item, Finding):
        return item
    if isinstance(item, (dict, str)):
        return _finding_from_json(item)
    raise TypeError(f"a finding must be a Finding, a dict or a string, not {type(item).__name__}")


def hook_verifiers(pluginmanager: Any, rootdir: Path | None = None) -> list[HookVerifier]:
    """One verifier per plugin implementing ``pytest_quest_verify``, in pluggy's call order.

    A conftest plugin is named by its path relative to `rootdir`.
    """
    caller = getattr(pluginmanager.hook, "pytest_quest_verify", None)
    if caller is None:
        return []
    verifiers = []
    # pluggy calls the last registered first; so do we, one at a time.
    for impl in reversed(caller.get_hookimpls()):
        if impl.hookwrapper or impl.wrapper:
            continue
        name = str(impl.plugin_name)
        if rootdir is not None and os.path.isabs(name):
            name = normalize_path(name, rootdir)
        verifiers.append(HookVerifier(f"plugin {name}", impl.function, list(impl.argnames)))
    return verifiers


def run_verification(
    request: Request,
    verifiers: Sequence[Verifier],
    threshold: int | None,
    rootdir: Path | None = None,
) -> Verification:
    """Ask every verifier in isolation (commands in parallel), re-check, and vote."""
    prompt = build_prompt(request)
    commands = [v for v in verifiers if isinstance(v, CommandVerifier)]
    others = [v for v in verifiers if not isinstance(v, CommandVerifier)]
    answers: dict[int, Answer] = {}
    if commands:
        with ThreadPoolExecutor(max_workers=len(commands)) as pool:
            futures = {
                id(verifier): pool.submit(verifier, request, prompt) for verifier in commands
            }
            for verifier in others:
                answers[id(verifier)] = verifier(request, prompt)
            for key, future in futures.items():
                answers[key] = future.result()
    else:
        for verifier in others:
            answers[id(verifier)] = verifier(request, prompt)
    ordered = [answers[id(verifier)] for verifier in verifiers]
    return vote(ordered, request.files, threshold, len(request.questions), rootdir)


def configured_verifiers(config: Any, options: QuestOptions, rootdir: Path) -> list[Verifier]:
    """The verifier commands, then the plugin verifiers; usage errors for a setup that cannot work.

    ``submit`` calls it before running any test, so that a bad setup costs nothing.
    """
    verifiers: list[Verifier] = [
        CommandVerifier(command, options.verify_timeout, rootdir)
        for command in options.verifier_cmds
    ]
    verifiers += hook_verifiers(config.pluginmanager, rootdir)
    # A verifier's vote is counted by its name: the same command twice is two voters.
    seen: dict[str, int] = {}
    for verifier in verifiers:
        seen[verifier.name] = seen.get(verifier.name, 0) + 1
        if seen[verifier.name] > 1:
            verifier.name = f"{verifier.name} #{seen[verifier.name]}"
    if not verifiers:
        raise QuestUsageError(
            "verification is on but there is no verifier: pass --quest-verifier-cmd CMD (or "
            "set quest_verifier_cmds in [tool.pytest.ini_options]), install a plugin "
            "implementing pytest_quest_verify, or turn it off with --quest-verify off"
        )
    if options.verify_threshold is not None and options.verify_threshold > len(verifiers):
        raise QuestUsageError(
            f"--quest-verify-threshold {options.verify_threshold} asks for more verifiers "
            f"than the {len(verifiers)} configured; lower it or add verifiers"
        )
    for command in options.verifier_cmds:
        try:
            if not shlex.split(command):
                raise ValueError("empty command")
        except ValueError as exc:
            raise QuestUsageError(
                f"verifier command {command!r} cannot be split into arguments ({exc}); "
                "fix --quest-verifier-cmd or quest_verifier_cmds"
            ) from None
    return verifiers


def verify_submission(
    config: Any,
    options: QuestOptions,
    rootdir: Path,
    quest: Quest,
    current: FunctionFacts,
    changed_files: Sequence[str],
    result: GateResult,
) -> tuple[GateResult, dict[str, Any]]:
    """L2 for a submission L1 would PASS: the (possibly raised) result and the record.

    The record goes to ``Quest.extra["verification"]``.  Raises
    `QuestUsageError` when verification is on without any verifier, or the
    threshold asks for more verifiers than there are.
    """
    pattern = excluded_by(quest, options.verify_exclude)
    if pattern is not None:
        return result, {"result": "excluded", "excluded_by": pattern}
    verifiers = configured_verifiers(config, options, rootdir)
    request = build_request(
        rootdir, quest, current, current.covering_tests, changed_files, options.verify_questions
    )
    verification = run_verification(request, verifiers, options.verify_threshold, rootdir)
    return verification.judge(result), verification.record()


__all__ = [
    "QUESTIONS",
    "Answer",
    "CommandVerifier",
    "Finding",
    "HookVerifier",
    "ProtocolError",
    "Reply",
    "Request",
    "TestSource",
    "Verification",
    "build_prompt",
    "build_request",
    "configured_verifiers",
    "excluded_by",
    "format_reply",
    "parse_finding",
    "parse_reply",
    "recheck",
    "run_verification",
    "verify_submission",
    "vote",
]
