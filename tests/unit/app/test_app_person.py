"""`reopen` and `accept` in-process: a person's action, recorded with who and when."""

from __future__ import annotations

import getpass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from app_calc import CALC, SIGN, CalcProject

from pytest_quest.app.context import Context, RunData
from pytest_quest.app.person import accept, reopen, who
from pytest_quest.app.submit import Judgement, record
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult, coverage_facts
from pytest_quest.core.model import Fact, Verdict
from pytest_quest.core.run import RunReport
from pytest_quest.core.seal import seal_facts
from pytest_quest.engine.source import facts_from_source


@pytest.fixture(autouse=True)
def git_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Quest Tester\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return config


@pytest.fixture(autouse=True)
def person_at_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A person gives a reason and types the quest id (the guard: test_person_powers.py)."""
    context = CalcProject.context

    def confirmed(
        self: CalcProject, command: str, run: RunData | None = None, **changes: Any
    ) -> Context:
        changes.setdefault("reason", "a person looked")
        ctx = context(self, command, run, **changes)
        ctx.person_terminal = lambda: SimpleNamespace(ask=lambda prompt: changes.get(command))
        return ctx

    monkeypatch.setattr(CalcProject, "context", confirmed)


def judged(project: CalcProject, verdict: Verdict, **options: Any) -> None:
    sign = next(f for f in project.measured({}).functions if f.quest_id == SIGN)
    facts = coverage_facts(sign)
    if verdict is Verdict.REVIEW:
        facts = [Fact(check="identity.changed", field="src/pkg/calc.py:5", expected="", actual="")]
    record(
        project.context("submit", **options),
        quest=project.context("next").store.load().quests[SIGN],
        judgement=Judgement(GateResult(verdict, facts, "step"), sign, RunReport()),
        now="2026-01-01T00:00:00Z",
    )


def test_reopen_done_quest_resets_tries_and_records_who_and_when(calc: CalcProject) -> None:
    judged(calc, Verdict.FAIL, max_tries=1)
    assert calc.context("next").store.load().quests[SIGN].state.value == "DONE"
    output = reopen(calc.context("reopen", reopen=SIGN))
    assert output.exitcode == 0
    data = output.data
    assert (data["action"], data["by"]) == ("reopen", "Quest Tester")
    assert data["quest"]["state"] == "TODO" and data["quest"]["tries"] == 0
    assert data["remaining"] == 2
    assert output.lines[0] == f"reopen: {SIGN} is now TODO (by Quest Tester, {data['at']})"
    assert output.lines[-1] == f"work on it: pytest --quest next --quest-id {SIGN}"
    quest = calc.context("next").store.load().quests[SIGN]
    assert (quest.state.value, quest.tries) == ("TODO", 0)
    last = quest.history[-1]
    assert (last.action, last.at, last.by, last.note) == (
        "reopen",
        data["at"],
        "Quest Tester",
        "from DONE",
    )


def test_who_falls_back_to_the_os_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    assert who() == getpass.getuser()


def test_accept_review_quest(calc: CalcProject) -> None:
    judged(calc, Verdict.REVIEW)
    output = accept(calc.context("accept", accept=SIGN))
    assert output.exitcode == 0
    quest = calc.context("next").store.load().quests[SIGN]
    assert quest.state.value == "PASS"
    assert quest.passed_at == output.data["at"]
    assert (quest.history[-1].action, quest.history[-1].by) == ("accept", "Quest Tester")
    assert output.data["counts"]["PASS"] == 2


def test_reopen_review_reissues_for_current_code(calc: CalcProject) -> None:
    judged(calc, Verdict.REVIEW)
    calc.write_source("\n\n" + CALC.replace("return -1", "return -2"))  # changed and moved
    output = reopen(calc.context("reopen", reopen=SIGN))
    assert output.data["quest"]["lines"] == [7, 10]
    quest = calc.context("next").store.load().quests[SIGN]
    assert quest.history[-1].note == "from REVIEW"
    current = facts_from_source(SIGN, quest.file, calc.root, all_missing=False)
    assert current is not None and quest.fingerprint == current.fingerprint
    assert seal_facts(quest) == []  # re-sealed: a submit now compares with the new code


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"reopen": "src/pkg/calc.py::nope"}, "unknown quest id"),
        ({"accept": "src/pkg/calc.py::nope"}, "unknown quest id"),
        ({"accept": SIGN}, "only a REVIEW quest can be accepted"),
        ({"reopen": "src/pkg/calc.py::double"}, "only REVIEW and DONE quests"),
    ],
)
def test_bad_person_actions_write_nothing(
    calc: CalcProject, changes: dict[str, Any], message: str
) -> None:
    judged(calc, Verdict.FAIL, max_tries=1)
    before = (calc.root / "quest.json").read_bytes()
    use_case = reopen if "reopen" in changes else accept
    with pytest.raises(QuestUsageError, match=message):
        use_case(calc.context(next(iter(changes)), **changes))
    assert (calc.root / "quest.json").read_bytes() == before
