"""The self-measurement switch for what end-to-end tests start (tests/conftest.py, docs/ci.md)."""

from __future__ import annotations

import os

import pytest

from tests.support.runner import SELF_COVERAGE_SWITCH, children_self_coverage

# As the session has it (module import happens before any fixture sets it per test).
SESSION = os.environ.get(SELF_COVERAGE_SWITCH)


def expected(marked: bool) -> str | None:
    return children_self_coverage(SESSION, end_to_end=True, marked=marked) or SESSION


def test_an_unmarked_end_to_end_test_starts_its_children_unmeasured() -> None:
    assert os.environ.get(SELF_COVERAGE_SWITCH) == expected(marked=False)
    if SESSION == "1":
        assert expected(marked=False) == "0"


@pytest.mark.children_measured
def test_a_marked_one_starts_them_measured() -> None:
    assert os.environ.get(SELF_COVERAGE_SWITCH) == expected(marked=True)
    if SESSION == "1":
        assert expected(marked=True) == "1"
