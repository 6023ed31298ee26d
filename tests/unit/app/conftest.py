"""In-process fixtures for the use cases of app/."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_calc import CALC_TESTS, CLAMP, SIGN, CalcProject


@pytest.fixture
def calc(tmp_path: Path) -> CalcProject:
    """The calc project, scanned: double PASS (test_double), sign and clamp TODO."""
    project = CalcProject(tmp_path)
    project.test("test_calc", CALC_TESTS)
    data = project.scan()
    assert data["added"] == [SIGN, CLAMP]
    return project
