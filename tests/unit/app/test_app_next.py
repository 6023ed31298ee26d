"""`next` in-process: the quest to work on, made active; no test runs, no try spent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_calc import CLAMP, SIGN, TEST_DOUBLE, CalcProject

from pytest_quest.app.next import next_quest
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.engine.codec import ratchet_to_dict


def test_scan_records_the_measured_functions(tmp_path: Path) -> None:
    project = CalcProject(tmp_path)
    data = project.scan()
    assert (data["added"], data["added_pass"], data["removed"]) == (
        [SIGN, CLAMP],
        ["src/pkg/calc.py::double"],
        [],
    )
    assert (data["remaining"], data["counts"]) == (
        2,
        {"TODO": 2, "PASS": 1, "REVIEW": 0, "DONE": 0, "EXCLUDED": 0},
    )
    assert data["tests_not_passed"] == []


def test_next_shows_the_first_todo_and_makes_it_active(calc: CalcProject) -> None:
    ctx = calc.context("next")
    before = ratchet_to_dict(ctx.store.load())["quests"]
    output = next_quest(ctx)
    assert output.exitcode == 0
    assert output.lines[0] == "3 quests: 2 TODO, 1 PASS, 0 REVIEW, 0 DONE; 2 remaining"
    assert f"quest {SIGN}" in output.lines
    assert "  where : src/pkg/calc.py:5-8" in output.lines
    assert "  state : TODO   tries: 0/3" in output.lines
    assert "    > 6 |     if x < 0:" in output.lines
    assert f"  submit: pytest --quest submit --quest-id {SIGN}" in output.lines
    data = output.data
    assert (data["remaining"], data["counts"]) == (
        2,
        {"TODO": 2, "PASS": 1, "REVIEW": 0, "DONE": 0, "EXCLUDED": 0},
    )
    quest = data["quest"]
    assert quest["id"] == SIGN
    assert (quest["file"], quest["qualname"], quest["lines"]) == ("src/pkg/calc.py", "sign", [5, 8])
    assert (quest["state"], quest["tries"], quest["max_tries"]) == ("TODO", 0, 3)
    assert quest["missing_lines"] == [6, 7, 8]
    assert quest["facts"][0] == {
        "check": "coverage.line",
        "field": "src/pkg/calc.py:6",
        "expected": "executed by a passing test",
        "actual": "never executed",
        "message": "line 6 not covered",
    }
    assert quest["example"]["kind"] == "neighbour"
    assert quest["example"]["test"] == TEST_DOUBLE
    assert "assert double(3) == 6" in quest["example"]["source"]
    assert quest["submit"] == f"pytest --quest submit --quest-id {SIGN} --quest-format json"
    assert quest["source"].splitlines()[1] == "> 6 |     if x < 0:"
    after = ratchet_to_dict(ctx.store.load())
    assert after["active"] == SIGN
    assert after["quests"] == before  # no try spent, nothing measured


def test_next_quest_id_makes_it_active_and_stays_active(tmp_path: Path) -> None:
    project = CalcProject(tmp_path)  # no tests at all: no neighbour to show
    project.scan(covered={})
    data = next_quest(project.context("next", quest_id=CLAMP)).data
    assert data["quest"]["id"] == CLAMP
    assert project.context("next").store.load().active == CLAMP
    example = data["quest"]["example"]
    assert example["kind"] == "skeleton"
    assert example["source"].startswith("from pkg.calc import clamp\n")
    # Without --quest-id, next keeps showing the active quest, not the first TODO.
    assert next_quest(project.context("next")).data["quest"]["id"] == CLAMP


def test_next_when_nothing_remains(tmp_path: Path) -> None:
    project = CalcProject(tmp_path)
    project.scan(covered={"double": ["t::a"], "sign": ["t::b"], "clamp": ["t::c"]})
    output = next_quest(project.context("next"))
    assert output.exitcode == 0
    assert output.lines == [
        "3 quests: 0 TODO, 3 PASS, 0 REVIEW, 0 DONE; 0 remaining",
        "nothing remains: every quest is settled",
    ]
    assert (output.data["quest"], output.data["remaining"]) == (None, 0)


def test_next_refuses_unknown_and_settled_quests(calc: CalcProject) -> None:
    with pytest.raises(QuestUsageError, match="unknown quest id 'nope'"):
        next_quest(calc.context("next", quest_id="nope"))
    with pytest.raises(QuestUsageError, match="is PASS and cannot be worked on"):
        next_quest(calc.context("next", quest_id="src/pkg/calc.py::double"))


def test_no_ratchet_file_is_a_usage_error(tmp_path: Path) -> None:
    project = CalcProject(tmp_path)
    with pytest.raises(QuestUsageError, match="run `pytest --quest scan` first"):
        next_quest(project.context("next"))


def test_nothing_remains_names_the_quests_that_wait_for_a_person(tmp_path: Path) -> None:
    from app_calc import settled

    project = CalcProject(tmp_path)
    settled(project)  # spare TODO, sign REVIEW, clamp DONE
    ctx = project.context("next")

    def drop_spare(ratchet: Any) -> None:
        del ratchet.quests["src/pkg/calc.py::spare"]
        ratchet.active = None

    ctx.store.update(drop_spare)
    output = next_quest(project.context("next"))
    assert output.data["done"] is True
    assert output.lines[-1] == (
        "nothing remains: every quest is settled; 1 REVIEW and 1 DONE wait for a person "
        "(`pytest --quest-status` lists them): nothing for an agent to do"
    )
