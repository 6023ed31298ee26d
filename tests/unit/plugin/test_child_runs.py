"""plugin/child_runs.py: the mutation child's parse is made again after CPython 3.11's AST race."""

from __future__ import annotations

import signal

import pytest

from pytest_quest.plugin.child_runs import again_on_ast_race, outcome_of, own_alarm
from tests.support.reports import hand_report as report


def test_a_parse_raced_by_another_thread_is_made_once_more() -> None:
    calls: list[int] = []

    def make() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=75, after=29)")
        return "parsed"

    assert again_on_ast_race(make) == "parsed"
    assert len(calls) == 2


def test_other_errors_and_a_second_race_are_not_hidden() -> None:
    def other() -> None:
        raise SystemError("something else")

    with pytest.raises(SystemError, match="something else"):
        again_on_ast_race(other)

    def always() -> None:
        raise SystemError("AST constructor recursion depth mismatch (before=1, after=2)")

    with pytest.raises(SystemError, match="mismatch"):
        again_on_ast_race(always)


def test_the_originals_observed_runs_are_made_once_per_test_for_all_survivors() -> None:
    from types import SimpleNamespace
    from typing import Any

    from pytest_quest.plugin.observe_child import Watch

    ran: list[str] = []

    def calls(item: Any, keep: bool = False) -> list[Any]:
        # Stubbed: a real observation sees nothing under another tracer (coverage in CI).
        ran.append(item.nodeid)
        return []

    watch = Watch(__file__, "def f(x):\n    return x\n", 1, lambda item: {"status": "survived"})
    watch.calls = calls  # type: ignore[method-assign]
    first, second = SimpleNamespace(nodeid="t::a"), SimpleNamespace(nodeid="t::b")
    assert watch.original(first) == ([], [])  # type: ignore[arg-type]
    assert watch.original(first) == ([], [])  # type: ignore[arg-type]
    assert watch.original(second) == ([], [])  # type: ignore[arg-type]
    assert ran == ["t::a", "t::a", "t::b", "t::b"]


def test_two_original_runs_that_disagree_are_made_again_next_time() -> None:
    from types import SimpleNamespace
    from typing import Any

    from pytest_quest.engine.observe import Call
    from pytest_quest.plugin.observe_child import Watch

    a, b, c = (Call("", "returns", value) for value in "abc")
    answers = iter([[a], [b], [c], [c], [a], [a]])
    watch = Watch(__file__, "def f(x):\n    return x\n", 1, lambda item: {})
    watch.calls = lambda item, keep=False: next(answers)  # type: ignore[method-assign]
    item: Any = SimpleNamespace(nodeid="t::a")
    assert watch.original(item) == ([a], [b])  # they disagree: not kept
    assert watch.original(item) == ([c], [c])  # made again, kept
    assert watch.original(item) == ([c], [c])


@pytest.mark.parametrize(
    ("reports", "expected"),
    [
        (
            [report("setup", "passed"), report("call", "passed"), report("teardown", "passed")],
            "passed",
        ),
        ([report("setup", "passed"), report("call", "failed")], "failed"),
        ([report("setup", "failed")], "error"),
        (
            [report("setup", "passed"), report("call", "passed"), report("teardown", "failed")],
            "error",
        ),
        ([report("setup", "skipped")], "skipped"),
        ([report("call", "skipped", wasxfail="")], "xfailed"),
        ([report("call", "passed", wasxfail="")], "xpassed"),
    ],
)
def test_a_tests_outcome_from_its_reports(reports: list[pytest.TestReport], expected: str) -> None:
    assert outcome_of(reports) == expected


def test_the_watchdog_believes_only_its_own_timer() -> None:
    fired: list[bool] = []
    early = own_alarm(5.0, lambda: fired.append(True))
    previous = signal.signal(signal.SIGALRM, early)
    try:
        # A SIGALRM before the budget is spent (a test's own timer): armed again, no timeout.
        early(signal.SIGALRM, None)
        assert fired == []
        assert 4.0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 5.0
        own_alarm(0.0, lambda: fired.append(True))(signal.SIGALRM, None)
        assert fired == [True]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
