"""Person powers in-process: a typed confirmation at a (fake) terminal, a reason, a record."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from app_calc import CLAMP, DOUBLE, SIGN, CalcProject

from pytest_quest.app.context import Context
from pytest_quest.app.export import export
from pytest_quest.app.next import next_quest
from pytest_quest.app.person import accept, exclude, reopen, require_person
from pytest_quest.app.status import status
from pytest_quest.app.submit import Judgement, claim_quest, record
from pytest_quest.app.submit_output import said
from pytest_quest.core.errors import QuestError, QuestUsageError
from pytest_quest.core.gate import GateResult, coverage_facts
from pytest_quest.core.model import Fact, State, Verdict
from pytest_quest.core.person_log import person_actions_since
from pytest_quest.core.run import RunReport
from pytest_quest.engine.source import facts_from_source
from pytest_quest.report.json import Output, dumps

REASON = "dead code: sign() has no caller since the 2.0 API"


class TypedTerminal:
    """A person at a terminal who reads the question and types `answer`."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def ask(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answer


@pytest.fixture(autouse=True)
def git_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Quest Tester\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def at_terminal(ctx: Context, typed: str) -> TypedTerminal:
    terminal = TypedTerminal(typed)
    ctx.person_terminal = lambda: terminal
    return terminal


def act(
    project: CalcProject, action: str, quest_id: str, typed: str | None = None, **options: Any
) -> tuple[Output, TypedTerminal]:
    """Run `action` on `quest_id` as a person who types `typed` (default: the id)."""
    options.setdefault("reason", REASON)
    named: dict[str, Any] = {action: quest_id}
    ctx = project.context(action, **named, **options)
    terminal = at_terminal(ctx, quest_id if typed is None else typed)
    use_case = {"reopen": reopen, "accept": accept, "exclude": exclude}[action]
    return use_case(ctx), terminal


def judged(project: CalcProject, quest_id: str, verdict: Verdict, **options: Any) -> None:
    facts = next(f for f in project.measured({}).functions if f.quest_id == quest_id)
    found = coverage_facts(facts)
    if verdict is Verdict.REVIEW:
        found = [Fact(check="identity.changed", field="src/pkg/calc.py:5", expected="", actual="")]
    record(
        project.context("submit", **options),
        quest=project.context("next").store.load().quests[quest_id],
        judgement=Judgement(GateResult(verdict, found, "step"), facts, RunReport()),
        now="2026-01-01T00:00:00Z",
    )


def quest_file(project: CalcProject) -> bytes:
    return (project.root / "quest.json").read_bytes()


def current_fingerprint(project: CalcProject, quest_id: str) -> str:
    facts = facts_from_source(quest_id, "src/pkg/calc.py", project.root, all_missing=False)
    assert facts is not None
    return facts.fingerprint


# -- the guard -------------------------------------------------------------------------


def test_exclude_confirmed_is_recorded_with_who_when_reason_and_fingerprint(
    calc: CalcProject,
) -> None:
    output, terminal = act(calc, "exclude", SIGN)
    assert output.exitcode == 0
    (prompt,) = terminal.prompts
    assert f"quest {SIGN} (src/pkg/calc.py:5-8) is TODO" in prompt
    assert f"reason: {REASON}" in prompt
    assert prompt.endswith(f"type {SIGN} to confirm (anything else cancels): ")
    quest = calc.context("next").store.load().quests[SIGN]
    assert quest.state is State.EXCLUDED
    event = quest.history[-1]
    assert (event.action, event.by, event.reason, event.note) == (
        "exclude",
        "Quest Tester",
        REASON,
        "from TODO",
    )
    assert event.at == output.data["at"]
    assert event.fingerprint == current_fingerprint(calc, SIGN) != ""
    data = output.data
    assert (data["action"], data["by"], data["reason"]) == ("exclude", "Quest Tester", REASON)
    assert data["fingerprint"] == event.fingerprint
    assert data["quest"]["state"] == "EXCLUDED"
    assert data["quest"]["excluded"] == {
        "by": "Quest Tester",
        "at": event.at,
        "reason": REASON,
        "fingerprint": event.fingerprint,
    }
    assert output.lines[0] == f"exclude: {SIGN} is now EXCLUDED (by Quest Tester, {event.at})"
    assert output.lines[1] == f"reason: {REASON}"


@pytest.mark.parametrize("typed", ["", "y", "yes", CLAMP, SIGN + "x", SIGN.upper()])
def test_a_wrong_confirmation_changes_nothing(calc: CalcProject, typed: str) -> None:
    before = quest_file(calc)
    with pytest.raises(QuestUsageError, match="confirmation typed does not match") as error:
        act(calc, "exclude", SIGN, typed=typed)
    assert "--quest-exclude" in str(error.value) and "nothing was changed" in str(error.value)
    assert quest_file(calc) == before


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_a_missing_reason_is_refused_before_anyone_is_asked(
    calc: CalcProject, reason: str | None
) -> None:
    judged(calc, SIGN, Verdict.REVIEW)
    before = quest_file(calc)
    for action in ("exclude", "accept", "reopen"):
        with pytest.raises(QuestUsageError, match=f"--quest-{action} needs a reason") as error:
            _, _terminal = act(calc, action, SIGN, reason=reason)
        assert '--quest-reason "..."' in str(error.value)
    assert quest_file(calc) == before


@pytest.mark.parametrize("action", ["exclude", "accept", "reopen"])
def test_without_a_terminal_a_person_action_exits_4_naming_it(
    calc: CalcProject, action: str
) -> None:
    judged(calc, SIGN, Verdict.REVIEW)
    before = quest_file(calc)
    use_case = {"reopen": reopen, "accept": accept, "exclude": exclude}[action]
    # The default context has no terminal: what a script or an agent's shell gets.
    named: dict[str, Any] = {action: SIGN}
    ctx = calc.context(action, **named, reason=REASON)
    with pytest.raises(QuestUsageError) as error:
        use_case(ctx)
    message = str(error.value)
    assert message.startswith(f"--quest-{action} is a person action: a person must run it")
    assert "no controlling terminal" in message
    assert quest_file(calc) == before


def test_the_guard_confirms_a_policy_change_too(calc: CalcProject) -> None:
    ctx = calc.context("status", reason="mutants are too slow on this legacy module")
    terminal = at_terminal(ctx, "mutants=off")
    person = require_person(ctx, "--quest-policy", "mutants=off", ["mutants: on -> off"])
    assert (person.by, person.reason) == (
        "Quest Tester",
        "mutants are too slow on this legacy module",
    )
    assert terminal.prompts[0].startswith("mutants: on -> off\n")
    terminal.answer = "mutants=on"
    with pytest.raises(QuestUsageError, match="--quest-policy: the confirmation typed does not"):
        require_person(ctx, "--quest-policy", "mutants=off")


# -- exclude: out of the work, visible, undone by reopen, never on a PASS ---------------


def test_an_excluded_quest_is_not_remaining_and_next_passes_it_by(calc: CalcProject) -> None:
    assert calc.context("next").store.load().remaining == 2
    output, _ = act(calc, "exclude", SIGN)
    assert output.data["remaining"] == 1
    assert output.data["counts"] == {"TODO": 1, "PASS": 1, "REVIEW": 0, "DONE": 0, "EXCLUDED": 1}
    shown = next_quest(calc.context("next"))
    assert shown.data["quest"]["id"] == CLAMP
    with pytest.raises(QuestUsageError, match="is EXCLUDED and cannot be worked on"):
        next_quest(calc.context("next", quest_id=SIGN))
    with pytest.raises(QuestUsageError, match="is EXCLUDED and refuses resubmission$"):
        claim_quest(calc.context("submit", quest_id=SIGN))


def test_status_and_export_show_an_excluded_quest_with_its_reason(calc: CalcProject) -> None:
    output, _ = act(calc, "exclude", SIGN)
    at = output.data["at"]
    shown = status(calc.context("status", format="text"))
    assert shown.lines[0] == "3 quests: 1 TODO, 1 PASS, 0 REVIEW, 0 DONE, 1 EXCLUDED; 1 remaining"
    assert "taken out of the work by a person (EXCLUDED):" in shown.lines
    assert f"  {SIGN}  (src/pkg/calc.py:5-8)" in shown.lines
    assert f"    by Quest Tester at {at}: {REASON}" in shown.lines
    listed = status(calc.context("status")).data["quests"]
    quests = {q["id"]: q for q in listed}
    assert quests[SIGN]["state"] == "EXCLUDED"
    assert quests[SIGN]["excluded"]["reason"] == REASON
    assert "excluded" not in quests[CLAMP]
    for name in ("report.json", "report.csv", "report.md", "report.sarif"):
        export(calc.context("export", export_to=name))
    report = json.loads((calc.root / "report.json").read_text())
    exported = {q["id"]: q for q in report["quests"]}
    assert exported[SIGN]["excluded"]["by"] == "Quest Tester"
    assert report["counts"]["EXCLUDED"] == 1 and report["remaining"] == 1
    table = (calc.root / "report.csv").read_text().splitlines()
    rows = {row["id"]: row for row in csv.DictReader(table)}
    assert rows[SIGN]["state"] == "EXCLUDED"
    markdown = (calc.root / "report.md").read_text()
    assert "## EXCLUDED (1)" in markdown
    assert f"excluded by Quest Tester at {at}: {REASON}" in markdown
    sarif = json.loads((calc.root / "report.sarif").read_text())
    flagged = [r["partialFingerprints"]["questId/v1"] for r in sarif["runs"][0]["results"]]
    assert flagged == [CLAMP]  # excluded code is no finding


def test_reopen_undoes_an_exclusion(calc: CalcProject) -> None:
    act(calc, "exclude", SIGN)
    output, _ = act(calc, "reopen", SIGN, reason="it is called again since 2.1")
    assert output.data["quest"]["state"] == "TODO" and output.data["remaining"] == 2
    quest = calc.context("next").store.load().quests[SIGN]
    assert quest.state is State.TODO
    assert [(e.action, e.note) for e in quest.history[-2:]] == [
        ("exclude", "from TODO"),
        ("reopen", "from EXCLUDED"),
    ]
    assert quest.history[-1].reason == "it is called again since 2.1"
    assert quest.history[-1].fingerprint == current_fingerprint(calc, SIGN)


def test_a_pass_quest_cannot_be_excluded_and_nobody_is_asked(calc: CalcProject) -> None:
    before = quest_file(calc)
    ctx = calc.context("exclude", exclude=DOUBLE, reason=REASON)
    terminal = at_terminal(ctx, DOUBLE)
    with pytest.raises(QuestUsageError, match="is PASS; a PASS is locked and cannot be excluded"):
        exclude(ctx)
    assert terminal.prompts == []
    assert quest_file(calc) == before


def test_excluding_twice_is_refused(calc: CalcProject) -> None:
    act(calc, "exclude", SIGN)
    with pytest.raises(QuestUsageError, match="is already EXCLUDED"):
        act(calc, "exclude", SIGN)


def test_review_and_done_quests_can_be_excluded(calc: CalcProject) -> None:
    judged(calc, SIGN, Verdict.REVIEW)
    judged(calc, CLAMP, Verdict.FAIL, max_tries=1)
    act(calc, "exclude", SIGN)
    act(calc, "exclude", CLAMP)
    ratchet = calc.context("next").store.load()
    assert [ratchet.quests[q].history[-1].note for q in (SIGN, CLAMP)] == [
        "from REVIEW",
        "from DONE",
    ]


# -- every person action is recorded, and listed since a base ------------------------------


def test_accept_and_reopen_record_reason_and_fingerprint(calc: CalcProject) -> None:
    judged(calc, SIGN, Verdict.REVIEW)
    base = calc.context("next").store.load()
    output, _ = act(calc, "accept", SIGN, reason="the changed body is the bug fix")
    assert output.data["quest"]["state"] == "PASS"
    event = calc.context("next").store.load().quests[SIGN].history[-1]
    assert (event.action, event.reason) == ("accept", "the changed body is the bug fix")
    assert event.fingerprint == current_fingerprint(calc, SIGN)
    act(calc, "exclude", CLAMP)
    listed = person_actions_since(calc.context("next").store.load(), base)
    assert sorted((a.quest_id, a.action, a.by, a.reason) for a in listed) == [
        (CLAMP, "exclude", "Quest Tester", REASON),
        (SIGN, "accept", "Quest Tester", "the changed body is the bug fix"),
    ]


# -- an agent is never told about them -----------------------------------------------------


def test_next_and_submit_never_suggest_person_actions(calc: CalcProject) -> None:
    judged(calc, SIGN, Verdict.REVIEW)
    judged(calc, CLAMP, Verdict.FAIL, max_tries=1)
    ctx = calc.context("submit", quest_id=CLAMP)
    ratchet = ctx.store.load()
    result = GateResult(Verdict.FAIL, [], "3-coverage")
    outputs = [
        next_quest(calc.context("next")),
        said(ctx, CLAMP, result, State.DONE, ratchet),
        said(ctx, SIGN, GateResult(Verdict.REVIEW, [], "1-identity"), State.REVIEW, ratchet),
    ]
    errors = []
    for quest_id in (SIGN, CLAMP):
        with pytest.raises(QuestUsageError) as error:
            claim_quest(calc.context("submit", quest_id=quest_id))
        errors.append(str(error.value))
        with pytest.raises(QuestUsageError) as error:
            next_quest(calc.context("next", quest_id=quest_id))
        errors.append(str(error.value))
    shown = "\n".join(
        [*errors, *(dumps(o.data) for o in outputs), *(line for o in outputs for line in o.lines)]
    )
    for word in ("reopen", "accept", "exclude", "quest-reason", "quest-policy"):
        assert word not in shown


# -- the JSON keys are documented -----------------------------------------------------------

SCHEMA_DOC = Path(__file__).resolve().parents[3] / "docs" / "json-schema.md"


def documented(section: str) -> set[str]:
    """The backticked names in the first column of the tables of the section titled `section`."""
    keys: set[str] = set()
    inside = False
    for line in SCHEMA_DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            inside = line[3:].startswith(section)
        elif inside and line.startswith("| `"):
            keys.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return keys


def test_person_action_output_and_excluded_quests_are_documented(calc: CalcProject) -> None:
    output, _ = act(calc, "exclude", SIGN)
    common = {"counts", "remaining"}
    assert set(output.data) - common <= documented("reopen, accept, exclude")
    assert set(output.data["quest"]) <= documented("Rules")
    assert set(output.data["quest"]["excluded"]) == {"by", "at", "reason", "fingerprint"}
    assert '"EXCLUDED": n' in SCHEMA_DOC.read_text(encoding="utf-8")


def test_a_read_only_ratchet_file_is_refused_before_anyone_is_asked(calc: CalcProject) -> None:
    path = calc.root / "quest.json"
    path.chmod(0o444)
    ctx = calc.context("exclude", exclude=SIGN, reason=REASON)
    terminal = at_terminal(ctx, SIGN)
    with pytest.raises(QuestError, match="is read-only"):
        exclude(ctx)
    assert terminal.prompts == []
