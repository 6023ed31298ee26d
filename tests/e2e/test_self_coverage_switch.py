"""The self-measurement switch for what end-to-end tests start (tests/conftest.py, docs/ci.md)."""

from __future__ import annotations

import os

import pytest

from tests.support.runner import SELF_COVERAGE_SWITCH

# As the session has it (module import happens before any fixture sets it per test).
SESSION = os.environ.get(SELF_COVERAGE_SWITCH)


def test_an_unmarked_end_to_end_test_starts_its_children_unmeasured() -> None:
    assert os.environ.get(SELF_COVERAGE_SWITCH) == ("0" if SESSION == "1" else SESSION)


@pytest.mark.children_measured
def test_a_marked_one_starts_them_measured() -> None:
    assert os.environ.get(SELF_COVERAGE_SWITCH) == SESSION
