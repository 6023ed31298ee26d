"""The session keeps the first lines of each failed test's error."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_quest.plugin.session import QuestSession, error_summary
from tests.support.reports import hand_report as report


class Crash:
    reprcrash = SimpleNamespace(message="RecursionError: maximum recursion depth exceeded\nmore")

    def __str__(self) -> str:
        return "Traceback...\nRecursionError: maximum recursion depth exceeded"


def test_the_crash_message_first_lines() -> None:
    assert error_summary(report("call", "failed", Crash()), lines=1) == (
        "RecursionError: maximum recursion depth exceeded"
    )
    assert error_summary(report("call", "failed", Crash())) == (
        "RecursionError: maximum recursion depth exceeded | more"
    )


def test_without_a_crash_the_E_lines_and_the_phase() -> None:
    text = "def test_x():\n>   assert f() == 2\nE   assert 1 == 2\nE    +  where 1 = f()\n"
    assert error_summary(report("setup", "failed", text)) == (
        "in setup: assert 1 == 2 | +  where 1 = f()"
    )
    assert error_summary(report("call", "failed", "boom")) == "boom"
    assert error_summary(report("call", "failed", None)) == ""


def test_logreport_keeps_the_first_error_of_a_test() -> None:
    session = SimpleNamespace(outcomes={}, errors={}, seconds={})
    QuestSession.pytest_runtest_logreport(session, report("call", "failed", Crash(), 0.25))  # type: ignore[arg-type]
    QuestSession.pytest_runtest_logreport(session, report("teardown", "failed", "later", 0.5))  # type: ignore[arg-type]
    assert session.outcomes == {"tests/t.py::test_x": "error"}
    # Its own time, every phase (audit -n deals functions to children by it).
    assert session.seconds == {"tests/t.py::test_x": 0.75}
    assert session.errors == {
        "tests/t.py::test_x": "RecursionError: maximum recursion depth exceeded | more"
    }
