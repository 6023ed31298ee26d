r"""Killing checks for surviving more-itertools mutants (docs/gate.md, false FAILs).

    python benchmarks/killing_checks_more_itertools.py /path/to/more_itertools-11.2.1

As benchmarks/killing_checks_dateutil.py (whose `mutant_module` it uses):
each check runs on the original module and on a copy with one planned
mutant applied; the same result on both marks a false FAIL's mutant.
"""

from __future__ import annotations

import importlib
import signal
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from killing_checks_dateutil import mutant_module, outcome


def within(seconds: int, call: Callable[[], Any]) -> Any:
    """`call()`, or "timeout" when it has not returned after `seconds`."""

    def alarm(signum: int, frame: Any) -> None:
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        return call()
    except TimeoutError:
        return "timeout"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


class Huge:
    """0 to 10**18 - 1, forward (a Python loop: the alarm can stop it) and reversed."""

    def __iter__(self) -> Any:
        n = 0
        while n < 10**18:
            yield n
            n += 1

    def __reversed__(self) -> Any:
        return iter([10**18 - 1])


def last_of_a_huge_range(m: Any) -> Any:
    return within(2, lambda: m.last(Huge()))


def last_of_iterables(m: Any) -> Any:
    return [outcome(partial(m.last, it)) for it in ([1, 2, 3], iter([1, 2]), [], "ab", {1: 2})]


def intersperse_one(m: Any) -> Any:
    return [list(m.intersperse(e, it)) for e, it in (("!", [1, 2, 3]), ([0], "ab"), (None, []))]


def unsortable_permutations(m: Any) -> Any:
    return sorted(map(repr, m.distinct_permutations([1, "3", 1])))


def peekable_takes_only_what_it_needs(m: Any) -> Any:
    it = iter(range(10))
    p = m.peekable(it)
    p[0], p[2]
    return next(it)


def divide_kinds(m: Any) -> Any:
    return [
        [list(part) for part in m.divide(2, it)]
        for it in ([1, 2, 3], "abcd", iter([1, 2, 3]), range(5), (x for x in "xyz"))
    ]


def numeric_range_one_argument(m: Any) -> Any:
    from decimal import Decimal
    from fractions import Fraction

    return [list(m.numeric_range(s)) for s in (3, 2.5, Decimal("2"), Fraction(5, 2))]


def index_out_of_range(m: Any) -> Any:
    up, down = m.numeric_range(0, 10), m.numeric_range(10, 0, -1)
    values = (20, -3, float("inf"), float("-inf"))
    return [outcome(partial(r.index, v)) for r in (up, down) for v in values]


def seekable_elements_slice(m: Any) -> Any:
    s = m.seekable("abcd")
    list(s)
    return outcome(lambda: list(s.elements()[0:2]))


def zero_groups(m: Any) -> Any:
    return outcome(lambda: list(m.set_partitions([1, 2], 0)))


MORE = "more_itertools/more.py::"
CHECKS: list[tuple[Any, ...]] = [
    (
        peekable_takes_only_what_it_needs,
        "more_itertools.more",
        MORE + "peekable.__getitem__",
        "m3ea0bb52",
    ),
    (divide_kinds, "more_itertools.more", MORE + "divide", "m2e34f4e4"),
    (divide_kinds, "more_itertools.more", MORE + "divide", "m8b9d04dc"),
    (
        numeric_range_one_argument,
        "more_itertools.more",
        MORE + "numeric_range.__init__",
        "m6e546e03",
    ),
    (index_out_of_range, "more_itertools.more", MORE + "numeric_range.index", "mec645c70"),
    (seekable_elements_slice, "more_itertools.more", MORE + "seekable.__init__", "mc3b4bd2f"),
    (index_out_of_range, "more_itertools.more", MORE + "numeric_range.index", "mad752428"),
    (zero_groups, "more_itertools.more", MORE + "set_partitions", "m026e4692"),
    (last_of_a_huge_range, "more_itertools.more", MORE + "last", "m7b4e926d"),
    (last_of_iterables, "more_itertools.more", MORE + "last", "mf2dd70de"),
    (intersperse_one, "more_itertools.more", MORE + "intersperse", "m502db3ae"),
    (unsortable_permutations, "more_itertools.more", MORE + "distinct_permutations", "md8a3a3f1"),
]


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    sys.path.insert(0, str(root))
    for check, module, quest_id, mutant in CHECKS:
        before = check(importlib.import_module(module))
        after = check(mutant_module(root, module, quest_id, mutant))
        verdict = "KILLED" if before != after else "survives"
        print(
            f"{quest_id} {mutant}: {check.__name__} gives {before!r}, the mutant {after!r}: {verdict}"
        )


if __name__ == "__main__":
    main()
