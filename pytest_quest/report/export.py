"""Reports of all quests for people and tools: JSON, CSV, Markdown and SARIF 2.1.0 (and HTML).

``export`` reports the ratchet file as it is; ``check --quest-export-to`` adds
the regressions it found (the check writes nothing to the ratchet file).  The
suffix picks the format; engine/outputs.py writes the file.  Pure renderers.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from pytest_quest.core.dispute import is_dispute
from pytest_quest.core.model import JSON_SCHEMA, Fact, Quest, Ratchet, State, arc_text
from pytest_quest.core.states import last_person_event
from pytest_quest.report.ci import fact_location
from pytest_quest.report.escape import md_code, md_text
from pytest_quest.report.text import counted

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# No `informationUri` (optional in SARIF 2.1.0): pytest-quest has no public
# address yet (not on PyPI, no public repository); add it when it has one.

CSV_COLUMNS = (
    "id",
    "file",
    "qualname",
    "first_line",
    "last_line",
    "state",
    "tries",
    "statements",
    "branches",
    "missing_lines",
    "missing_branches",
    "facts",
    "issued_at",
    "passed_at",
    "regression_facts",
    "dispute",
)


# -- renderers -------------------------------------------------------------------


def quest_rows(ratchet: Ratchet, regressions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    regressed = {r["id"]: len(r["facts"]) for r in regressions}
    rows = []
    for quest in ratchet.ordered():
        rows.append(
            {
                "id": quest.id,
                "file": quest.file,
                "qualname": quest.qualname,
                "first_line": quest.first,
                "last_line": quest.last,
                "state": quest.state.value,
                "tries": quest.tries,
                "statements": quest.statements,
                "branches": quest.branches,
                "missing_lines": " ".join(str(line) for line in quest.missing_lines),
                "missing_branches": " ".join(arc_text(arc) for arc in quest.missing_branches),
                "facts": len(quest.facts),
                "issued_at": quest.issued_at,
                "passed_at": quest.passed_at,
                "regression_facts": regressed.get(quest.id, 0),
                # A REVIEW that waits on a disputed mutant (core/dispute.py).
                "dispute": is_dispute(quest),
            }
        )
    return rows


def render_json(
    ratchet: Ratchet,
    quests: list[dict[str, Any]],
    regressions: list[dict[str, Any]] | None,
    generated_at: str,
) -> str:
    data = {
        "schema": JSON_SCHEMA,
        "kind": "export",
        "generated_at": generated_at,
        "counts": ratchet.counts(),
        "remaining": ratchet.remaining,
        "quests": quests,
        "regressions": regressions,
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def render_csv(ratchet: Ratchet, regressions: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in quest_rows(ratchet, regressions):
        writer.writerow(row)
    return buffer.getvalue()


def _md(text: object) -> str:
    # Markdown and HTML escaped, on one line: report/escape.py.
    return md_text(text)


def render_markdown(
    ratchet: Ratchet, regressions: list[dict[str, Any]] | None, generated_at: str
) -> str:
    counts = ratchet.counts()
    total = sum(counts.values())
    out = ["# pytest-quest report", "", f"Generated {generated_at}.", ""]
    out += ["| state | quests |", "|---|---:|"]
    out += [f"| {state.value} | {counts[state.value]} |" for state in State]
    out += [f"| total | {total} |", "", f"Remaining: {ratchet.remaining}.", ""]
    if regressions is not None:
        out += ["## Regressions", ""]
        if not regressions:
            out += ["None: every PASS function is still fully covered.", ""]
        for regression in regressions:
            since = _md(regression["passed_at"] or "?")
            out.append(f"### {md_code(regression['id'], cell=False)} (PASS since {since})")
            out.append("")
            out += [
                f"- {md_code(f['field'], cell=False)}: {_md(f.get('message') or f['actual'])}"
                for f in regression["facts"]
            ]
            out.append("")
    for state in (State.TODO, State.REVIEW, State.DONE, State.EXCLUDED, State.PASS):
        quests = [q for q in ratchet.ordered() if q.state is state]
        if not quests:
            continue
        out += [f"## {state.value} ({len(quests)})", ""]
        out += ["| quest | lines | tries | missing | facts |", "|---|---|---:|---|---|"]
        for quest in quests:
            missing = ", ".join(
                [str(line) for line in quest.missing_lines]
                + [arc_text(arc) for arc in quest.missing_branches]
            )
            facts = "; ".join(_md(fact.text()) for fact in quest.facts[:3])
            if len(quest.facts) > 3:
                facts += f"; and {len(quest.facts) - 3} more"
            excluded = last_person_event(quest, "exclude")
            if quest.state is State.EXCLUDED and excluded is not None:
                facts = _md(f"excluded by {excluded.by} at {excluded.at}: {excluded.reason}")
            if is_dispute(quest):
                facts = f"(disputed mutant) {facts}"
            out.append(
                f"| {md_code(quest.id)} | {quest.first}-{quest.last} | {quest.tries} | "
                f"{missing} | {facts} |"
            )
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _location(uri: str, start: int, end: int | None = None, message: str = "") -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": max(start, 1)}
    if end is not None and end >= start:
        region["endLine"] = end
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
            "region": region,
        }
    }
    if message:
        location["message"] = {"text": message}
    return location


SARIF_RULES = [
    {
        "id": "quest/open",
        "name": "OpenQuest",
        "shortDescription": {"text": "Function not fully covered by passing tests"},
        "fullDescription": {
            "text": "A quest that is not PASS: some lines or branches of the function are "
            "not executed by any passing test (TODO), or it waits for a person (REVIEW), "
            "or it was closed after its tries (DONE)."
        },
        "defaultConfiguration": {"level": "warning"},
    },
    {
        "id": "quest/regression",
        "name": "CoverageRegression",
        "shortDescription": {"text": "A PASS function lost coverage"},
        "fullDescription": {
            "text": "A function locked as PASS in the ratchet is no longer fully covered "
            "(lines and branches) by passing tests, or is gone from the code."
        },
        "defaultConfiguration": {"level": "error"},
    },
]

_SARIF_LEVEL = {State.TODO: "warning", State.REVIEW: "note", State.DONE: "warning"}


def _open_result(quest: Quest) -> dict[str, Any]:
    missing = len(quest.missing_lines) + len(quest.missing_branches)
    text = f"{quest.state.value} quest {quest.id}"
    if missing:
        text += (
            f": {counted(len(quest.missing_lines), 'line')} and "
            f"{counted(len(quest.missing_branches), 'branch', 'branches')} "
            "not covered by passing tests"
        )
    if quest.state is State.REVIEW and quest.facts:
        text += f"; waiting for a person: {quest.facts[0].text()}"
    return {
        "ruleId": "quest/open",
        "ruleIndex": 0,
        "level": _SARIF_LEVEL[quest.state],
        "message": {"text": text},
        "locations": [_location(quest.file, quest.first, quest.last)],
        "relatedLocations": [
            _location(*fact_location(fact), message=fact.text())
            for fact in quest.facts
            if fact_location(fact)[1]
        ],
        "partialFingerprints": {"questId/v1": quest.id},
        "properties": {"state": quest.state.value, "tries": quest.tries},
    }


def _regression_result(regression: dict[str, Any]) -> dict[str, Any]:
    facts = [Fact.from_dict(f) for f in regression["facts"]]
    located = [(fact, *fact_location(fact)) for fact in facts]
    first_line = next((line for _, _, line in located if line), regression["lines"][0])
    return {
        "ruleId": "quest/regression",
        "ruleIndex": 1,
        "level": "error",
        "message": {
            "text": f"PASS function {regression['id']} regressed "
            f"(PASS since {regression['passed_at'] or '?'}): "
            + "; ".join(fact.message or fact.actual for fact in facts)
        },
        "locations": [_location(regression["file"], first_line)],
        "relatedLocations": [
            _location(file, line, message=fact.message or fact.actual)
            for fact, file, line in located
            if line
        ],
        "partialFingerprints": {"questId/v1": regression["id"]},
        "properties": {"changed": regression["changed"]},
    }


def render_sarif(
    ratchet: Ratchet,
    regressions: list[dict[str, Any]] | None,
    rootdir: Path,
    version: str,
) -> str:
    """SARIF 2.1.0: one result per open quest and one per regression, with locations."""
    # PASS is settled and EXCLUDED taken out of the work by a person: no finding.
    results = [
        _open_result(quest)
        for quest in ratchet.ordered()
        if quest.state not in (State.PASS, State.EXCLUDED)
    ]
    results += [_regression_result(regression) for regression in regressions or []]
    for index, result in enumerate(results):
        for number, location in enumerate(result.get("relatedLocations", [])):
            location["id"] = number
        if not result.get("relatedLocations"):
            result.pop("relatedLocations", None)
        result["properties"]["index"] = index
    root_uri = rootdir.resolve().as_uri().rstrip("/") + "/"
    driver = {"name": "pytest-quest", "version": version, "rules": SARIF_RULES}
    sarif = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root_uri}},
                "results": results,
            }
        ],
    }
    return json.dumps(sarif, indent=2) + "\n"


def render(
    fmt: str,
    ratchet: Ratchet,
    quests: list[dict[str, Any]],
    regressions: list[dict[str, Any]] | None,
    rootdir: Path,
    generated_at: str,
) -> str:
    """The report text in `fmt`; `regressions` is None when no check ran (plain export)."""
    if fmt == "json":
        return render_json(ratchet, quests, regressions, generated_at)
    if fmt == "csv":
        return render_csv(ratchet, regressions or [])
    if fmt == "md":
        return render_markdown(ratchet, regressions, generated_at)
    return render_sarif(ratchet, regressions, rootdir, _version())


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("pytest-quest")
    except Exception:
        return "0"
