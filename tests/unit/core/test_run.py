"""A run's report: which tests passed and failed."""

from __future__ import annotations

from pytest_quest.core.run import RunReport


def test_passed_is_the_tests_whose_outcome_is_passed() -> None:
    report = RunReport(
        outcomes={
            "t.py::a": "passed",
            "t.py::b": "failed",
            "t.py::c": "passed",
            "t.py::d": "skipped",
            "t.py::e": "error",
        }
    )
    assert report.passed == {"t.py::a", "t.py::c"}
    assert RunReport().passed == set()
