r"""Killing checks for surviving more-itertools mutants (the false FAILs of 2026-12-gate-research.md).

    python benchmarks/research/killing_checks_more_itertools.py /path/to/more_itertools-11.2.1 [WORD...]

(WORDs: only the checks of the quest ids containing one of them.)

As benchmarks/research/killing_checks_dateutil.py (whose `mutant_module` it uses):
each check runs on the original module and on a copy with one planned
mutant applied; the same result on both marks a false FAIL's mutant.
"""

from __future__ import annotations

import importlib
import signal
import sys
from collections.abc import Callable
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any

from pytest_quest.core.mutants import changed_value, plan_mutants
from pytest_quest.core.operators import ALL_OPERATORS
from pytest_quest.engine.source import facts_from_source

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


class OnlyReversed:
    """Reversible, not iterable: `last` takes its item from `__reversed__`."""

    def __reversed__(self) -> Any:
        return iter(["end"])


def last_of_a_reversible(m: Any) -> Any:
    return outcome(lambda: m.last(OnlyReversed()))


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


def numeric_range_one_argument(m: Any) -> Any:
    from decimal import Decimal
    from fractions import Fraction

    return [list(m.numeric_range(s)) for s in (3, 2.5, Decimal("2"), Fraction(5, 2))]


def index_out_of_range(m: Any) -> Any:
    # inf changes only the ValueError's message; an int too large for a float
    # range raises OverflowError in the mutant's `divmod` (ValueError in the original).
    up, down = m.numeric_range(0, 10), m.numeric_range(10, 0, -1)
    up_f, down_f = m.numeric_range(0.0, 10.0), m.numeric_range(10.0, 0.0, -1.0)
    values = (20, -3, float("inf"), float("-inf"), 10**400, -(10**400))
    return [outcome(partial(r.index, v)) for r in (up, down, up_f, down_f) for v in values]


def seekable_elements_slice(m: Any) -> Any:
    s = m.seekable("abcd")
    list(s)
    return outcome(lambda: list(s.elements()[0:2]))


def zero_groups(m: Any) -> Any:
    # [] into 0 groups: the original raises ValueError, the mutant yields one empty partition.
    return outcome(lambda: list(m.set_partitions([1, 2], 0))), outcome(
        lambda: list(m.set_partitions([], 0))
    )


def peekable_empty_slice_takes_nothing(m: Any) -> Any:
    it = iter(range(10))
    p = m.peekable(it)
    return p[:0], next(it)


def peekable_reversed_slices(m: Any) -> Any:
    slices = (slice(None, None, -1), slice(None, 2, -1), slice(5, None, -2), slice(-2, None, -1))
    found = []
    for s in slices:
        it = iter(range(10))
        p = m.peekable(it)
        found.append((p[s], list(it), list(p)))
    return found


def peekable_first_item_takes_one(m: Any) -> Any:
    it = iter(range(10))
    p = m.peekable(it)
    return p[0], outcome(partial(next, it))


def equal_two_item_ranges(m: Any) -> Any:
    return m.numeric_range(0, 4, 2) == m.numeric_range(0, 2, 1)


def circular_shifts_by_two(m: Any) -> Any:
    return list(m.circular_shifts(range(4), 2))


def windows_with_a_short_last_step(m: Any) -> Any:
    return list(m.windowed([1, 2, 3, 4], 3, step=2))


def every_substring(m: Any) -> Any:
    return [list(m.substrings(s)) for s in ("", "a", "abc", iter([1, 2]))]


def every_substring_index(m: Any) -> Any:
    return [
        list(m.substrings_indexes(s, reverse))
        for s in ("", "a", "abc")
        for reverse in (False, True)
    ]


def offsets_of_a_zero_that_is_no_int(m: Any) -> Any:
    return outcome(lambda: list(m.zip_offset("ab", "cde", offsets=(0.0, 1))))


def offsets_of_zero(m: Any) -> Any:
    it = iter("xyz")
    return list(m.zip_offset(it, "ab", offsets=(0, 0))), list(it)


def range_lengths(m: Any) -> Any:
    from decimal import Decimal
    from fractions import Fraction

    ranges: list[tuple[Any, ...]] = [
        (0, 10, 3),
        (0, 9, 3),
        (0, 1, 5),
        (10, 0, -3),
        (0.0, 1.0, 0.1),
        (0.0, 0.3, 0.1),
    ]
    ranges += [
        (1.5, 0.0, -0.5),
        (Decimal("0"), Decimal("1"), Decimal("0.3")),
        (0, Fraction(7, 3), Fraction(1, 3)),
    ]
    ranges += [(0.0, 1.0, 1e-3), (-0.7, 0.7, 0.1), (0, 10**15, 7)]
    return [len(m.numeric_range(*r)) for r in ranges]


def seekable_sources(m: Any) -> Any:
    it = iter("abcd")
    s = m.seekable(it)
    first = next(s), list(it)
    s2 = m.seekable("abc")
    return first, bool(s2), s2.peek(), list(s2), outcome(partial(m.seekable, 5))


def partitions_by_size(m: Any) -> Any:
    return [list(m.set_partitions(it, k)) for it in ([], [1], [1, 2, 3]) for k in (None, 1, 2)]


def time_limited_zero(m: Any) -> Any:
    it = iter([1, 2])
    t = m.time_limited(0, it)
    empty = m.time_limited(0, [])
    return list(t), t.timed_out, next(it), list(empty), empty.timed_out


def time_limited_one_second(m: Any) -> Any:
    return list(m.time_limited(1, [1, 2]))


def weighted_sample_of_a_small_population(m: Any) -> Any:
    return outcome(lambda: sorted(m.sample([1, 2], 3, weights=[1, 1])))


def weighted_sample_of_one(m: Any) -> Any:
    return outcome(lambda: len(m.sample([1, 2, 3], 1, weights=[1, 1, 1])))


def counted_sample_of_a_small_population(m: Any) -> Any:
    return outcome(lambda: sorted(m.sample("ab", 3, counts=[1, 1])))


def permutations_by_index(m: Any) -> Any:
    found = []
    for it, r in (("abcd", None), ("abcd", 2), ("ab", 0), ("abc", 3)):
        c = m.perm(len(it), len(it) if r is None else r)
        found.append([m.nth_permutation(it, r, i) for i in range(-c, c)])
    return found


def permutation_indexes(m: Any) -> Any:
    elements: tuple[list[int], ...] = (
        [],
        [0],
        [1, 3, 2],
        [4, 3, 2, 1, 0],
        [0, 1, 2, 3, 4, 5],
        [0, 1, 2, 3, 4, 0],
        [9],
    )
    return [outcome(partial(m.permutation_index, e, range(5))) for e in elements]


def unique_in_a_window_of_three(m: Any) -> Any:
    return list(m.unique_in_window("aabca", 3))


def gray_products(m: Any) -> Any:
    return [list(m.gray_product(*its)) for its in (("ab",), ("ab", "cde"), ("ab", "cd", "ef"))]


def transforms(m: Any) -> Any:
    return [[round(abs(x), 9) for x in f([1, 2, 3])] for f in (m.dft, m.idft)]


def small_prime_bounds(m: Any) -> Any:
    return [m._nth_prime_bounds(n) for n in (1, 5, 6, 688_383, 10**7)]


def large_primes(m: Any) -> Any:
    return [
        m.nth_prime(n, approximate=a) for n in (10**6, 10**6 + 1, 2 * 10**6) for a in (False, True)
    ]


def close_returns_none(m: Any) -> Any:
    def gen() -> Any:
        yield 1

    return m.serialize(gen()).close()


def tee_counts(m: Any) -> Any:
    return [len(m.concurrent_tee("ab", n)) for n in (1, 2, 3)]


def lcg_of_small_ranges(m: Any) -> Any:
    return [outcome(partial(sorted, m._full_period_lcg(n))) for n in (0, 1, 2, 3)]


def seeded(call: Callable[[], Any]) -> Any:
    """`call()` with `random` seeded (its state restored after)."""
    import random

    state = random.getstate()
    random.seed(8675309)
    try:
        return call()
    finally:
        random.setstate(state)


def lcg_orders(m: Any) -> Any:
    """A permutation of range(n) for every mutant; the seeded order tells them apart."""
    orders = seeded(lambda: [list(m._full_period_lcg(n)) for n in (10, 100)])
    return [sorted(o) == list(range(len(o))) for o in orders], [o[:10] for o in orders]


def first_batch_of_a_long_range(m: Any) -> Any:
    # The first 1,024 of a shuffled range(4096) are 0 to 1023 with a probability under 10**-900.
    first = seeded(lambda: sorted(islice(m._random_ordered_indices(4096), 1024)))
    return first == list(range(1024))


def shuffled_indices(m: Any) -> Any:
    orders = seeded(lambda: [list(m._random_ordered_indices(n)) for n in (10, 1025, 3000)])
    return [sorted(o) == list(range(len(o))) for o in orders], [o[:5] for o in orders]


def consume_all(m: Any) -> Any:
    it = iter(range(5))
    m.consume(it)
    return list(it)


def consume_releases_each_item(m: Any) -> Any:
    """Whether an item yielded before is still alive when the next one is made (a lifetime)."""
    import weakref

    class Item:
        pass

    alive = []

    def items() -> Any:
        previous = None
        for _ in range(3):
            item = Item()
            if previous is not None:
                alive.append(previous() is not None)
            previous = weakref.ref(item)
            yield item
            del item

    m.consume(items())
    return alive


def intersperse_by_a_float_one(m: Any) -> Any:
    """n=1.0: the original's `n == 1` path accepts it; n=2.0 raises in both (an undocumented n)."""
    return outcome(lambda: list(m.intersperse("!", [1, 2, 3], 1.0)))


def numeric_range_of_a_string(m: Any) -> Any:
    """A str stop: the original raises TypeError (`str - str`); `str + str` makes a range."""
    return outcome(lambda: list(islice(m.numeric_range("a"), 3)))


def combination_from_the_end(m: Any) -> Any:
    return outcome(lambda: m.nth_combination(range(5), 3, -1))


def sliding_window_of_zero(m: Any) -> Any:
    return outcome(lambda: m.sliding_window([1, 2], 0) and "no error at the call")


def wide_window_takes_nothing_before_use(m: Any) -> Any:
    it = iter(range(30))
    windows = m.sliding_window(it, 25)
    taken = next(it)
    listed = list(windows)
    return taken, len(listed), listed[0][:3]


def index_kinds(m: Any) -> Any:
    cases = (("abcab", "ab"), (iter([1.0, 2, 1]), 1), ([0, 1, 0], 0), (range(5), 3))

    def found(it: Any, v: Any) -> Any:
        return list(m.iter_index(it, v))

    return [outcome(partial(found, it, v)) for it, v in cases]


def primes_below(m: Any) -> Any:
    return [list(m.sieve(n)) for n in (*range(60), 120, 121, 122, 168, 169, 170, 1000, 1024)]


def column_times_row(m: Any) -> Any:
    return outcome(lambda: list(m.matmul([[1], [2]], [[3, 4]])))


def factors_of_squares(m: Any) -> Any:
    return [list(m.factor(n)) for n in (421, 422, 211 * 211, 211 * 223, 44_519, 10**9 + 7)]


def medians(m: Any) -> Any:
    from decimal import Decimal

    data = [5, 9, 4, 12, 8, 9, Decimal("1.123456789"), 2.5]
    return list(m.running_median(data)), list(m.running_median(data, maxlen=3))


def shifts_to_odd(m: Any) -> Any:
    """The docstring's contract for any n (the library calls it with even n only); 0 asserts."""
    m._shift_to_odd.cache_clear()
    return [outcome(partial(m._shift_to_odd, n)) for n in (0, 1, 3, 6, 7, 12, 2**40)]


def probable_prime_outside_its_assert(m: Any) -> Any:
    """n even or base out of range: the original's precondition assert fires."""
    return [outcome(partial(m._strong_probable_prime, n, b)) for n, b in ((4, 2), (9, 9), (2, 1))]


def probable_primes(m: Any) -> Any:
    """Every odd n < 1500, bases 2 to 40: the two extra squarings (x**(n-1), x**(2(n-1)))
    are never -1 mod n (a prime factor p would need p = 1 mod 2**(s+1))."""
    spp = m._strong_probable_prime
    return [spp(n, b) for n in range(5, 1500, 2) for b in range(2, min(n, 41))]


def primality(m: Any) -> Any:
    """Even numbers and small multiples: the trial division is what keeps even n from the
    Miller-Rabin asserts; without it for 3 to 13 the exact bases still say composite."""
    numbers = (18, 32, 21, 25, 35, 49, 121, 169, 3 * 2047, 5 * 9080191, 7 * 4759123141, 97)
    return [outcome(partial(m.is_prime, n)) for n in numbers]


MORE = "more_itertools/more.py::"
RECIPES = "more_itertools/recipes.py::"
CHECKS: list[tuple[Any, ...]] = [
    (
        peekable_takes_only_what_it_needs,
        "more_itertools.more",
        MORE + "peekable.__getitem__",
        "m3ea0bb52",
    ),
    (
        numeric_range_one_argument,
        "more_itertools.more",
        MORE + "numeric_range.__init__",
        "m6e546e03",
    ),
    (
        numeric_range_of_a_string,
        "more_itertools.more",
        MORE + "numeric_range.__init__",
        "m6e546e03",
    ),
    (index_out_of_range, "more_itertools.more", MORE + "numeric_range.index", "mec645c70"),
    (seekable_elements_slice, "more_itertools.more", MORE + "seekable.__init__", "mc3b4bd2f"),
    (index_out_of_range, "more_itertools.more", MORE + "numeric_range.index", "mad752428"),
    (zero_groups, "more_itertools.more", MORE + "set_partitions", "m026e4692"),
    (last_of_a_huge_range, "more_itertools.more", MORE + "last", "m7b4e926d"),
    (last_of_a_reversible, "more_itertools.more", MORE + "last", "m7b4e926d"),
    (last_of_iterables, "more_itertools.more", MORE + "last", "mf2dd70de"),
    (intersperse_one, "more_itertools.more", MORE + "intersperse", "m502db3ae"),
    (intersperse_by_a_float_one, "more_itertools.more", MORE + "intersperse", "m502db3ae"),
    (unsortable_permutations, "more_itertools.more", MORE + "distinct_permutations", "md8a3a3f1"),
    (
        peekable_empty_slice_takes_nothing,
        "more_itertools.more",
        MORE + "peekable._get_slice",
        "m4ea0331f",
    ),
    (peekable_reversed_slices, "more_itertools.more", MORE + "peekable._get_slice", "m46bc0f19"),
    (peekable_reversed_slices, "more_itertools.more", MORE + "peekable._get_slice", "m7ef8d915"),
    (peekable_reversed_slices, "more_itertools.more", MORE + "peekable._get_slice", "maa27dd84"),
    (peekable_reversed_slices, "more_itertools.more", MORE + "peekable._get_slice", "m9b08c6cc"),
    (
        peekable_first_item_takes_one,
        "more_itertools.more",
        MORE + "peekable.__getitem__",
        "m1999425a",
    ),
    (equal_two_item_ranges, "more_itertools.more", MORE + "numeric_range.__eq__", "mf32d0569"),
    (range_lengths, "more_itertools.more", MORE + "numeric_range._len", "md380f4b7"),
    (range_lengths, "more_itertools.more", MORE + "numeric_range._len", "m7a8a915d"),
    (range_lengths, "more_itertools.more", MORE + "numeric_range._len", "m677eb5a2"),
    (range_lengths, "more_itertools.more", MORE + "numeric_range._len", "mb953aeb7"),
    (seekable_sources, "more_itertools.more", MORE + "seekable.__init__", "m5c6f7e3f"),
    (circular_shifts_by_two, "more_itertools.more", MORE + "circular_shifts", "m5aa39ca2"),
    (windows_with_a_short_last_step, "more_itertools.more", MORE + "windowed", "mc712090b"),
    (every_substring, "more_itertools.more", MORE + "substrings", "mc5e48dac"),
    (every_substring_index, "more_itertools.more", MORE + "substrings_indexes", "m17d0b682"),
    (offsets_of_a_zero_that_is_no_int, "more_itertools.more", MORE + "zip_offset", "m06fe6e60"),
    (offsets_of_zero, "more_itertools.more", MORE + "zip_offset", "m06fe6e60"),
    (partitions_by_size, "more_itertools.more", MORE + "set_partitions", "m20d260fc"),
    (time_limited_zero, "more_itertools.more", MORE + "time_limited.__next__", "m30c2ae81"),
    (time_limited_one_second, "more_itertools.more", MORE + "time_limited.__next__", "mf71ce9d6"),
    (
        weighted_sample_of_a_small_population,
        "more_itertools.more",
        MORE + "_sample_weighted",
        "me2801c80",
    ),
    (weighted_sample_of_one, "more_itertools.more", MORE + "_sample_weighted", "mf2063891"),
    (
        counted_sample_of_a_small_population,
        "more_itertools.more",
        MORE + "_sample_counted",
        "m4e567100",
    ),
    (permutations_by_index, "more_itertools.more", MORE + "nth_permutation", "m945c8844"),
    (permutation_indexes, "more_itertools.more", MORE + "permutation_index", "m3be1decd"),
    (unique_in_a_window_of_three, "more_itertools.more", MORE + "unique_in_window", "mf6e8799e"),
    (gray_products, "more_itertools.more", MORE + "gray_product", "m4805b034"),
    (transforms, "more_itertools.more", MORE + "dft", "m918359b0"),
    (transforms, "more_itertools.more", MORE + "idft", "m2c8d14b2"),
    (small_prime_bounds, "more_itertools.more", MORE + "_nth_prime_bounds", "mda403784"),
    (small_prime_bounds, "more_itertools.more", MORE + "_nth_prime_bounds", "ma7e1976a"),
    (large_primes, "more_itertools.more", MORE + "nth_prime", "m829412c8"),
    (large_primes, "more_itertools.more", MORE + "nth_prime", "m2c13d58c"),
    (large_primes, "more_itertools.more", MORE + "nth_prime", "m2475a2b7"),
    (close_returns_none, "more_itertools.more", MORE + "serialize.close", "m4faa877c"),
    (tee_counts, "more_itertools.more", MORE + "concurrent_tee", "mae8e9c40"),
    (tee_counts, "more_itertools.more", MORE + "concurrent_tee", "m64b1cd10"),
    (tee_counts, "more_itertools.more", MORE + "concurrent_tee", "m6f08f55c"),
    (tee_counts, "more_itertools.more", MORE + "concurrent_tee", "m1b68d15f"),
    (lcg_of_small_ranges, "more_itertools.more", MORE + "_full_period_lcg", "mc10abc24"),
    (lcg_of_small_ranges, "more_itertools.more", MORE + "_full_period_lcg", "m2cee705e"),
    (lcg_orders, "more_itertools.more", MORE + "_full_period_lcg", "m303c0a38"),
    (lcg_orders, "more_itertools.more", MORE + "_full_period_lcg", "m4f616994"),
    (lcg_orders, "more_itertools.more", MORE + "_full_period_lcg", "m0d155a5a"),
    (lcg_orders, "more_itertools.more", MORE + "_full_period_lcg", "m8da79ec5"),
    (
        first_batch_of_a_long_range,
        "more_itertools.more",
        MORE + "_random_ordered_indices",
        "m7909a530",
    ),
    (shuffled_indices, "more_itertools.more", MORE + "_random_ordered_indices", "m9a893c44"),
    (shuffled_indices, "more_itertools.more", MORE + "_random_ordered_indices", "m072580bc"),
    (consume_all, "more_itertools.recipes", RECIPES + "consume", "me92942cf"),
    (consume_releases_each_item, "more_itertools.recipes", RECIPES + "consume", "me92942cf"),
    (combination_from_the_end, "more_itertools.recipes", RECIPES + "nth_combination", "m6aeff259"),
    (combination_from_the_end, "more_itertools.recipes", RECIPES + "nth_combination", "mdb9b36f0"),
    (sliding_window_of_zero, "more_itertools.recipes", RECIPES + "sliding_window", "me369a30c"),
    (
        wide_window_takes_nothing_before_use,
        "more_itertools.recipes",
        RECIPES + "sliding_window",
        "m765c68c6",
    ),
    (index_kinds, "more_itertools.recipes", RECIPES + "iter_index", "m7b4079fa"),
    (index_kinds, "more_itertools.recipes", RECIPES + "iter_index", "m35a4a4df"),
    (index_kinds, "more_itertools.recipes", RECIPES + "iter_index", "mb9cf2508"),
    (primes_below, "more_itertools.recipes", RECIPES + "sieve", "md0d348f6"),
    (column_times_row, "more_itertools.recipes", RECIPES + "matmul", "m21757ba4"),
    (factors_of_squares, "more_itertools.recipes", RECIPES + "factor", "ma9b053cb"),
    (factors_of_squares, "more_itertools.recipes", RECIPES + "factor", "me9468dda"),
    (factors_of_squares, "more_itertools.recipes", RECIPES + "factor", "m34a8ff7f"),
    (medians, "more_itertools.recipes", RECIPES + "running_median", "m96174b25"),
    (shifts_to_odd, "more_itertools.recipes", RECIPES + "_shift_to_odd", "m478fa64d"),
    (shifts_to_odd, "more_itertools.recipes", RECIPES + "_shift_to_odd", "m76f1bae5"),
    (shifts_to_odd, "more_itertools.recipes", RECIPES + "_shift_to_odd", "m69baf892"),
    (
        probable_prime_outside_its_assert,
        "more_itertools.recipes",
        RECIPES + "_strong_probable_prime",
        "m3630db20",
    ),
    (
        probable_prime_outside_its_assert,
        "more_itertools.recipes",
        RECIPES + "_strong_probable_prime",
        "mddb7dfdd",
    ),
    (probable_primes, "more_itertools.recipes", RECIPES + "_strong_probable_prime", "m672f43d1"),
    (primality, "more_itertools.recipes", RECIPES + "is_prime", "m495e659a"),
    (primality, "more_itertools.recipes", RECIPES + "is_prime", "m9ae3e801"),
    (primality, "more_itertools.recipes", RECIPES + "is_prime", "mde07162d"),
    (primality, "more_itertools.recipes", RECIPES + "is_prime", "mfe106ace"),
    (primality, "more_itertools.recipes", RECIPES + "is_prime", "m57e050ce"),
    (primality, "more_itertools.recipes", RECIPES + "is_prime", "m6973aeeb"),
    (primality, "more_itertools.recipes", RECIPES + "is_prime", "mf570142d"),
    (primality, "more_itertools.recipes", RECIPES + "is_prime", "m36afc86f"),
]


def planned(root: Path, quest_id: str, mutant: str) -> bool:
    """Whether today's planner still plans `mutant` (every operator) for `quest_id`."""
    file = quest_id.split("::", maxsplit=1)[0]
    facts = facts_from_source(quest_id, file, root, all_missing=False)
    assert facts is not None, quest_id
    source = (root / file).read_text(encoding="utf-8")
    return any(m.id == mutant for m in plan_mutants(source, facts.start, ALL_OPERATORS))


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    sys.path.insert(0, str(root))
    wanted = sys.argv[2:]  # words of the quest ids to check (none: every check)
    for check, module, quest_id, mutant in CHECKS:
        if wanted and not any(word in quest_id for word in wanted):
            continue
        before = check(importlib.import_module(module))
        if not planned(root, quest_id, mutant):
            print(f"{quest_id} {mutant}: no longer planned")
            continue
        mutated = mutant_module(root, module, quest_id, mutant)
        # A `return.changed` mutant's call (in the child: a builtin it installs).
        mutated.pytest_quest_changed = changed_value
        after = check(mutated)
        verdict = "KILLED" if before != after else "survives"
        print(
            f"{quest_id} {mutant}: {check.__name__} gives {before!r}, the mutant {after!r}: {verdict}"
        )


if __name__ == "__main__":
    main()
