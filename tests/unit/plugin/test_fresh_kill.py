"""plugin/fresh_kill.py: which kills are confirmed in a fresh process, and what is named."""

from __future__ import annotations

import os
from typing import Any

import pytest

from pytest_quest.core.kills import killers
from pytest_quest.plugin import fresh_kill
from pytest_quest.plugin.fresh_kill import Fresh, fresh_arguments, unconfirmed_kills


def killed(index: int, by: str, how: str = "failed") -> dict[str, Any]:
    return {
        "index": index,
        "id": f"m{index}",
        "original": "x > 0",
        "mutated": "x >= 0",
        "status": "killed",
        "killed_by": by,
        "how": how,
    }


def test_the_fresh_run_takes_the_childs_arguments_with_its_own_channel() -> None:
    args = ["-q", "-p", "x", "--quest-channel", "5,6", "--quest-channel=7,8", "-n", "0"]
    assert fresh_arguments([*args, "--", "t::a", "--x"], "9,10") == [
        "-q", "-p", "x", "--quest-channel", "9,10", "--quest-channel=9,10", "-n", "0",
        "--", "t::a", "--x",
    ]  # fmt: skip
    assert fresh_arguments(["-q"], "1,2") == ["-q"]


def test_each_killing_test_is_confirmed_once_with_its_first_failure_else_its_first_runaway() -> (
    None
):
    mutants = [
        killed(0, "t::slow", how="timeout"),
        killed(1, "t::a"),
        killed(2, "t::a"),
        killed(3, "t::b"),
        killed(4, "t::slow"),
        {"index": 5, "status": "survived", "killed_by": "", "how": ""},
        killed(6, ""),
    ]
    assert killers(mutants) == {1: ["t::a"], 3: ["t::b"], 4: ["t::slow"]}
    # A test whose every kill ran away (past its budget, at the memory cap) is confirmed too:
    # a saved oracle that loops on a wrong value instead of failing is not taken on trust.
    runaway = [killed(0, "t::loop", how="timeout"), killed(1, "t::big", how="memory")]
    assert killers([*runaway, killed(2, "t::loop", how="timeout")]) == {
        0: ["t::loop"],
        1: ["t::big"],
    }


def test_every_killer_is_tried_with_return_none_then_with_its_own_kill(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    armed: list[int] = []
    answers: dict[tuple[int, tuple[str, ...]], Any] = {
        # return None (mutant 9): t::a fails (confirmed), the others pass.
        (9, ("t::a", "t::b", "t::c", "t::d")): Fresh(
            {"t::a": "failed", "t::b": "passed", "t::c": "passed", "t::d": "skipped"},
            {"t::a"},
        ),
        (1, ("t::b", "t::c")): Fresh({"t::b": "passed", "t::c": "error"}, {"t::b"}),
        (3, ("t::d",)): "the fresh run sent no report (exit status 3)",
    }
    monkeypatch.setattr(
        fresh_kill,
        "run_fresh",
        lambda config, tests, timeout, parked=None: answers[(armed[-1], tuple(tests))],
    )

    def arm(index: int) -> str:
        armed.append(index)
        return ""

    mutants = [killed(0, "t::a"), killed(1, "t::b"), killed(1, "t::c"), killed(3, "t::d")]
    mutants[2]["index"] = 1  # t::c killed mutant 1 too
    mutants.append(killed(9, "t::a") | {"operator": "body.return_none"})
    found = unconfirmed_kills(None, mutants, arm, lambda: None, timeout=1.0)  # type: ignore[arg-type]
    assert armed == [9, 1, 3]
    # t::b passes with its own kill in place, but t::c fails there: mutant 1's kill holds.
    assert sorted(found) == ["t::d"]
    assert (
        found["t::d"]
        == "mutant m3 `x > 0` -> `x >= 0`: the fresh run sent no report (exit status 3)"
    )


def test_a_kill_no_other_covering_test_confirms_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    armed: list[int] = []
    answers: dict[int, Any] = {
        9: Fresh({"t::a": "failed", "t::b": "passed"}, {"t::a", "t::b"}),
        1: Fresh({"t::a": "passed", "t::b": "passed"}, {"t::a"}),
    }
    monkeypatch.setattr(
        fresh_kill, "run_fresh", lambda config, tests, timeout, parked=None: answers[armed[-1]]
    )

    def arm(index: int) -> str:
        armed.append(index)
        return ""

    mutants = [killed(1, "t::b"), killed(9, "t::a") | {"operator": "body.return_none"}]
    found = unconfirmed_kills(
        None,  # type: ignore[arg-type]
        mutants,
        arm,
        lambda: None,
        timeout=1.0,
        alongside=["t::a", "t::b"],
    )
    assert armed == [9, 1]
    assert list(found) == ["t::b"]
    assert found["t::b"].endswith(
        "from the start its outcome is: passed (without running the function there)"
    )


def test_a_kill_confirmed_by_another_test_needs_the_killers_other_kills_confirmed_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    armed: list[int] = []
    answers: dict[int, Any] = {
        # t::b passes with mutant 1 (its first kill), t::a fails there: the kill holds...
        1: Fresh({"t::a": "failed", "t::b": "passed"}, {"t::a", "t::b"}),
        # ...but with mutant 2, which t::b killed too and t::a did not, nothing fails.
        2: Fresh({"t::a": "passed", "t::b": "passed"}, {"t::a", "t::b"}),
    }
    monkeypatch.setattr(
        fresh_kill, "run_fresh", lambda config, tests, timeout, parked=None: answers[armed[-1]]
    )

    def arm(index: int) -> str:
        armed.append(index)
        return ""

    mutants = [killed(1, "t::b"), killed(2, "t::b")]
    found = unconfirmed_kills(
        None,  # type: ignore[arg-type]
        mutants,
        arm,
        lambda: None,
        timeout=1.0,
        alongside=["t::a", "t::b"],
    )
    assert armed == [1, 2]
    assert list(found) == ["t::b"]
    assert "no covering test fails" in found["t::b"]


def test_without_return_none_the_first_kill_is_the_pilot_and_a_pass_there_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    marks = tmp_path / "marks"
    monkeypatch.setattr(
        fresh_kill,
        "run_fresh",
        lambda config, tests, timeout, parked=None: Fresh({"t::a": "passed"}, {"t::b"}),
    )

    def arm(index: int) -> str:
        marks.write_text("")
        return str(marks)

    timeout = killed(0, "t::a", how="timeout") | {"operator": "body.return_none"}
    found = unconfirmed_kills(None, [timeout, killed(2, "t::a")], arm, lambda: None, 1.0)  # type: ignore[arg-type]
    assert list(found) == ["t::a"] and found["t::a"].startswith("mutant m2 ")
    assert found["t::a"].endswith("(without running the function there)")
    assert not marks.exists()
    # Its only kill ran away, and in the fresh run the test passed: not confirmed.
    alone = unconfirmed_kills(None, [timeout], arm, lambda: None, 1.0)  # type: ignore[arg-type]
    assert list(alone) == ["t::a"] and alone["t::a"].startswith("mutant m0 ")


def test_a_fresh_run_without_the_mutant_says_nothing_a_missing_test_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = iter(
        [
            Fresh({"t::a": "passed"}, set(), applied=False),  # no start-up hook there
            Fresh({}, set(), collect_error=True),  # the module failed to import: a kill
            Fresh({}, set()),  # not collected: its id came from the function
        ]
    )
    monkeypatch.setattr(
        fresh_kill, "run_fresh", lambda config, tests, timeout, parked=None: next(answers)
    )
    found = [
        unconfirmed_kills(None, [killed(0, "t::a")], lambda i: "", lambda: None, 1.0)  # type: ignore[arg-type]
        for _ in range(3)
    ]
    assert found[:2] == [{}, {}]
    assert "its outcome is: not collected" in found[2]["t::a"]


def test_no_run_is_held_where_it_could_not_be_stopped_for_sure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without a pidfd (not Linux, or before 5.3) each fresh run is started when needed.
    started: list[Any] = []
    monkeypatch.setattr(fresh_kill, "Parked", lambda *args: started.append(args))
    monkeypatch.delattr(os, "pidfd_open", raising=False)  # the module fresh_kill uses
    config: Any = type("C", (), {"invocation_params": type("P", (), {"args": (), "dir": "."})})()
    fresh_kill.park_early({"functions": [{"confirm": True}]}, config)
    fresh_kill.park_when_due(config, 0.0, False)
    assert started == [] and fresh_kill.unpark() is None


def test_a_test_stopped_at_its_budget_in_the_fresh_run_confirms_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "timeout" is not a failure there: tried again with its own kill, then named.
    answers = iter(
        [
            Fresh({"t::a": "timeout", "t::b": "failed"}, {"t::a", "t::b"}),  # with return None
            Fresh({"t::a": "timeout"}, {"t::a"}),  # with the mutant it killed itself
        ]
    )
    monkeypatch.setattr(
        fresh_kill, "run_fresh", lambda config, tests, timeout, parked=None: next(answers)
    )
    pilot = killed(9, "t::b") | {"operator": "body.return_none"}
    found = unconfirmed_kills(None, [killed(1, "t::a"), pilot], lambda i: "", lambda: None, 1.0)  # type: ignore[arg-type]
    assert list(found) == ["t::a"] and found["t::a"].startswith("mutant m1 ")
    assert "its outcome is: timeout" in found["t::a"]


def test_a_run_held_early_is_stopped_when_no_mutant_was_killed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The held fresh run (started while the mutants ran) must not outlive a check that has
    # nothing to confirm: every mutant survived.
    class Held:
        stopped = 0

        def stop(self) -> None:
            self.stopped += 1

    def never(*args: Any, **kwargs: Any) -> Fresh:
        raise AssertionError("no fresh run: nothing to confirm")

    monkeypatch.setattr(fresh_kill, "run_fresh", never)
    held = Held()
    survived = {"index": 0, "status": "survived", "killed_by": "", "operator": "body.skip"}
    found = unconfirmed_kills(
        None,  # type: ignore[arg-type]
        [survived],
        lambda i: "",
        lambda: None,
        1.0,
        parked=held,  # type: ignore[arg-type]
    )
    assert found == {}
    assert held.stopped == 1
    # Nothing held, nothing to confirm: nothing runs either.
    assert unconfirmed_kills(None, [survived], lambda i: "", lambda: None, 1.0) == {}  # type: ignore[arg-type]


def test_a_runaway_kill_holds_when_the_test_runs_away_in_the_fresh_run_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = iter(
        [Fresh({"t::loop": "timeout"}, {"t::loop"}), Fresh({"t::a": "timeout"}, {"t::a"})]
    )
    monkeypatch.setattr(
        fresh_kill, "run_fresh", lambda config, tests, timeout, parked=None: next(answers)
    )
    runaway = killed(3, "t::loop", how="timeout")
    assert unconfirmed_kills(None, [runaway], lambda i: "", lambda: None, 1.0) == {}  # type: ignore[arg-type]
    # A kill by a failure is not confirmed by a test that runs away in the fresh run.
    found = unconfirmed_kills(None, [killed(4, "t::a")], lambda i: "", lambda: None, 1.0)  # type: ignore[arg-type]
    assert list(found) == ["t::a"] and "its outcome is: timeout" in found["t::a"]


def test_a_kill_at_the_memory_cap_is_told_from_a_failure() -> None:
    from pytest_quest.plugin.child_runs import ran_out_of_memory

    def report(outcome: str, text: str) -> pytest.TestReport:
        return pytest.TestReport("t::a", ("t.py", 1, "a"), {}, outcome, text, "call")  # type: ignore[arg-type]

    assert ran_out_of_memory([report("failed", "E   MemoryError")])
    assert not ran_out_of_memory([report("failed", "E   AssertionError")])
    assert not ran_out_of_memory([report("passed", "")])
