"""`next` shows facts as the tests are now: when a test file changed since the quest's facts
were recorded, it measures the function again in the gate's child (no mutant, no try,
nothing recorded) and says when and how; nothing changed, nothing runs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.projects import Project, scanned_template

LRI = """\
class LRI:
    def __init__(self, items):
        self.items = list(items)

    def __eq__(self, other):
        if not isinstance(other, LRI):
            return NotImplemented
        return self.items == other.items
"""

TEST_INIT = """\
from pkg.lri import LRI


def test_init():
    assert LRI([1]).items == [1]
"""

EQ = "src/pkg/lri.py::LRI.__eq__"

TEST_EQ_HALF = """\
from pkg.lri import LRI


def test_eq_other():
    assert LRI([1]).__eq__(3) is NotImplemented
"""

TEST_EQ = (
    TEST_EQ_HALF
    + """

def test_eq_same():
    assert LRI([1]) == LRI([1])
    assert LRI([1]) != LRI([2])
"""
)


def _build(project: Project) -> None:
    project.source("lri", LRI)
    project.test("test_init", TEST_INIT)


@pytest.fixture(scope="module")
def lri_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, Any]]:
    return scanned_template(tmp_path_factory, _build)


def next_json(project: Project) -> dict[str, Any]:
    result, data = project.run_json("--quest", "next", "--quest-id", EQ)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    quest: dict[str, Any] = data["quest"]
    return quest


def test_next_measures_again_when_tests_changed_and_records_nothing(
    project: Project, lri_template: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(lri_template[0])
    first = next_json(project)
    assert first["facts_measured"]["how"] == "scan"
    assert first["missing_lines"] == [6, 7, 8]
    assert first["facts_from"]["note"].endswith("no test file changed since: current")
    before = (project.path / "quest.json").read_bytes()

    # Half of it: the early return runs, the comparison does not.
    project.test("test_eq", TEST_EQ_HALF)
    half = next_json(project)
    measured = half["facts_measured"]
    assert (measured["how"], measured["changed_test_files"]) == ("remeasured", ["tests/test_eq.py"])
    assert measured["tests"] == 1 and half["covering_tests_total"] == 1
    assert half["missing_lines"] == [8]
    assert [f["field"] for f in half["facts"]] == ["src/pkg/lri.py:8", "src/pkg/lri.py:6->8"]
    assert half["facts_from"]["kind"] == "remeasured"
    assert "still missing" in half["facts_from"]["note"]
    assert "> 8 |" in half["source"] and "  7 |" in half["source"]
    assert half["tries"] == 0

    project.test("test_eq", TEST_EQ)
    whole = next_json(project)
    assert (whole["missing_lines"], whole["missing_branches"], whole["facts"]) == ([], [], [])
    assert "every line and branch now runs: submit" in whole["facts_from"]["note"]
    assert (
        f"(mutants, stability): pytest --quest submit --quest-id {EQ} --quest-format json;"
        in (whole["facts_from"]["note"])
    )
    # The same files again: what was measured is read back, not measured again.
    again = next_json(project)
    assert again["facts_measured"] == whole["facts_measured"]
    # Nothing recorded: no try spent, the ratchet file as it was.
    assert (project.path / "quest.json").read_bytes() == before
    text = project.run("--quest", "next", "--quest-id", EQ).stdout.str()
    assert "(test files changed since the scan (tests/test_eq.py): measured again at " in text
    assert "every line and branch now runs" in text


WRITES_RATCHET = """\
import json
import pathlib


def test_forge():
    path = pathlib.Path("quest.json")
    data = path.read_text()
    try:
        path.write_text(data.replace('"tries": 0', '"tries": 0 '))
    except PermissionError:
        pass
"""


def test_a_test_that_writes_the_ratchet_file_during_next_is_not_believed(
    project: Project, lri_template: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(lri_template[0])
    next_json(project)
    before = (project.path / "quest.json").read_bytes()
    project.test("test_forge", WRITES_RATCHET)
    quest = next_json(project)
    assert quest["facts_measured"]["how"] == "scan"
    assert "measuring again failed: " in quest["facts_from"]["note"]
    assert (project.path / "quest.json").read_bytes() == before
