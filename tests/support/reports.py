"""A pytest test report made by hand, for the code that reads reports (session, child runs)."""

from __future__ import annotations

import pytest


def hand_report(
    when: str, outcome: str, longrepr: object = None, duration: float = 0.0, **extra: object
) -> pytest.TestReport:
    """`tests/t.py::test_x`'s report of phase `when`; `extra` set as attributes (`wasxfail`)."""
    made = pytest.TestReport(
        duration=duration,
        nodeid="tests/t.py::test_x",
        location=("tests/t.py", 0, "test_x"),
        keywords={},
        outcome=outcome,  # type: ignore[arg-type]
        longrepr=longrepr,  # type: ignore[arg-type]
        when=when,  # type: ignore[arg-type]
    )
    for name, value in extra.items():
        setattr(made, name, value)
    return made
