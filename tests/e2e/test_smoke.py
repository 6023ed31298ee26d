"""The loop in one breath: scan, next, submit to PASS."""

from tests.support.projects import CALC, TEST_DOUBLE, TEST_SIGN, Project
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
