""" "Did you mean" for a mistyped quest id (difflib), as for a mistyped command."""

from __future__ import annotations

import pytest
from app_calc import CLAMP, SIGN, CalcProject

from pytest_quest.app.next import next_quest
from pytest_quest.app.options import suggest_quest_ids
from pytest_quest.core.errors import QuestUsageError

IDS = [
    "src/pkg/calc.py::double",
    "src/pkg/calc.py::sign",
    "src/pkg/calc.py::clamp",
    "src/pkg/cart.py::Cart.add",
    "src/pkg/cart.py::Cart.add@2",
    "src/pkg/text.py::slug",
]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("src/pkg/calc.py::sing", "; did you mean src/pkg/calc.py::sign?"),
        ("src/pkg/calc.py::clam", "; did you mean src/pkg/calc.py::clamp?"),
        # only the function's name: the ids holding it
        ("sign", "; did you mean src/pkg/calc.py::sign?"),
        ("Cart.add", "; did you mean src/pkg/cart.py::Cart.add or src/pkg/cart.py::Cart.add@2?"),
        # a typo in the file
        ("src/pkg/calk.py::sign", "; did you mean src/pkg/calc.py::sign?"),
        # the right name in the wrong file
        ("src/pkg/text.py::sign", "; did you mean src/pkg/calc.py::sign?"),
        # nothing close
        ("nope", ""),
        ("src/pkg/calc.py::zzzzzz", ""),
        ("", ""),
    ],
)
def test_suggestions(given: str, expected: str) -> None:
    assert suggest_quest_ids(given, IDS) == expected


def test_at_most_three_suggestions() -> None:
    ids = [f"src/m.py::f{n}" for n in range(10)]
    assert suggest_quest_ids("src/m.py::f", ids).count("src/m.py::") == 3


def test_next_suggests_the_nearest_quest_id(calc: CalcProject) -> None:
    with pytest.raises(QuestUsageError) as caught:
        next_quest(calc.context("next", quest_id=SIGN.replace("sign", "sing")))
    assert str(caught.value) == (
        "unknown quest id 'src/pkg/calc.py::sing'; `pytest --quest-status --quest-format json` "
        f"lists them; did you mean {SIGN}?"
    )
    with pytest.raises(QuestUsageError, match=f"did you mean {CLAMP}"):
        next_quest(calc.context("next", quest_id="clamp"))


def test_person_actions_suggest_the_nearest_quest_id(calc: CalcProject) -> None:
    from pytest_quest.app.person import reopen

    with pytest.raises(QuestUsageError, match=f"unknown quest id; .* did you mean {SIGN}\\?$"):
        reopen(calc.context("reopen", reopen="src/pkg/calc.py::sing"))
