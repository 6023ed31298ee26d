"""How long a covering test may run with a mutant in place before it is stopped (pure).

A test stopped at its budget counts the mutant as killed (``how: timeout``:
the mutant ran away, an endless loop or a search that no longer ends), and a
fresh run confirms such a kill only when the test runs away there too
(plugin/fresh_kill.py).  Each test's budget comes from its own baseline runs
against the original, never from its siblings': a fast test that loops
under a mutant is stopped in proportion to itself, however slow the other
covering tests of the function are.

The numbers, and why:

* `FACTOR`: a mutant may make a test ten times slower and still be tried to
  its end (a search that takes a larger step, a loop one longer); a load that
  grows between the baseline and the mutant runs slows every run alike.
* `MARGIN`: seconds added to every budget, so a test of a few milliseconds
  is not stopped by what has nothing to do with the mutant: a pause of the
  garbage collector on a large heap, the scheduler on a loaded machine, the
  start of a process the test runs (a mutant written into its file is
  compiled again there), the timer's own granularity (well under a
  millisecond).  Two seconds, then, is the least budget of any test.
* The slower of the test's baseline runs: the first run of a test in a
  process pays for what it sets up once (lazy imports, caches), as does the
  test's run in the fresh process that confirms a kill.

A longer budget only buys time: a mutant that ends within it passes or
fails as it would with none, and one that never ends is stopped at
``--quest-timeout`` at the latest (no verdict of the mutants then: REVIEW).
So a test that is slow on purpose in the baseline runs gains nothing but a
slower check.
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
