"""The audit's text, and the small pieces it is built from (app/audit.py)."""

from __future__ import annotations

from pytest_quest.app.audit import (
    AuditFinding,
    AuditReport,
    _seconds,
    _span,
    _survivor_lines,
    audit_lines,
)
from pytest_quest.core.model import Fact, FunctionFacts


def _fact(field: str, message: str = "mutant survived") -> Fact:
    return Fact(check="mutation.survived", field=field, expected="e", actual="a", message=message)


def test_survivor_lines_are_the_facts_lines_once_each_in_order() -> None:
    finding = AuditFinding(
        "a.py::f",
        [_fact("a.py:12"), _fact("a.py:3"), _fact("a.py:12"), _fact("a.py"), _fact("a.py:x")],
    )
    assert _survivor_lines(finding) == [3, 12]
    assert _survivor_lines(AuditFinding("a.py::f", [])) == []


def test_seconds_sums_the_tests_own_times_or_is_none_when_one_was_not_timed() -> None:
    times = {"t::a": 1.5, "t::b": 0.25}
    assert _seconds(times, ["t::a", "t::b"]) == 1.75
    assert _seconds(times, []) == 0
    assert _seconds(times, ["t::a", "t::c"]) is None


def test_span_keeps_the_functions_own_lines() -> None:
    function = FunctionFacts(
        file="a.py",
        qualname="f",
        ordinal=0,
        start=4,
        first=5,
        last=7,
        fingerprint="x",
        statements=3,
        branches=0,
    )
    by_line = {4: {"t1"}, 5: {"t2"}, 7: {"t3"}, 8: {"t4"}}
    assert _span(by_line, function) == {5: {"t2"}, 7: {"t3"}}


def test_audit_lines_of_a_report_with_everything() -> None:
    report = AuditReport(
        audited=["a.py::f", "a.py::g", "a.py::h"],
        findings=[
            AuditFinding(
                "a.py::f",
                [_fact("a.py:4", "m1 survived"), _fact("a.py:9", "m2 survived")],
                survived=True,
            ),
            AuditFinding("a.py::g", [_fact("a.py:20", "m3 survived")], survived=True),
            AuditFinding(
                "a.py::h",
                [_fact("a.py:30", "could not confirm: it timed out"), _fact("a.py:31", "other")],
            ),
            AuditFinding("a.py::k", [], problem="the child crashed"),
        ],
        skipped={"b.py::z": "changed since PASS", "b.py::y": "gone"},
        unwitnessed={
            "a.py::f": [
                {
                    "file": "a.py",
                    "line": 5,
                    "original": "x + 1",
                    "mutated": "x - 1",
                    "operator": "binop",
                    "id": "m7",
                }
            ]
        },
    )
    assert audit_lines(report) == [
        "audit: 3 PASS functions checked, 2 run without being checked, 2 could not be confirmed",
        "  survived: a.py::f: 2 mutants at lines 4, 9",
        "  survived: a.py::g: 1 mutant at line 20",
        "  could not confirm: a.py::h: it timed out (and 1 more)",
        "  could not confirm: a.py::k: the child crashed",
        "details:",
        "  a.py::f:",
        "    a.py:4: m1 survived",
        "    a.py:9: m2 survived",
        "  a.py::g:",
        "    a.py:20: m3 survived",
        "  a.py::h:",
        "    a.py:30: could not confirm: it timed out",
        "    a.py:31: other",
        "  a.py::k:",
        "  a.py::f: unwitnessed (no call tells it apart): a.py:5: `x + 1` -> `x - 1` (operator binop, mutant m7)",
        "  skipped b.py::y: gone",
        "  skipped b.py::z: changed since PASS",
        "the audit changes no state: PASS quests stay PASS",
    ]


def test_audit_lines_of_an_empty_report() -> None:
    assert audit_lines(AuditReport(audited=["a.py::f"])) == [
        "audit: 1 PASS function checked, 0 run without being checked, 0 could not be confirmed",
        "the audit changes no state: PASS quests stay PASS",
    ]
