"""app/incremental.py's plan as shown: its JSON part, its summary line, files under the roots."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_quest.app.incremental import Plan, _under_roots


def test_as_data_of_an_incremental_plan() -> None:
    plan = Plan(files={}, run={"a", "b"}, replay={"c": {}, "d": {}, "e": {}})
    assert plan.as_data() == {"ran": 2, "kept": 3, "full": None}


def test_as_data_of_a_full_plan() -> None:
    plan = Plan(files={}, full="no previous run recorded", run={"a"})
    assert plan.as_data() == {"ran": 1, "kept": 0, "full": "no previous run recorded"}


def test_summary_of_a_full_plan() -> None:
    assert Plan(files={}, full="the config changed").summary() == "full run: the config changed"


def test_summary_of_an_incremental_plan() -> None:
    plan = Plan(files={}, run={"a"}, replay={"c": {}, "d": {}})
    assert plan.summary() == (
        "incremental: 1 of 3 tests ran; 2 kept their recorded outcome and coverage "
        "(--quest-full runs them all)"
    )
    alone = Plan(files={}, run={"a"})
    assert alone.summary() == (
        "incremental: 1 of 1 test ran; 0 kept their recorded outcome and coverage "
        "(--quest-full runs them all)"
    )


def test_under_roots() -> None:
    roots = [f"{os.sep}p{os.sep}src", f"{os.sep}p{os.sep}lib"]
    assert _under_roots(Path("/p/src/m.py"), roots) is True
    assert _under_roots(Path("/p/lib/deep/m.py"), roots) is True
    assert _under_roots(Path("/p/src/m.txt"), roots) is False
    assert _under_roots(Path("/p/srcx/m.py"), roots) is False
    assert _under_roots(Path("/p/other/m.py"), roots) is False
    assert _under_roots(Path("/p/src/m.py"), []) is False
