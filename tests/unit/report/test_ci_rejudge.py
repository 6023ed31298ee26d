"""The re-judge in check's text, JSON, GitHub annotations and step summary (report/ci.py)."""

from __future__ import annotations

import pytest

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Fact, Ratchet, Verdict
from pytest_quest.core.person_log import PersonAction
from pytest_quest.core.ratchet import CheckReport
from pytest_quest.core.rejudge import Rejudged, RejudgeReport
from pytest_quest.plugin.options import resolve
from pytest_quest.report import ci

FACT = Fact(
    check="rejudge.mutation",
    field="src/a.py:12",
    expected="a covering test fails when the code is changed",
    actual="every covering test passes",
    message="mutant survived: `a < b` -> `a >= b` (mutation.compare) [src/a.py::f, PASS since the base]",
)
ACTION = PersonAction("src/a.py::g", "accept", "Ada", "2026-12-01T00:00:00Z", "looked at it")


def outcome() -> ci.CheckOutcome:
    return ci.check_outcome(CheckReport(checked=2), Ratchet(), False, {})


def report(holds: bool) -> RejudgeReport:
    results = [Rejudged("src/a.py::h", "absent", Verdict.PASS, "pass")]
    if not holds:
        results.append(Rejudged("src/a.py::f", "new", Verdict.FAIL, "4-mutants", [FACT]))
    return RejudgeReport("origin/main:quest.json", True, results, [ACTION], seconds=1.5)


def test_without_a_base_nothing_changes() -> None:
    plain = outcome()
    ci.add_rejudge(plain, None)
    assert plain.data["rejudged"] is None and plain.data["person_actions"] == []
    assert plain.exitcode == 0 and plain.lines[-1] == "check: OK"
    assert ci.rejudge_annotations(None) == []


def test_a_pass_that_does_not_hold_fails_the_check() -> None:
    failed = outcome()
    ci.add_rejudge(failed, report(holds=False))
    assert failed.exitcode == 1 and failed.data["ok"] is False
    assert failed.lines[-1] == "check: FAILED"
    text = "\n".join(failed.lines)
    assert (
        "re-judged against origin/main:quest.json: 2 PASS new or changed since the base, " in text
    )
    assert "  REGRESSION src/a.py::f (new)\n    src/a.py:12: mutant survived" in text
    assert "  ok src/a.py::h (absent)" in text
    assert "  accept src/a.py::g by Ada at 2026-12-01T00:00:00Z: looked at it" in text
    data = failed.data["rejudged"]
    assert (data["count"], data["failed"], data["seconds"]) == (2, 1, 1.5)
    assert data["quests"][1]["facts"][0]["check"] == "rejudge.mutation"
    assert failed.data["person_actions"] == [
        {
            "id": "src/a.py::g",
            "action": "accept",
            "by": "Ada",
            "at": "2026-12-01T00:00:00Z",
            "reason": "looked at it",
            "fingerprint": "",
        }
    ]
    commands = ci.rejudge_annotations(report(holds=False))
    assert commands[0].startswith("::error file=src/a.py,line=12,title=pytest-quest re-judge%3A ")
    assert commands[1].startswith("::notice file=src/a.py,title=")
    summary = ci.step_summary(failed)
    assert "### Re-judged against `origin/main:quest.json`" in summary
    assert "| `src/a.py::f` | new | FAIL (4-mutants) | mutant survived" in summary
    assert "- accept `src/a.py::g` by Ada at 2026-12-01T00:00:00Z: looked at it" in summary


def test_passes_that_hold_keep_the_check_green() -> None:
    green = outcome()
    ci.add_rejudge(green, report(holds=True))
    assert green.exitcode == 0 and green.data["ok"] is True and green.lines[-1] == "check: OK"


def test_the_base_options_belong_to_check_alone(pytester: pytest.Pytester) -> None:
    for args in (
        ("--quest", "submit", "--quest-base", "HEAD"),
        ("--quest-status", "--quest-base-file=b.json"),
        ("--quest", "next", "--quest-base", "HEAD", "--quest-base-file=b.json"),
    ):
        with pytest.raises((QuestUsageError, pytest.UsageError), match="--quest-base"):
            resolve(pytester.parseconfig(*args))
