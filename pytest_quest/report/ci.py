"""The CI ratchet check's report: text, JSON, GitHub annotations, step summary.

Turns the :class:`CheckReport` of :func:`pytest_quest.core.ratchet.check_ratchet`
into what CI shows; under GitHub Actions also ``::error`` workflow commands and
a Markdown summary in ``$GITHUB_STEP_SUMMARY``.  It runs no test and never
writes the ratchet file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pytest_quest.core.model import Fact, Ratchet
from pytest_quest.core.ratchet import CheckReport, Regression, since
from pytest_quest.core.rejudge import RejudgeReport
from pytest_quest.core.run import CollectionError
from pytest_quest.report.escape import (
    escape_data,
    escape_property,
    md_code,
    md_text,
    visible,
)
from pytest_quest.report.text import counted, summarised

# Exit statuses of `check`.  1 and 2 are pytest's own TESTS_FAILED and
# INTERRUPTED: a check never hides a failing suite behind a green ratchet.
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 2

FAILING_OUTCOMES = ("failed", "error")


@dataclass
class CheckOutcome:
    """What `check` says: the JSON object (without schema/command), text lines, exit status."""

    data: dict[str, Any]
    lines: list[str] = field(default_factory=list)
    exitcode: int = EXIT_OK


#: How many functions changed since their PASS the text names before "and N more".
CHANGED_SHOWN = 5


def regression_json(regression: Regression) -> dict[str, Any]:
    quest = regression.quest
    return {
        "id": quest.id,
        "file": quest.file,
        "qualname": quest.qualname,
        "lines": [quest.first, quest.last],
        "passed_at": quest.passed_at,
        "baseline": quest.baseline,
        "changed": regression.changed,
        "facts": [fact.to_dict() for fact in regression.facts],
    }


def unnamed(message: str, quest_id: str) -> str:
    """A regression fact's `message` without the quest and date it carries for a CI log's
    annotation (core/ratchet.py `name_regression`), where it is listed under its quest."""
    marker = f" [{quest_id}, "
    at = message.rfind(marker)
    if at >= 0 and message.endswith("]") and "]" not in message[at + len(marker) : -1]:
        return message[:at]
    return message


def failing_tests(outcomes: Mapping[str, str]) -> list[str]:
    return sorted(nodeid for nodeid, outcome in outcomes.items() if outcome in FAILING_OUTCOMES)


def interrupted(errors: list[CollectionError], ratchet: Ratchet) -> CheckOutcome:
    """A collection error: the suite did not run, so no regression can be told apart."""
    where = [f"{e.file}:{e.line}" if e.line else e.file for e in errors]
    lines = [
        (
            f"check: not run: {counted(len(errors), 'collection error')} stopped the suite; "
            "fix them and run the check again"
        )
    ]
    shown = 10  # a long list is summarised; the JSON output keeps every error
    lines += [f"  {place}: {error.message}" for place, error in zip(where[:shown], errors)]
    if len(errors) > shown:
        lines.append(f"  ... and {len(errors) - shown} more")
    data = {
        "ok": False,
        "checked": 0,
        "regressions": [],
        "changed": [],
        "untracked": [],
        "strict": False,
        "tests_failed": [],
        "collection_errors": [
            {"file": e.file, "line": e.line, "message": e.message} for e in errors
        ],
        "rejudged": None,
        "person_actions": [],
        "counts": ratchet.counts(),
        "remaining": ratchet.remaining,
    }
    return CheckOutcome(data, lines, EXIT_INTERRUPTED)


def check_outcome(
    report: CheckReport,
    ratchet: Ratchet,
    strict: bool,
    outcomes: Mapping[str, str],
) -> CheckOutcome:
    """The check's verdict: exit 1 on a regression, a failing test, or (strict) untracked code."""
    failed = failing_tests(outcomes)
    strict_failure = strict and bool(report.untracked)
    ok = not report.regressions and not failed and not strict_failure
    lines = [
        f"check: {counted(report.checked, 'PASS function')} re-measured, {len(report.regressions)} regressed"
    ]
    for regression in report.regressions:
        quest = regression.quest
        note = ", body changed since" if regression.changed else ""
        lines.append(f"REGRESSION {quest.id} ({since(quest)}{note})")
        lines += [
            f"  {replace(fact, message=unnamed(fact.message, quest.id)).text()}"
            for fact in regression.facts
        ]
    if report.changed:
        # One line however many: a refactoring changes dozens; JSON's `changed` lists them all.
        shown = summarised(list(report.changed), first=CHANGED_SHOWN)
        more = (
            " (--quest-format json lists them all)" if len(report.changed) > CHANGED_SHOWN else ""
        )
        lines.append(
            f"changed since PASS, still fully covered: "
            f"{counted(len(report.changed), 'function')}: {shown}{more}"
        )
    if report.untracked:
        verdict = "fail the check (--quest-strict)" if strict else "not checked"
        lines.append(
            f"untracked: {counted(len(report.untracked), 'function')} "
            f"{'is' if len(report.untracked) == 1 else 'are'} not in the ratchet file "
            f"({verdict}); `pytest --quest scan` adds them:"
        )
        lines += [f"  {qid}" for qid in report.untracked]
    if failed:
        lines.append(f"{counted(len(failed), 'test')} failed: the check fails with them")
        lines += [f"  {nodeid}" for nodeid in failed]
    lines.append("check: OK" if ok else "check: FAILED")
    data = {
        "ok": ok,
        "checked": report.checked,
        "regressions": [regression_json(r) for r in report.regressions],
        "changed": list(report.changed),
        "untracked": list(report.untracked),
        "strict": strict,
        "tests_failed": failed,
        "collection_errors": [],
        "rejudged": None,
        "person_actions": [],
        "counts": ratchet.counts(),
        "remaining": ratchet.remaining,
    }
    return CheckOutcome(data, lines, EXIT_OK if ok else EXIT_FAILED)


def add_rejudge(outcome: CheckOutcome, report: RejudgeReport | None) -> None:
    """The re-judge of the PASS quests new since the base, into `outcome` (exit 1 if one fails)."""
    if report is None:
        return
    failed = report.failed
    outcome.data["rejudged"] = {
        "base": report.base,
        "base_found": report.found,
        "mutants": report.mutants,
        "seconds": report.seconds,
        "count": len(report.results),
        "failed": len(failed),
        "quests": [result.to_dict() for result in report.results],
    }
    outcome.data["person_actions"] = [action.to_dict() for action in report.person_actions]
    verdict = (
        outcome.lines.pop() if outcome.lines and outcome.lines[-1].startswith("check: ") else ""
    )
    note = "" if report.found else " (no ratchet file there: every PASS is new)"
    mutants = "" if report.mutants else ", mutants off"
    lines = [
        f"re-judged against {report.base}{note}: {len(report.results)} PASS new or changed "
        f"since the base, {len(failed)} do not hold ({report.seconds:g}s{mutants})"
    ]
    for result in report.results:
        lines.append(f"  {'ok' if result.holds else 'REGRESSION'} {result.id} ({result.reason})")
        lines += [f"    {fact.text()}" for fact in result.facts]
    if report.person_actions:
        lines.append(f"person actions since the base ({len(report.person_actions)}): review them")
        lines += [f"  {action.text()}" for action in report.person_actions]
    else:
        lines.append("person actions since the base: none")
    if failed:
        outcome.data["ok"] = False
        outcome.exitcode = EXIT_FAILED
        verdict = "check: FAILED"
    outcome.lines += lines
    if verdict:
        outcome.lines.append(verdict)


def add_since(outcome: CheckOutcome, since: dict[str, Any], head: str) -> None:
    """The functions changed since ``--quest-since`` that are not PASS (exit 1 with --quest-require-pass)."""
    outcome.data["since"] = since
    failing = since["not_pass"]
    verdict = (
        outcome.lines.pop() if outcome.lines and outcome.lines[-1].startswith("check: ") else ""
    )
    required = "required" if since["require_pass"] else "not required (--quest-require-pass)"
    lines = [f"{head}; {len(failing)} not PASS (PASS {required})"]
    for item in failing:
        lines.append(f"  NOT PASS {item['id']} ({item['state']})")
        lines += [f"    {Fact.from_dict(fact).text()}" for fact in item["facts"]]
    if failing and since["require_pass"]:
        outcome.data["ok"] = False
        outcome.exitcode = EXIT_FAILED
        verdict = "check: FAILED"
    outcome.lines += lines
    if verdict:
        outcome.lines.append(verdict)


def since_annotations(since: dict[str, Any] | None) -> list[str]:
    """One ``::error`` (``::warning`` when not required) per changed function that is not PASS."""
    if not since:
        return []
    level = "error" if since["require_pass"] else "warning"
    commands = []
    for item in since["not_pass"]:
        for fact in item["facts"]:
            file, line = fact_location(Fact.from_dict(fact))
            commands.append(
                workflow_command(level, file, line, f"pytest-quest: {item['id']}", fact["message"])
            )
    return commands


def rejudge_annotations(report: RejudgeReport | None) -> list[str]:
    """One ``::error`` per fact of a PASS that does not hold; a notice per person action."""
    if report is None:
        return []
    commands = []
    for result in report.failed:
        commands += _fact_errors(f"pytest-quest re-judge: {result.id}", result.facts)
    for action in report.person_actions:
        commands.append(
            workflow_command(
                "notice",
                action.quest_id.split("::")[0] if "::" in action.quest_id else "quest.json",
                0,
                "pytest-quest: person action since the base",
                action.text(),
            )
        )
    return commands


# -- GitHub Actions ------------------------------------------------------------


def fact_location(fact: Fact) -> tuple[str, int]:
    """The file and line a fact points at: ``path:41`` or ``path:41->44`` -> (path, 41)."""
    where = fact.field.split("->")[0]
    path, _, line = where.rpartition(":")
    if not path or not line.isdigit():
        return fact.field, 0
    return path, int(line)


def workflow_command(level: str, file: str, line: int, title: str, message: str) -> str:
    """A workflow command, escaped as the runner reads them (toolkit's escapeData/escapeProperty)."""
    props = [f"file={escape_property(file)}"]
    if line:
        props.append(f"line={line}")
    props.append(f"title={escape_property(title)}")
    return f"::{level} {','.join(props)}::{escape_data(message)}"


def _fact_errors(title: str, facts: list[Fact]) -> list[str]:
    """An ``::error`` titled `title` at each fact's place."""
    return [
        workflow_command("error", *fact_location(fact), title, fact.message or fact.text())
        for fact in facts
    ]


def workflow_annotations(report: CheckReport, strict: bool) -> list[str]:
    """One ``::error`` per regression fact; untracked functions as warnings (errors if strict)."""
    commands = []
    for regression in report.regressions:
        title = f"pytest-quest regression: {regression.quest.qualname}"
        commands += _fact_errors(title, regression.facts)
    for qid in report.untracked:
        file = qid.split("::")[0]
        commands.append(
            workflow_command(
                "error" if strict else "warning",
                file,
                0,
                "pytest-quest: untracked function",
                f"{qid} is not in the ratchet file; run `pytest --quest scan` to add it",
            )
        )
    return commands


def step_summary(outcome: CheckOutcome) -> str:
    """The Markdown appended to ``$GITHUB_STEP_SUMMARY``."""
    data = outcome.data
    status = "passed" if data["ok"] else "failed"
    out = [f"## pytest-quest check {status}", ""]
    counts = data["counts"]
    out.append(
        f"{counted(data['checked'], 'PASS function')} re-measured, {len(data['regressions'])} regressed; "
        f"ratchet: {counts.get('PASS', 0)} PASS, {counts.get('TODO', 0)} TODO, "
        f"{counts.get('REVIEW', 0)} REVIEW, {counts.get('DONE', 0)} DONE."
    )
    out.append("")
    out += totals_pie(counts)
    if data["collection_errors"]:
        out += ["### Collection errors", ""]
        for error in data["collection_errors"]:
            where = f"{error['file']}:{error['line']}"
            out.append(f"- {md_code(where, cell=False)}: {md_text(error['message'])}")
        out.append("")
    if data["regressions"]:
        # One entry per quest, its facts under it: the quest and its date said once.
        out += ["### Regressions", ""]
        for regression in data["regressions"]:
            passed = md_text(regression["passed_at"] or "?")
            changed = ", body changed since" if regression["changed"] else ""
            out.append(f"- {md_code(regression['id'], cell=False)}: PASS since {passed}{changed}")
            out += [
                f"  - {md_code(fact['field'], cell=False)}: "
                f"{md_text(unnamed(fact.get('message') or fact['actual'], regression['id']))}"
                for fact in regression["facts"]
            ]
        out.append("")
    if data["changed"]:
        out += ["### Changed since PASS, still fully covered", ""]
        out += [f"- {md_code(qid, cell=False)}" for qid in data["changed"]]
        out.append("")
    if data["untracked"]:
        note = " (fail under --quest-strict)" if data["strict"] else ""
        out += [f"### Untracked functions{note}", ""]
        out += [f"- {md_code(qid, cell=False)}" for qid in data["untracked"]]
        out.append("")
    if data["tests_failed"]:
        out += ["### Failing tests", ""]
        out += [f"- {md_code(nodeid, cell=False)}" for nodeid in data["tests_failed"]]
        out.append("")
    out += _since_summary(data.get("since"))
    out += _rejudge_summary(data)
    return "\n".join(out) + "\n"


def _since_summary(since: dict[str, Any] | None) -> list[str]:
    """The functions changed since ``--quest-since`` that are not PASS, as a table."""
    if not since:
        return []
    failing = since["not_pass"]
    required = " (required to be PASS)" if since["require_pass"] else ""
    out = [
        f"### Changed since `{md_text(since['ref'])}`{required}",
        "",
        f"{counted(len(since['changed']), 'function')} changed, {len(failing)} not PASS.",
        "",
    ]
    if failing:
        out += ["| quest | state | where | fact |", "|---|---|---|---|"]
        for item in failing:
            for fact in item["facts"]:
                out.append(
                    f"| `{md_text(item['id'])}` | {item['state']} | `{md_text(fact['field'])}` | "
                    f"{md_text(fact['actual'])} |"
                )
        out.append("")
    return out


def totals_pie(counts: dict[str, int]) -> list[str]:
    """The quests by state as a Mermaid pie chart (GitHub renders it in a step summary).

    States with no quest are left out; nothing at all when there is no quest.
    """
    slices = [(state, n) for state, n in counts.items() if n > 0]
    if not slices:
        return []
    out = ["```mermaid", "pie showData title Quests by state"]
    out += [f'    "{visible(state).replace(chr(34), chr(39))}" : {n}' for state, n in slices]
    return [*out, "```", ""]


def _rejudge_summary(data: dict[str, Any]) -> list[str]:
    rejudged = data.get("rejudged")
    if not rejudged:
        return []
    out = [
        f"### Re-judged against {md_code(rejudged['base'], cell=False)}",
        "",
        f"{rejudged['count']} PASS new or changed since the base, {rejudged['failed']} do not "
        f"hold ({rejudged['seconds']:g}s).",
        "",
    ]
    if rejudged["quests"]:
        out += ["| quest | why | verdict | fact |", "|---|---|---|---|"]
        for quest in rejudged["quests"]:
            verdict = "holds" if quest["holds"] else f"{quest['verdict']} ({quest['step']})"
            facts = quest["facts"] or [{}]
            for fact in facts:
                text = md_text(fact.get("message") or fact.get("actual") or "")
                out.append(
                    f"| {md_code(quest['id'])} | {md_text(quest['reason'])} | {md_text(verdict)} | {text} |"
                )
        out.append("")
    out += [f"### Person actions since the base ({len(data['person_actions'])})", ""]
    for action in data["person_actions"]:
        reason = md_text(action.get("reason") or "(no reason recorded)")
        out.append(
            f"- {md_text(action['action'])} {md_code(action['id'], cell=False)} by "
            f"{md_text(action.get('by') or '?')} at {md_text(action['at'])}: {reason}"
        )
    if not data["person_actions"]:
        out.append("- none")
    out.append("")
    return out
