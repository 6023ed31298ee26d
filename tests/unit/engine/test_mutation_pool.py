"""engine/mutation_pool.py: audit's functions dealt to several mutation children, reports in order."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.engine import mutation_pool, processes
from pytest_quest.engine.mutation import MutationReport, Target
from pytest_quest.engine.mutation_pool import run_mutation_checks_across, shares, weight


def _targets(count: int) -> list[Target]:
    return [
        Target(Path(f"f{i}.py"), 1, tuple(f"t{j}" for j in range(i % 4 + 1)), seed=f"q{i}")
        for i in range(count)
    ]


def test_shares_deal_the_heaviest_first_to_the_lightest_share() -> None:
    assert shares([5, 1, 4, 2, 3], 2) == [[0, 1, 3], [2, 4]]  # loads 8 and 7
    assert shares([1, 1, 1], 5) == [[0], [1], [2]]  # no empty share
    assert shares([], 3) == []
    assert sorted(i for share in shares([3.0] * 10, 3) for i in share) == list(range(10))


def test_weight_grows_with_the_covering_tests() -> None:
    few, many = _targets(4)[0], _targets(4)[3]
    assert weight(many) > weight(few) > 0


def test_weight_is_the_tests_own_time_when_the_measuring_run_timed_them() -> None:
    # One slow test outweighs many fast ones: counted alike, boltons' audit
    # gave one child of two a quarter more to do than the other.
    slow = Target(Path("a.py"), 1, ("t0",), test_seconds=0.5)
    fast = Target(Path("b.py"), 1, tuple(f"t{j}" for j in range(20)), test_seconds=0.02)
    assert weight(slow) > weight(fast) > 0
    assert shares([weight(slow), weight(fast), weight(fast), weight(fast)], 2) == [[0], [1, 2, 3]]


def test_reports_come_back_in_the_targets_order_each_child_timed_per_function() -> None:
    calls: list[tuple[list[str], float, dict[str, Any]]] = []
    lock = threading.Lock()

    def run(targets: list[Target], *, timeout: float, **kwargs: Any) -> list[MutationReport]:
        with lock:
            calls.append(([t.seed for t in targets], timeout, kwargs))
        return [MutationReport(problem=t.seed) for t in targets]

    targets = _targets(7)
    reports = run_mutation_checks_across(targets, 3, timeout=10.0, run=run, rootdir=Path("r"))
    assert [r.problem for r in reports] == [t.seed for t in targets]
    assert len(calls) == 3
    assert sorted(seed for seeds, _, _ in calls for seed in seeds) == sorted(
        t.seed for t in targets
    )
    for seeds, timeout, kwargs in calls:
        assert timeout == 10.0 * len(seeds)
        assert kwargs == {"rootdir": Path("r")}


def test_one_worker_or_the_judge_runs_one_child_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def run(targets: list[Target], *, timeout: float, **kwargs: Any) -> list[MutationReport]:
        calls.append(len(targets))
        assert timeout == 10.0 * len(targets)
        return [MutationReport() for _ in targets]

    run_mutation_checks_across(_targets(5), 1, timeout=10.0, run=run)
    monkeypatch.setattr(mutation_pool, "judging", lambda: True)
    run_mutation_checks_across(_targets(5), 4, timeout=10.0, run=run)
    assert calls == [5, 5]


@pytest.mark.parametrize("workers", [1, 3])
def test_done_hears_each_child_end_with_its_share(workers: int) -> None:
    heard: list[int] = []

    def run(targets: list[Target], *, timeout: float, **kwargs: Any) -> list[MutationReport]:
        assert "done" not in kwargs  # the pool's own, not the child's
        return [MutationReport() for _ in targets]

    run_mutation_checks_across(_targets(7), workers, timeout=1.0, run=run, done=heard.append)
    assert sum(heard) == 7 and len(heard) == workers


def test_an_interrupt_stops_every_child_still_running(monkeypatch: pytest.MonkeyPatch) -> None:
    stopped: list[bool] = []
    release = threading.Event()

    def stop() -> None:
        stopped.append(True)
        release.set()

    monkeypatch.setattr(mutation_pool, "stop_running", stop)

    def run(targets: list[Target], *, timeout: float, **kwargs: Any) -> list[MutationReport]:
        if targets[0].seed == "q0":
            raise KeyboardInterrupt
        release.wait(5)  # a child that runs until it is stopped
        return [MutationReport() for _ in targets]

    with pytest.raises(KeyboardInterrupt):
        run_mutation_checks_across(_targets(4), 2, timeout=1.0, run=run)
    assert stopped == [True]


def test_stop_running_stops_the_gate_children_of_every_thread(tmp_path: Path) -> None:
    ended: list[int | None] = []

    def child() -> None:
        ended.append(
            processes.run_in_own_session(
                ["sleep", "30"],
                cwd=tmp_path,
                env=dict(os.environ),
                log_path=tmp_path / "log",
                timeout=30,
            )
        )

    thread = threading.Thread(target=child)
    thread.start()
    for _ in range(500):
        if processes._RUNNING:
            break
        threading.Event().wait(0.01)
    processes.stop_running()
    thread.join(10)
    assert not thread.is_alive()
    assert ended and ended[0] != 0
    assert not processes._RUNNING
