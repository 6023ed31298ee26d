"""The loop in one breath: scan, next, submit to PASS."""

import pytest

from tests.support.projects import CALC, PYPROJECT, TEST_DOUBLE, TEST_SIGN, Project
from tests.support.runner import assert_quiet


def test_scan_next_submit_pass(project: Project) -> None:
    project.source("calc", "\n" + CALC)
    project.test("test_calc", TEST_DOUBLE)
    result, data = project.run_json("--quest", "scan")
    assert result.ret == 0
    assert data["counts"] == {"TODO": 1, "PASS": 1, "REVIEW": 0, "DONE": 0, "EXCLUDED": 0}
    result, data = project.run_json("--quest", "next")
    assert data["quest"]["id"] == "src/pkg/calc.py::sign"
    assert data["quest"]["missing_lines"] == [7, 8, 9]
    project.test("test_sign", TEST_SIGN)
    result, data = project.run_json("--quest", "submit")
    assert data["verdict"] == "PASS", data
    # One JSON object and no pytest header, though its child ran the tests.
    assert_quiet(result)
    assert result.ret == 0
    assert data["remaining"] == 0
    assert project.ratchet()["quests"]["src/pkg/calc.py::sign"]["state"] == "PASS"


@pytest.mark.all_plugins
def test_the_plugin_turned_off_leaves_a_configured_strict_project_running(project: Project) -> None:
    """`-p no:quest` under `filterwarnings = error`: the quest ini keys stay known."""
    (project.path / "pyproject.toml").write_text(
        PYPROJECT.replace(
            "[tool.pytest.ini_options]\n",
            '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\nquest_max_tries = 5\n',
        )
    )
    project.source("calc", CALC)
    project.test("test_double", TEST_DOUBLE)
    result = project.run("-p", "no:quest")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=1)
    # Off means off: the quest commands are unknown then.
    assert project.run("-p", "no:quest", "--quest", "scan").ret == pytest.ExitCode.USAGE_ERROR
