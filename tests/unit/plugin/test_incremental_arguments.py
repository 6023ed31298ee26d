"""Which arguments an incremental run's record is keyed by: those that change what tests execute."""

from __future__ import annotations

import pytest

from pytest_quest.plugin.incremental import measured_arguments


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        (["--quest", "scan", "-q"], []),
        (["--quest=check", "--quest-format", "json", "--quest-full"], []),
        (["--quest-file=a.json", "--quest-run-data", "r.gz", "-v"], []),
        (["--quest", "check", "--quest-since", "main", "--quest-strict"], []),
        (["--quest", "scan", "-k", "fast", "tests/unit"], ["-k", "fast", "tests/unit"]),
        (
            ["-p", "no:randomly", "--quest", "scan", "-m", "slow"],
            ["-p", "no:randomly", "-m", "slow"],
        ),
        (["--quest-source=src", "--quest", "scan"], ["--quest-source=src"]),
    ],
)
def test_measured_arguments(given: list[str], kept: list[str]) -> None:
    assert measured_arguments(given) == kept
