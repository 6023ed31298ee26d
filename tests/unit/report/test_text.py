"""Text renderings of status: forged PASS entries."""

from __future__ import annotations

from pytest_quest.report.text import forged_lines


def test_forged_passes_are_counted_then_listed_one_a_line() -> None:
    assert forged_lines({"m.py::f": "no seal", "m.py::g": "seal of other content"}) == [
        "2 PASS not written by pytest-quest's gate, a scan or a person (forged):",
        "  FORGED m.py::f: no seal",
        "  FORGED m.py::g: seal of other content",
    ]
    assert forged_lines({}) == []
