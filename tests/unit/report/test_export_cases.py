"""Exports of open quests and regressions: Markdown sections and SARIF results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_quest.core.model import Fact, Quest, Ratchet, State
from pytest_quest.report.export import (
    _open_result,
    _regression_result,
    render_markdown,
    render_sarif,
)


def _quest(name: str, state: State, first: int, **changes: Any) -> Quest:
    return Quest(
        id=f"src/m.py::{name}",
        file="src/m.py",
        qualname=name,
        first=first,
        last=first + 4,
        fingerprint="sha256:x",
        state=state,
        **changes,
    )


def _where(line: int, end: int | None = None, message: str = "") -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": line}
    if end is not None:
        region["endLine"] = end
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": {"uri": "src/m.py", "uriBaseId": "%SRCROOT%"},
            "region": region,
        }
    }
    if message:
        location["message"] = {"text": message}
    return location


DISPUTE = Fact(
    "dispute.equivalent",
    "src/m.py:5",
    "a person decides",
    "1 test passes",
    message="disputed mutant m1 survives",
)
DISPUTED = _quest("disputed", State.REVIEW, 3, facts=[DISPUTE])
OPEN = _quest("open", State.TODO, 10, tries=1)


def test_markdown_says_no_regressions_and_marks_a_disputed_mutant() -> None:
    ratchet = Ratchet(quests={q.id: q for q in (DISPUTED, OPEN)})
    assert render_markdown(ratchet, [], "2026-12-05T09:00:00Z") == (
        "# pytest-quest report\n\n"
        "Generated 2026-12-05T09:00:00Z.\n\n"
        "| state | quests |\n|---|---:|\n"
        "| TODO | 1 |\n| PASS | 0 |\n| REVIEW | 1 |\n| DONE | 0 |\n| EXCLUDED | 0 |\n"
        "| total | 2 |\n\n"
        "Remaining: 1.\n\n"
        "## Regressions\n\n"
        "None: every PASS function is still fully covered.\n\n"
        "## TODO (1)\n\n"
        "| quest | lines | tries | missing | facts |\n|---|---|---:|---|---|\n"
        "| `src/m.py::open` | 10-14 | 1 |  |  |\n\n"
        "## REVIEW (1)\n\n"
        "| quest | lines | tries | missing | facts |\n|---|---|---:|---|---|\n"
        "| `src/m.py::disputed` | 3-7 | 0 |  | "
        "(disputed mutant) src/m.py:5: disputed mutant m1 survives |\n"
    )


def test_a_review_result_names_what_waits_for_a_person() -> None:
    assert _open_result(DISPUTED) == {
        "ruleId": "quest/open",
        "ruleIndex": 0,
        "level": "note",
        "message": {
            "text": "REVIEW quest src/m.py::disputed; waiting for a person: "
            "src/m.py:5: disputed mutant m1 survives"
        },
        "locations": [_where(3, 7)],
        "relatedLocations": [_where(5, message="src/m.py:5: disputed mutant m1 survives")],
        "partialFingerprints": {"questId/v1": "src/m.py::disputed"},
        "properties": {"state": "REVIEW", "tries": 0},
    }


def test_an_open_quest_with_nothing_missing_is_its_state_and_id() -> None:
    assert _open_result(OPEN) == {
        "ruleId": "quest/open",
        "ruleIndex": 0,
        "level": "warning",
        "message": {"text": "TODO quest src/m.py::open"},
        "locations": [_where(10, 14)],
        "relatedLocations": [],
        "partialFingerprints": {"questId/v1": "src/m.py::open"},
        "properties": {"state": "TODO", "tries": 1},
    }
    assert _open_result(_quest("plain", State.REVIEW, 3))["message"] == {
        "text": "REVIEW quest src/m.py::plain"
    }


def test_a_regression_is_placed_on_its_first_located_fact() -> None:
    regression = {
        "id": "src/m.py::f",
        "file": "src/m.py",
        "lines": [20, 30],
        "passed_at": "",
        "changed": True,
        "facts": [
            {
                "check": "identity.gone",
                "field": "src/m.py::f",
                "expected": "x",
                "actual": "gone",
                "message": "function gone",
            },
            {
                "check": "coverage.line",
                "field": "src/m.py:22",
                "expected": "covered",
                "actual": "line 22 not covered",
                "message": "",
            },
        ],
    }
    assert _regression_result(regression) == {
        "ruleId": "quest/regression",
        "ruleIndex": 1,
        "level": "error",
        "message": {
            "text": "PASS function src/m.py::f regressed (PASS since ?): "
            "function gone; line 22 not covered"
        },
        "locations": [_where(22)],
        "relatedLocations": [_where(22, message="line 22 not covered")],
        "partialFingerprints": {"questId/v1": "src/m.py::f"},
        "properties": {"changed": True},
    }


def test_a_regression_without_a_located_fact_is_placed_on_its_first_line() -> None:
    regression = {
        "id": "src/m.py::g",
        "file": "src/m.py",
        "lines": [40, 50],
        "passed_at": "2026-01-01",
        "changed": False,
        "facts": [
            {
                "check": "identity.gone",
                "field": "src/m.py::g",
                "expected": "x",
                "actual": "gone",
                "message": "",
            }
        ],
    }
    assert _regression_result(regression) == {
        "ruleId": "quest/regression",
        "ruleIndex": 1,
        "level": "error",
        "message": {"text": "PASS function src/m.py::g regressed (PASS since 2026-01-01): gone"},
        "locations": [_where(40)],
        "relatedLocations": [],
        "partialFingerprints": {"questId/v1": "src/m.py::g"},
        "properties": {"changed": False},
    }


def test_sarif_drops_empty_related_locations_and_numbers_results_and_locations() -> None:
    ratchet = Ratchet(quests={q.id: q for q in (DISPUTED, OPEN)})
    sarif = json.loads(render_sarif(ratchet, None, Path("/tmp"), "9.9"))
    run = sarif["runs"][0]
    assert run["tool"]["driver"]["version"] == "9.9"
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": "file:///tmp/"}}
    first, second = run["results"]
    assert first["properties"] == {"state": "REVIEW", "tries": 0, "index": 0}
    assert [location["id"] for location in first["relatedLocations"]] == [0]
    assert second["properties"] == {"state": "TODO", "tries": 1, "index": 1}
    assert "relatedLocations" not in second
    assert second["message"] == {"text": "TODO quest src/m.py::open"}


def test_an_open_quest_counts_its_missing_lines_and_branches() -> None:
    done = _quest("g", State.DONE, 20, tries=3, missing_lines=[22, 23], missing_branches=[(24, 26)])
    assert _open_result(done)["message"] == {
        "text": "DONE quest src/m.py::g: 2 lines and 1 branch not covered by passing tests"
    }
    assert _open_result(done)["level"] == "warning"
    one = _quest("h", State.TODO, 20, missing_lines=[22])
    assert _open_result(one)["message"] == {
        "text": "TODO quest src/m.py::h: 1 line and 0 branches not covered by passing tests"
    }
