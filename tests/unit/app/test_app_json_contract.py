"""Unambiguous JSON: `remaining` and `done` in every next/submit object,
and `next --quest-id` says that it changed the active quest."""

from __future__ import annotations

from typing import Any

import pytest
from app_calc import CLAMP, SIGN, CalcProject

from pytest_quest.app import submit as submit_module
from pytest_quest.app.next import next_quest
from pytest_quest.app.submit import submit
from pytest_quest.core.run import RunReport


def test_next_has_remaining_and_done(calc: CalcProject) -> None:
    data = next_quest(calc.context("next")).data
    assert (data["remaining"], data["done"]) == (2, False)


def test_next_says_when_it_made_a_quest_active(calc: CalcProject) -> None:
    first = next_quest(calc.context("next"))
    assert (first.data["active_changed"], first.data["previous_active"]) == (True, None)
    again = next_quest(calc.context("next"))
    assert (again.data["active_changed"], again.data["previous_active"]) == (False, SIGN)
    assert not any("active quest" in line for line in again.lines)
    switched = next_quest(calc.context("next", quest_id=CLAMP))
    assert (switched.data["active_changed"], switched.data["previous_active"]) == (True, SIGN)
    assert f"note: the active quest is now {CLAMP} (was {SIGN})" in switched.lines
    assert calc.context("next").store.load().active == CLAMP


def test_submit_fail_has_done_false_and_says_next_quest_is_null_because_it_is_still_todo(
    calc: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    calc.test("test_clamp", "from pkg.calc import clamp\n\ndef test_low():\n    pass\n")

    def run_child(selection: list[str], *args: Any, **kwargs: Any) -> Any:
        return RunReport(completed=False, problem="the run did not complete"), None

    monkeypatch.setattr(submit_module, "run_child", run_child)
    next_quest(calc.context("next", quest_id=CLAMP))
    data = submit(calc.context("submit")).data
    assert data["verdict"] == "REVIEW"
    assert (data["remaining"], data["done"]) == (1, False)
    assert data["next_quest"]["id"] == SIGN


def test_next_lists_the_queue_in_its_order_to_pass_over_a_quest(calc: CalcProject) -> None:
    first = next_quest(calc.context("next")).data
    assert first["queue"] == [SIGN, CLAMP]
    # `--quest-id` with the queue's second id passes over the first; the queue stays in order.
    switched = next_quest(calc.context("next", quest_id=CLAMP)).data
    assert (switched["quest"]["id"], switched["queue"]) == (CLAMP, [SIGN, CLAMP])


def test_next_gives_the_submit_command_as_arguments(calc: CalcProject) -> None:
    quest = next_quest(calc.context("next", quest_id=CLAMP)).data["quest"]
    assert quest["submit_args"] == [
        "--quest",
        "submit",
        "--quest-id",
        CLAMP,
        "--quest-format",
        "json",
    ]
    assert quest["submit"] == "pytest " + " ".join(quest["submit_args"])
