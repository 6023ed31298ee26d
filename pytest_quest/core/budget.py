"""How long a covering test may run with a mutant in place before it is stopped (pure).

A test stopped at its budget kills the mutant (``how: timeout``); the fresh
run (plugin/fresh_kill.py) confirms it only if the test runs away there too.
Each budget comes from the test's own baseline runs, never its siblings', so
a fast test that loops is stopped in proportion to itself (docs/gate.md).

* `FACTOR`: a mutant may make a test ten times slower and still run to its end.
* `MARGIN`: a test of a few milliseconds is not stopped by a GC pause, a busy
  scheduler or a process start that have nothing to do with the mutant.
* The slower baseline run: a test's first run in a process pays for its
  one-time set-up, as its run in the fresh process does.

A longer budget only buys time: a test slow on purpose gains nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

#: A test may run this many times its own baseline time with a mutant in place...
FACTOR = 10.0
#: ...plus these seconds (see the module's docstring).
MARGIN = 2.0


def mutant_budget(baseline_seconds: Iterable[float]) -> float:
    """The seconds a test may run with a mutant in place, from `baseline_seconds`, its
    times in the baseline runs: `FACTOR` times the slower of them, plus `MARGIN`."""
    slowest = max((max(seconds, 0.0) for seconds in baseline_seconds), default=0.0)
    return FACTOR * slowest + MARGIN
