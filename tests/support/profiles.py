"""Hypothesis profiles: every example in the full run, a quarter of them in the fast loop.

Derandomized both: the same examples every run, so the project's own ratchet check
(`pytest --quest check` on tests/unit, the full profile) sees the same coverage each time.
The fast loop (``-m "not slow ..."``, tests/conftest.py) loads FAST: property tests there
are a quick look; the full run (run-tests.sh, CI) and the ratchet check run every example.
``--hypothesis-profile NAME`` chooses either by hand.
"""

from __future__ import annotations

from hypothesis import settings

FULL = "pytest-quest"
FAST = "pytest-quest-fast"
#: The fast loop runs this share of each property test's examples (at least MIN_FAST).
FAST_SHARE = 4
MIN_FAST = 10

settings.register_profile(FULL, derandomize=True, database=None, deadline=None)
settings.register_profile(
    FAST, parent=settings.get_profile(FULL), max_examples=max(MIN_FAST, 100 // FAST_SHARE)
)


def examples(full: int) -> int:
    """A test's `max_examples`: `full` in the full profile, a quarter of it in the fast one."""
    if settings.get_current_profile_name() == FAST:
        return max(MIN_FAST, full // FAST_SHARE)
    return full


def is_fast_loop(markexpr: str) -> bool:
    """Whether a ``-m`` expression is the fast loop's: it leaves the slow tests out."""
    return "not slow" in " ".join(markexpr.split())
