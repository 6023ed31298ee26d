"""`next` measures a quest's function again when a test file changed since its facts (the
child is faked here: what it is handed and what `next` makes of what it measured)."""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

from app_calc import CLAMP, CalcProject

from pytest_quest.app.next import next_quest
from pytest_quest.app.remeasure import BUDGET_FLOOR, budget
from pytest_quest.core.model import Event, Fact, Quest, Ratchet
from pytest_quest.core.run import CollectionError, RunReport
from pytest_quest.engine.measure import MeasuredSource

TEST_CLAMP = "from pkg.calc import clamp\n\n\ndef test_low():\n    assert clamp(-1, 0, 5) == 0\n"


class FakeChild:
    """Stands for the gate's child: records each selection, measures clamp as `missing` says."""

    def __init__(self, project: CalcProject, missing: list[int]) -> None:
        self.project = project
        self.missing = missing
        self.selections: list[list[str]] = []
        self.timeouts: list[float] = []

    def __call__(self, ctx: Any, selection: list[str], quest: Quest) -> Any:
        self.selections.append(list(selection))
        self.timeouts.append(ctx.options.timeout)
        clamp = next(f for f in self.project.measured({}).functions if f.quest_id == CLAMP)
        arcs = [(14, 15)] if 15 in self.missing else []
        measured = dataclasses.replace(
            clamp,
            missing_lines=list(self.missing),
            missing_branches=arcs,
            covering_tests=["tests/test_clamp.py::test_low"],
        )
        run = RunReport(outcomes={"tests/test_clamp.py::test_low": "passed"})
        return run, MeasuredSource(functions=[measured], config={"run:branch": True})


def next_data(calc: CalcProject, child: FakeChild | None) -> dict[str, Any]:
    ctx = calc.context("next", quest_id=CLAMP)
    ctx.measure = child
    quest: dict[str, Any] = next_quest(ctx).data["quest"]
    return quest


def test_nothing_changed_nothing_runs(calc: CalcProject) -> None:
    child = FakeChild(calc, [15])
    quest = next_data(calc, child)
    assert child.selections == []
    assert quest["facts_measured"] == {
        "at": quest["facts_from"]["at"], "how": "scan", "tests": 0
    }  # fmt: skip
    # A test file rewritten with the scan's bytes (a checkout) is no change.
    path = calc.root / "tests" / "test_calc.py"
    path.write_bytes(path.read_bytes())
    next_data(calc, child)
    assert child.selections == []


def test_a_changed_test_file_is_measured_with_the_submit_selection(calc: CalcProject) -> None:
    calc.test("test_clamp", TEST_CLAMP)
    child = FakeChild(calc, [15])
    quest = next_data(calc, child)
    # clamp has no covering test: what a submit would run is the file changed since the scan.
    assert child.selections == [["tests/test_clamp.py"]]
    assert child.timeouts == [BUDGET_FLOOR]  # the project's 60 s (--quest-timeout) caps it
    assert quest["missing_lines"] == [15]
    assert [f["field"] for f in quest["facts"]] == ["src/pkg/calc.py:15", "src/pkg/calc.py:14->15"]
    measured = quest["facts_measured"]
    assert measured["how"] == "remeasured" and measured["tests"] == 1
    assert measured["changed_test_files"] == ["tests/test_clamp.py"]
    assert quest["facts_from"]["kind"] == "remeasured"
    # Nothing recorded: the ratchet file keeps the scan's facts.
    recorded = calc.context("next").store.load().quests[CLAMP]
    assert recorded.missing_lines == [12, 13, 14, 15, 16] and recorded.tries == 0


def test_without_a_child_the_facts_are_said_to_be_from_before_the_change(
    calc: CalcProject,
) -> None:
    calc.test("test_clamp", TEST_CLAMP)
    quest = next_data(calc, None)
    assert quest["facts_measured"]["how"] == "scan"
    assert "test files changed since then (not measured here" in quest["facts_from"]["note"]


def test_a_submits_other_facts_are_kept_and_only_newer_files_count(calc: CalcProject) -> None:
    calc.test("test_clamp", TEST_CLAMP)
    survivor = Fact("mutation.compare", "src/pkg/calc.py:12", "a test fails", "all pass", "m")
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 5))

    def judged(ratchet: Ratchet) -> None:
        quest = ratchet.quests[CLAMP]
        quest.facts = [survivor]
        quest.missing_lines, quest.missing_branches = [], []
        quest.tries = 1
        quest.history.append(Event(at=at, action="submit", verdict="FAIL"))

    calc.context("next").store.update(judged)
    child = FakeChild(calc, [])
    # test_clamp.py is older than the submit's facts: they are current.
    quest = next_data(calc, child)
    assert child.selections == [] and quest["facts_measured"]["how"] == "submit"
    assert quest["facts_from"]["note"].endswith("no test file changed since: current")
    later = time.time() + 10
    os.utime(calc.root / "tests" / "test_clamp.py", (later, later))
    quest = next_data(calc, child)
    assert child.selections == [["tests/test_clamp.py"]]
    assert quest["facts"] == [survivor.to_dict()]  # no mutant ran: the survivor stays
    note = quest["facts_from"]["note"]
    assert "every line and branch now runs" in note
    assert "the submit's other facts are kept (no mutant ran here)" in note


def test_the_budget_is_three_last_runs_at_least_a_minute_never_past_the_timeout() -> None:
    quest = Quest(id="m.py::f", file="m.py", qualname="f", first=1, last=2, fingerprint="x")
    assert budget(quest, 600.0) == BUDGET_FLOOR == 60.0
    quest.last_run_seconds = 50.0
    assert budget(quest, 600.0) == 150.0
    assert budget(quest, 100.0) == 100.0


def test_what_was_measured_is_kept_for_the_same_files(calc: CalcProject) -> None:
    calc.test("test_clamp", TEST_CLAMP)
    child = FakeChild(calc, [15])
    first = next_data(calc, child)
    again = next_data(calc, child)
    assert len(child.selections) == 1 and again["facts_measured"] == first["facts_measured"]
    calc.test("test_clamp", TEST_CLAMP + "\n\ndef test_high():\n    assert clamp(9, 0, 5) == 5\n")
    next_data(calc, child)
    assert len(child.selections) == 2


class BrokenChild(FakeChild):
    """The changed test file does not import: pytest collected nothing, ran nothing."""

    def __call__(self, ctx: Any, selection: list[str], quest: Quest) -> Any:
        self.selections.append(list(selection))
        error = CollectionError(
            "tests/test_clamp.py", 2, "ModuleNotFoundError: No module named 'helper'"
        )
        clamp = next(f for f in self.project.measured({}).functions if f.quest_id == CLAMP)
        return RunReport(collection_errors=[error]), MeasuredSource(functions=[clamp])


def test_a_collection_error_is_named_not_taken_for_missing_lines(calc: CalcProject) -> None:
    calc.test("test_clamp", TEST_CLAMP)
    quest = next_data(calc, BrokenChild(calc, [15]))
    note = quest["facts_from"]["note"]
    assert "tests/test_clamp.py:2: ModuleNotFoundError: No module named 'helper'" in note
    assert "still missing" not in note
    assert quest["facts_measured"]["how"] != "remeasured"
    # Not kept: once the file imports, `next` measures it.
    child = FakeChild(calc, [])
    assert next_data(calc, child)["facts_measured"]["how"] == "remeasured"
