"""app/dispute.py's `check_spots`: disputed lines and branches checked against the quest
before anything runs (a reason, the file, the function's lines)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_quest.app.dispute import check_spots
from pytest_quest.core.dispute import Spot
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Quest

QUEST = Quest(
    id="src/m.py::f", file="src/m.py", qualname="f", first=10, last=20, fingerprint="sha256:x"
)


def _ctx(dispute: str, reason: str | None = "no input reaches it") -> Any:
    return SimpleNamespace(options=SimpleNamespace(dispute=dispute, reason=reason))


def test_spots_inside_the_function() -> None:
    found = check_spots(_ctx("12, src/m.py:14, 15->17, 20->exit, 10"), QUEST)
    assert found == [
        Spot(None, 12, None),
        Spot("src/m.py", 14, None),
        Spot(None, 15, 17),
        Spot(None, 20, -1),
        Spot(None, 10, None),
    ]


def test_spots_need_a_reason() -> None:
    for reason in (None, "", "   "):
        with pytest.raises(QuestUsageError) as caught:
            check_spots(_ctx("12", reason), QUEST)
        assert str(caught.value) == (
            "--quest-dispute needs --quest-reason: why no input can reach the line "
            "(a person reads it)"
        )


def test_a_spot_in_another_file() -> None:
    with pytest.raises(QuestUsageError) as caught:
        check_spots(_ctx("src/other.py:12"), QUEST)
    assert str(caught.value) == "src/other.py:12 is not in the file of src/m.py::f (src/m.py)"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("9", "line 9 is not in src/m.py::f (lines 10-20)"),
        ("21", "line 21 is not in src/m.py::f (lines 10-20)"),
        ("15->21", "branch 15->21 is not in src/m.py::f (lines 10-20)"),
        ("9->12", "branch 9->12 is not in src/m.py::f (lines 10-20)"),
    ],
)
def test_a_spot_outside_the_function(given: str, said: str) -> None:
    with pytest.raises(QuestUsageError) as caught:
        check_spots(_ctx(given), QUEST)
    assert str(caught.value) == said


def test_no_spots_given() -> None:
    assert check_spots(_ctx(""), QUEST) == []
