"""Bad option values, end to end: each is exit 4 naming the option, nothing else.

No traceback, the ratchet file's bytes unchanged, one JSON object under
``--quest-format json``, no child process started (a usage error comes
before any test runs), for command-line and ini values alike.
"""

from __future__ import annotations

import json

import pytest

from tests.support.projects import CALC, TEST_DOUBLE, Project, scanned_template

SIGN = "src/pkg/calc.py::sign"


def build(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_calc", TEST_DOUBLE)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return scanned_template(tmp_path_factory, build)[0]


@pytest.fixture
def scanned(template: Project, project: Project) -> Project:
    return project.fill_from(template)


ROWS = [
    (("--quest", "next", "--quest-lock-timeout=nan"), "argument --quest-lock-timeout: 'nan' is not a finite number"),
    (("--quest", "next", "--quest-lock-timeout=inf"), "argument --quest-lock-timeout: 'inf' is not a finite number"),
    (("--quest", "submit", "--quest-id", SIGN, "--quest-timeout=nan"), "argument --quest-timeout: 'nan' is not a finite number"),
    (("--quest", "submit", "--quest-id", SIGN, "--quest-timeout=1e309"), "argument --quest-timeout: '1e309' is not a finite number"),
    (("--quest", "submit", "--quest-id", SIGN, "--quest-max-tries=" + "1" + "0" * 26), "argument --quest-max-tries: 100000000000000000000000000 is more than 1000"),
    (("--quest", "next", "--quest-id="), "argument --quest-id: expected a quest id, got an empty value"),
    (("--quest", "submit", "--quest-id", " "), "argument --quest-id: expected a quest id, got an empty value"),
    (("--quest", "scna"), "argument --quest: unknown quest command 'scna' (choose from "),
]  # fmt: skip


def assert_refused(
    scanned: Project, result: pytest.RunResult, expected: str, before: bytes
) -> None:
    everything = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, everything
    assert expected in everything, everything
    assert "Traceback" not in everything and "INTERNALERROR" not in everything
    assert (scanned.path / "quest.json").read_bytes() == before
    assert not list(scanned.path.glob("quest.json.*.tmp"))


# ROWS[:3] run in JSON mode (below), with the same checks and the one object too.
@pytest.mark.parametrize(("args", "expected"), ROWS[3:])
def test_a_bad_option_value_is_a_usage_error_naming_it(
    scanned: Project, args: list[str], expected: str
) -> None:
    before = (scanned.path / "quest.json").read_bytes()
    result = scanned.run(*args)
    assert_refused(scanned, result, expected, before)
    if "scna" in args:
        assert "did you mean scan?" in result.stderr.str()


@pytest.mark.parametrize(("args", "expected"), ROWS[:3])
def test_in_json_mode_the_error_is_the_one_object(
    scanned: Project, args: list[str], expected: str
) -> None:
    before = (scanned.path / "quest.json").read_bytes()
    result = scanned.run(*args, "--quest-format", "json")
    assert_refused(scanned, result, expected, before)
    assert json.loads(result.stdout.str())["error"].startswith(expected)


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ('quest_lock_timeout = "nan"', "ini option quest_lock_timeout: "),
        ('quest_timeout = "1e309"', "ini option quest_timeout: "),
        ('quest_max_tries = "100000000000000000000000000"', "ini option quest_max_tries: "),
        ('quest_id = ""', "ini option quest_id: expected a quest id, got an empty value"),
    ],
)
def test_the_same_checks_hold_for_ini_values(scanned: Project, setting: str, expected: str) -> None:
    pyproject = scanned.path / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace("[tool.coverage.run]", setting + "\n\n[tool.coverage.run]")
    )
    before = (scanned.path / "quest.json").read_bytes()
    result = scanned.run("--quest", "next")
    assert_refused(scanned, result, expected, before)
