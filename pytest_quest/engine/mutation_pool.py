"""The mutation check of many functions across several children at once (``audit -n N``).

Each child is the one of engine/mutation.py, given a share of the
functions; the reports come back in the order of the targets.  A function's
result does not depend on its share: its mutants, their order and the
original's probe runs among them are fixed by its own source and seed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pytest_quest.engine.mutation import MutationReport, Target, run_mutation_checks
from pytest_quest.engine.processes import judging, stop_running


def shares(weights: list[float], count: int) -> list[list[int]]:
    """`count` lists of indices of `weights`, heaviest first into the lightest share.

    Each share keeps its indices in order; an empty share is left out.
    """
    loads = [0.0] * max(1, count)
    dealt: list[list[int]] = [[] for _ in loads]
    for index in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        lightest = min(range(len(loads)), key=lambda s: (loads[s], s))
        loads[lightest] += weights[index]
        dealt[lightest].append(index)
    return [sorted(share) for share in dealt if share]


# What a test run costs besides the test itself, and a function besides its
# test runs (planning, the swap, its mutants' compiles), in seconds: boltons' audit.
PER_RUN = 0.005
PER_FUNCTION = 0.05


def weight(target: Target) -> float:
    """What checking `target` costs, roughly: its covering tests run about four times each.

    In seconds when their own time is known (a test of boltons' suite takes
    from a millisecond to half a second: counted alike, one child of two had
    a quarter more to do than the other); else in test runs.
    """
    if target.test_seconds is not None:
        return 4.0 * (target.test_seconds + PER_RUN * len(target.nodeids)) + PER_FUNCTION
    return 4.0 * len(target.nodeids) + 10.0


def run_mutation_checks_across(
    targets: list[Target],
    workers: int,
    *,
    timeout: float,
    run: Callable[..., list[MutationReport]] = run_mutation_checks,
    done: Callable[[int], None] | None = None,
    **kwargs: Any,
) -> list[MutationReport]:
    """`run_mutation_checks(targets, ...)` in at most `workers` children at a time.

    `timeout` is per function (each child gets it times its share); `done` is
    told how many functions each child finished, when it does.  With
    one worker, or in the clean judge (which kills whatever its children
    leave after each run, a sibling too), it is one child running every target.
    Interrupted (Ctrl-C), every child still running is stopped.
    """
    if workers <= 1 or len(targets) <= 1 or judging():
        found = run(targets, timeout=timeout * len(targets), **kwargs)
        if done is not None:
            done(len(targets))
        return found
    dealt = shares([weight(t) for t in targets], workers)
    reports: list[MutationReport | None] = [None] * len(targets)
    lock = threading.Lock()

    def one(share: list[int]) -> None:
        found = run([targets[i] for i in share], timeout=timeout * len(share), **kwargs)
        with lock:
            for index, report in zip(share, found):
                reports[index] = report
            if done is not None:
                done(len(share))

    pool = ThreadPoolExecutor(max_workers=len(dealt), thread_name_prefix="pytest-quest-mutants")
    try:
        futures = [pool.submit(one, share) for share in dealt]
        for future in futures:
            future.result()
    except BaseException:
        stop_running()  # Ctrl-C reaches this thread only: the children are in their own sessions
        raise
    finally:
        pool.shutdown(wait=True)
    return [
        report
        if report is not None
        else MutationReport(completed=False, problem="the mutation child gave no report")
        for report in reports
    ]
