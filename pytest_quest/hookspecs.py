"""Hooks pytest-quest adds to pytest; plugins implement them like any pytest hook."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec()
def pytest_quest_l1_check(quest: Any, function: Any, run: Any) -> Any:
    """L1: a deterministic extra gate check; return ``[(Verdict, Fact), ...]`` (FAIL or REVIEW)."""


@pytest.hookspec()
def pytest_quest_verify(quest: Any, function_source: str, tests: Any) -> Any:
    """L2: an independent verifier; return findings that can only raise REVIEW, never PASS."""
