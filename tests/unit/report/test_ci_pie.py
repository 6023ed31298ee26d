"""The step summary's totals as a Mermaid pie chart (``report/ci.py``)."""

from __future__ import annotations

from pytest_quest.core.model import Ratchet
from pytest_quest.core.ratchet import check_ratchet
from pytest_quest.report import ci


def test_the_pie_has_one_slice_per_state_with_quests() -> None:
    counts = {"TODO": 2, "PASS": 5, "REVIEW": 0, "DONE": 1, "EXCLUDED": 0}
    assert ci.totals_pie(counts) == [
        "```mermaid",
        "pie showData title Quests by state",
        '    "TODO" : 2',
        '    "PASS" : 5',
        '    "DONE" : 1',
        "```",
        "",
    ]


def test_no_quest_no_pie() -> None:
    assert ci.totals_pie({"TODO": 0, "PASS": 0}) == []


def test_a_quote_cannot_end_the_label() -> None:
    (line,) = [line for line in ci.totals_pie({'a"b': 1}) if line.startswith("    ")]
    assert line == '    "a\'b" : 1'


def test_the_step_summary_carries_the_pie_after_the_counts() -> None:
    from tests.unit.report.test_ci import facts, quest, ratchet

    base: Ratchet = ratchet(quest("a", 1, 3), quest("b", 5, 6))
    report = check_ratchet(base, [facts("a", 1, 3), facts("b", 5, 6)])
    text = ci.step_summary(ci.check_outcome(report, base, False, {}))
    head, pie = text.split("```mermaid\n", 1)
    assert "2 PASS functions re-measured" in head
    assert pie.startswith('pie showData title Quests by state\n    "PASS" : 2\n```\n')
