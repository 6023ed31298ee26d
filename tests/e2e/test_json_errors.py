"""Under --quest-format json a usage error still prints its one JSON object on stdout."""

from __future__ import annotations

import json

import pytest

from tests.support.projects import Project


# An unknown command: the "scna" row (its message in full; "frobnicate" in text mode is
# in tests/e2e/test_bad_input.py).
@pytest.mark.parametrize(
    ("args", "command", "error"),
    [
        (
            ["--quest", "next", "--quest-max-tries", "0"],
            "next",
            "argument --quest-max-tries: 0 must",
        ),
        (["--quest", "scan", "--quest-source", "nope"], "scan", "source nope does not exist"),
        (["--quest", "scan", "--quest-timeout", "-1"], "scan", "argument --quest-timeout: -1 must"),
        (["--quest", "next"], "next", "no ratchet file at "),
        (
            ["--quest", "scna"],
            None,
            "argument --quest: unknown quest command 'scna' (choose from scan, next, submit, "
            "status, check, audit, export, combine); did you mean scan?",
        ),
        (
            ["--quest", "next", "-o", "quest_max_tries=two"],
            "next",
            "ini option quest_max_tries: ",
        ),
    ],
)
@pytest.mark.children_measured
def test_usage_error_is_one_json_object(
    project: Project, args: list[str], command: str, error: str
) -> None:
    result = project.run(*args, "--quest-format", "json")
    assert result.ret == 4
    data = json.loads(result.stdout.str())
    assert data["schema"] == "pytest-quest/1"
    assert data["command"] == command
    assert data["error"].startswith(error), data
    assert not (project.path / "quest.json").exists()
