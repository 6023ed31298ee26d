"""check's and scan's child is given the user's pytest arguments less pytest-quest's own."""

from __future__ import annotations

import pytest

from pytest_quest.plugin.judge import suite_args


def test_quest_options_and_their_values_go_and_everything_else_stays(
    pytester: pytest.Pytester,
) -> None:
    config = pytester.parseconfig()
    given = [
        "--quest",
        "check",
        "-k",
        "not slow",
        "--quest-format",
        "json",
        "--quest-full",
        "tests/test_a.py",
        "--quest-source=src",
        "--runslow",  # a conftest's option, unknown here: kept
        "-n",
        "2",
        "--",
        "--quest-file",
    ]
    assert suite_args(config, given) == [
        "-k",
        "not slow",
        "tests/test_a.py",
        "--runslow",
        "-n",
        "2",
        "--",
        "--quest-file",
    ]
