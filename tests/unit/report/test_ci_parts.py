"""check's re-judge and since sections, written out whole: text lines, JSON, exit status, annotations."""

from __future__ import annotations

from typing import Any

from pytest_quest.core.model import Fact, Verdict
from pytest_quest.core.person_log import PersonAction
from pytest_quest.core.rejudge import Rejudged, RejudgeReport
from pytest_quest.report.ci import CheckOutcome, add_rejudge, add_since, since_annotations

FACT = Fact(
    check="rejudge.mutation",
    field="src/a.py:12",
    expected="e",
    actual="a",
    message="mutant survived",
)
ACTION = PersonAction("src/a.py::g", "accept", "Ada", "2026-12-01T00:00:00Z", "looked at it")


def _outcome(*lines: str) -> CheckOutcome:
    return CheckOutcome(data={"ok": True}, lines=list(lines))


def test_add_rejudge_without_a_report_changes_nothing() -> None:
    outcome = _outcome("check: OK")
    add_rejudge(outcome, None)
    assert outcome == _outcome("check: OK")


def test_add_rejudge_of_a_regression_fails_the_check() -> None:
    outcome = _outcome("check: 3 PASS functions re-measured, 0 regressed", "check: OK")
    report = RejudgeReport(
        base="origin/main",
        found=True,
        results=[
            Rejudged("src/a.py::f", "new", Verdict.FAIL, "l1-mutation", [FACT]),
            Rejudged("src/a.py::h", "changed", Verdict.PASS, "pass"),
        ],
        person_actions=[ACTION],
        seconds=12.5,
        mutants=True,
    )
    add_rejudge(outcome, report)
    assert outcome.exitcode == 1
    assert outcome.data == {
        "ok": False,
        "rejudged": {
            "base": "origin/main",
            "base_found": True,
            "mutants": True,
            "seconds": 12.5,
            "count": 2,
            "failed": 1,
            "quests": [
                {
                    "id": "src/a.py::f",
                    "reason": "new",
                    "verdict": "FAIL",
                    "step": "l1-mutation",
                    "holds": False,
                    "facts": [FACT.to_dict()],
                },
                {
                    "id": "src/a.py::h",
                    "reason": "changed",
                    "verdict": "PASS",
                    "step": "pass",
                    "holds": True,
                    "facts": [],
                },
            ],
        },
        "person_actions": [
            {
                "id": "src/a.py::g",
                "action": "accept",
                "by": "Ada",
                "at": "2026-12-01T00:00:00Z",
                "reason": "looked at it",
                "fingerprint": "",
            }
        ],
    }
    assert outcome.lines == [
        "check: 3 PASS functions re-measured, 0 regressed",
        "re-judged against origin/main: 2 PASS new or changed since the base, 1 do not hold (12.5s)",
        "  REGRESSION src/a.py::f (new)",
        "    src/a.py:12: mutant survived",
        "  ok src/a.py::h (changed)",
        "person actions since the base (1): review them",
        "  accept src/a.py::g by Ada at 2026-12-01T00:00:00Z: looked at it",
        "check: FAILED",
    ]


def test_add_rejudge_that_holds_without_a_base_file_nor_mutants() -> None:
    outcome = _outcome("some line")
    report = RejudgeReport(base="HEAD~1", found=False, seconds=0.25, mutants=False)
    add_rejudge(outcome, report)
    assert outcome.exitcode == 0
    assert outcome.data["ok"] is True
    assert outcome.data["rejudged"]["count"] == 0
    assert outcome.data["person_actions"] == []
    assert outcome.lines == [
        "some line",
        "re-judged against HEAD~1 (no ratchet file there: every PASS is new): 0 PASS new or "
        "changed since the base, 0 do not hold (0.25s, mutants off)",
        "person actions since the base: none",
    ]


def test_add_rejudge_to_no_lines() -> None:
    outcome = _outcome()
    add_rejudge(outcome, RejudgeReport(base="b", found=True))
    assert outcome.lines == [
        "re-judged against b: 0 PASS new or changed since the base, 0 do not hold (0s)",
        "person actions since the base: none",
    ]


def _since(require: bool, not_pass: list[dict[str, Any]]) -> dict[str, Any]:
    return {"require_pass": require, "not_pass": not_pass}


NOT_PASS: list[dict[str, Any]] = [
    {
        "id": "src/a.py::f",
        "state": "TODO",
        "facts": [
            {
                "check": "coverage.line",
                "field": "src/a.py:4",
                "expected": "run",
                "actual": "not run",
                "message": "line 4 not run",
            },
            {
                "check": "coverage.branch",
                "field": "src/a.py:5->7",
                "expected": "taken",
                "actual": "not taken",
                "message": "branch not taken",
            },
        ],
    },
    {"id": "src/b.py::g", "state": "REVIEW", "facts": []},
]


def test_add_since_required_fails_the_check() -> None:
    outcome = _outcome("check: 1 PASS functions re-measured, 0 regressed", "check: OK")
    since = _since(True, NOT_PASS)
    add_since(outcome, since, "since main: 3 functions changed")
    assert outcome.exitcode == 1
    assert outcome.data == {"ok": False, "since": since}
    assert outcome.lines == [
        "check: 1 PASS functions re-measured, 0 regressed",
        "since main: 3 functions changed; 2 not PASS (PASS required)",
        "  NOT PASS src/a.py::f (TODO)",
        "    src/a.py:4: line 4 not run",
        "    src/a.py:5: branch not taken",
        "  NOT PASS src/b.py::g (REVIEW)",
        "check: FAILED",
    ]


def test_add_since_not_required_keeps_the_verdict() -> None:
    outcome = _outcome("check: OK")
    add_since(outcome, _since(False, NOT_PASS[1:]), "since main: 1 function changed")
    assert (outcome.exitcode, outcome.data["ok"]) == (0, True)
    assert outcome.lines == [
        "since main: 1 function changed; 1 not PASS (PASS not required (--quest-require-pass))",
        "  NOT PASS src/b.py::g (REVIEW)",
        "check: OK",
    ]


def test_add_since_required_with_everything_pass_and_no_verdict_line() -> None:
    outcome = _outcome("other")
    add_since(outcome, _since(True, []), "since main: 0 functions changed")
    assert (outcome.exitcode, outcome.data["ok"]) == (0, True)
    assert outcome.lines == ["other", "since main: 0 functions changed; 0 not PASS (PASS required)"]
    empty = _outcome()
    add_since(empty, _since(False, []), "head")
    assert empty.lines == ["head; 0 not PASS (PASS not required (--quest-require-pass))"]


def test_since_annotations_one_per_fact_at_its_level() -> None:
    assert since_annotations(None) == []
    assert since_annotations({}) == []
    assert since_annotations(_since(True, NOT_PASS)) == [
        "::error file=src/a.py,line=4,title=pytest-quest%3A src/a.py%3A%3Af::line 4 not run",
        "::error file=src/a.py,line=5,title=pytest-quest%3A src/a.py%3A%3Af::branch not taken",
    ]
    assert since_annotations(_since(False, NOT_PASS[:1])) == [
        "::warning file=src/a.py,line=4,title=pytest-quest%3A src/a.py%3A%3Af::line 4 not run",
        "::warning file=src/a.py,line=5,title=pytest-quest%3A src/a.py%3A%3Af::branch not taken",
    ]
