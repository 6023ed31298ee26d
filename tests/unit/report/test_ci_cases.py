"""The step summary's sections: collection errors, changed functions, and the `since` table."""

from __future__ import annotations

from typing import Any

from pytest_quest.report.ci import CheckOutcome, _since_summary, step_summary


def _data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "ok": False,
        "checked": 1,
        "counts": {"PASS": 1, "TODO": 2, "REVIEW": 0, "DONE": 0},
        "regressions": [],
        "collection_errors": [],
        "changed": [],
        "untracked": [],
        "strict": False,
        "tests_failed": [],
    }
    data.update(changes)
    return data


HEAD = (
    "1 PASS function re-measured, 0 regressed; ratchet: 1 PASS, 2 TODO, 0 REVIEW, 0 DONE.\n\n"
    "```mermaid\npie showData title Quests by state\n"
    '    "PASS" : 1\n    "TODO" : 2\n```\n\n'
)


def test_collection_errors_and_changed_functions_are_listed_under_their_headings() -> None:
    data = _data(
        collection_errors=[
            {"file": "tests/test_a.py", "line": 3, "message": "SyntaxError: bad"},
            {"file": "tests/test_b.py", "line": 0, "message": "ImportError: x"},
        ],
        changed=["src/m.py::f", "src/m.py::g"],
    )
    assert step_summary(CheckOutcome(data)) == (
        "## pytest-quest check failed\n\n" + HEAD + "### Collection errors\n\n"
        "- `tests/test_a.py:3`: SyntaxError: bad\n"
        "- `tests/test_b.py:0`: ImportError: x\n\n"
        "### Changed since PASS, still fully covered\n\n"
        "- `src/m.py::f`\n- `src/m.py::g`\n\n"
    )


def test_a_passed_check_with_nothing_to_list_is_its_heading_and_counts() -> None:
    assert step_summary(CheckOutcome(_data(ok=True))) == ("## pytest-quest check passed\n\n" + HEAD)


def test_a_since_section_without_failing_functions_has_no_table() -> None:
    since = {"ref": "main", "require_pass": False, "changed": ["a", "b"], "not_pass": []}
    assert _since_summary(since) == [
        "### Changed since `main`",
        "",
        "2 functions changed, 0 not PASS.",
        "",
    ]
    assert step_summary(CheckOutcome(_data(ok=True, since=since))) == (
        "## pytest-quest check passed\n\n"
        + HEAD
        + "### Changed since `main`\n\n2 functions changed, 0 not PASS.\n\n"
    )


def test_a_since_section_lists_each_fact_of_each_function_not_pass() -> None:
    since = {
        "ref": "main",
        "require_pass": True,
        "changed": ["src/m.py::f"],
        "not_pass": [
            {
                "id": "src/m.py::f",
                "state": "TODO",
                "facts": [
                    {"field": "src/m.py:4", "actual": "line 4 not covered"},
                    {"field": "src/m.py:5->7", "actual": "branch 5->7 not taken"},
                ],
            }
        ],
    }
    assert _since_summary(since) == [
        "### Changed since `main` (required to be PASS)",
        "",
        "1 function changed, 1 not PASS.",
        "",
        "| quest | state | where | fact |",
        "|---|---|---|---|",
        "| `src/m.py::f` | TODO | `src/m.py:4` | line 4 not covered |",
        "| `src/m.py::f` | TODO | `src/m.py:5->7` | branch 5->7 not taken |",
        "",
    ]
    assert _since_summary(None) == []
    assert _since_summary({}) == []
