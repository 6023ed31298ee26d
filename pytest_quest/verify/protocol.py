"""The verifiers' reply protocol: five tagged blocks (or one JSON object), parsed and formatted."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pytest_quest.core.words import counted, counted_words

STATUS_CLEAN = "verified-clean"
STATUS_CORRECTIONS = "verified-with-corrections"
BLOCKS = ("status", "questions", "answers", "discrepancies", "final")


class ProtocolError(ValueError):
    """A verifier's reply is outside the five-block protocol (and not valid JSON)."""


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
        raise ProtocolError(
            "missing "
            + counted_words(len(missing), "block")
            + ": "
            + ", ".join(f"<{name}>" for name in missing)
        )
    findings = _discrepancies(blocks["discrepancies"])
    return _checked(
        status=blocks["status"],
        questions=_items(blocks["questions"]),
        answers=_items(blocks["answers"]),
        findings=findings,
        final=blocks["final"].strip(),
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
    *,
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
        raise ProtocolError(
            f"{counted(len(questions), 'question')} but {counted(len(answers), 'answer')}"
        )
    for number, answer in enumerate(answers, 1):
        if not _ANSWER_RE.match(answer):
            raise ProtocolError(f"answer {number} does not start with yes or no: {answer[:60]!r}")
    if status == STATUS_CLEAN and findings:
        raise ProtocolError(
            f"status {STATUS_CLEAN} but {counted(len(findings), 'discrepancy', 'discrepancies')} listed"
        )
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
        raise ProtocolError(
            "JSON reply lacks " + counted_words(len(missing), "key") + ": " + ", ".join(missing)
        )

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
            findings.append(finding_from_json(item))
    elif raw is not None:
        raise ProtocolError("JSON reply: discrepancies must be a list, a string or null")
    return _checked(
        status=data["status"],
        questions=strings("questions"),
        answers=strings("answers"),
        findings=findings,
        final=data["final"].strip(),
    )


def finding_from_json(item: Any) -> Finding:
    """A `Finding` from one JSON discrepancy: an object (a bad ``line`` becomes 0) or a string."""
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
