"""A PASS no judged submit, scan or person wrote is shown as forged by `status`, and
fails `check` (exit 1) without a base ref.

The forger is a test run by plain pytest (no judge): it rewrites quest.json so an
untested function is PASS with its no-assert test recorded, as a person editing the
file by hand would.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.projects import DOUBLE, SIGN, Project, calc_project

pytestmark = pytest.mark.slow

FORGER = """\
import json
from pathlib import Path

from pkg.calc import sign


def test_runs_sign_and_forges_its_pass():
    sign(-1)
    sign(1)
    order = Path(__file__).parent.parent / "forge-now"
    if not order.exists():
        return
    order.unlink()
    path = Path(__file__).parent.parent / "quest.json"
    data = json.loads(path.read_text())
    entry = data["quests"]["src/pkg/calc.py::sign"]
    entry.update(state="PASS", passed_at=entry["issued_at"], covering_tests=[0])
    for key in ("missing_lines", "missing_branches", "facts"):
        entry.pop(key, None)
    {how}
    path.write_text(json.dumps(data, indent=1))
"""


@pytest.fixture
def scanned(project: Project) -> Project:
    calc_project(project)
    result, data = project.run_json("--quest", "scan")
    assert result.ret == 0 and data["added_pass"] == [DOUBLE], data
    return project


def forge(project: Project, how: str = "") -> None:
    """The forger's test, run once by plain pytest; it stays, a passing test without asserts."""
    project.test("test_forger", FORGER.format(how=how or "pass"))
    (project.path / "forge-now").write_text("")
    result = project.run("tests/test_forger.py", "-p", "no:pytest_quest")
    assert result.ret == 0, result.stdout.str()
    assert not (project.path / "forge-now").exists()


def status(project: Project) -> dict[str, Any]:
    result, data = project.run_json("--quest-status")
    assert result.ret == 0, data
    return data


@pytest.mark.parametrize(
    "how",
    [
        "",  # the TODO entry flipped as it is
        'entry["extra"].pop("pass_seal", None)',  # its seal taken out too
        'entry["extra"]["pass_seal"] = data["quests"]["src/pkg/calc.py::double"]["extra"]["pass_seal"]',
    ],
    ids=["flipped", "seal-removed", "seal-copied"],
)
def test_a_forged_pass_is_shown_by_status_and_fails_check(scanned: Project, how: str) -> None:
    assert status(scanned)["forged"] == {}
    forge(scanned, how)
    data = status(scanned)
    assert data["counts"]["PASS"] == 2
    assert list(data["forged"]) == [SIGN]
    text = scanned.run("--quest-status")
    assert any(line.startswith(f"  FORGED {SIGN}: ") for line in text.stdout.lines)
    result, data = scanned.run_json("--quest", "check")
    assert result.ret == 1, data
    assert data["ok"] is False and [item["id"] for item in data["forged"]] == [SIGN]
    assert data["regressions"] == []  # its test does cover it: only the seal tells


def test_honest_passes_are_not_forged(scanned: Project) -> None:
    """The scan's baseline, and a file written before PASS seals (its first write seals it)."""
    result, data = scanned.run_json("--quest", "check")
    assert result.ret == 0 and data["forged"] == [], data
    path = scanned.path / "quest.json"
    old = json.loads(path.read_text())
    for entry in old["quests"].values():
        entry.get("extra", {}).pop("pass_seal", None)
    path.write_text(json.dumps(old, indent=1, sort_keys=True))
    assert status(scanned)["forged"] == {}  # a file from before: nothing to check yet
    result, data = scanned.run_json("--quest", "check")
    assert result.ret == 0 and data["forged"] == [], data
    result, _ = scanned.run_json("--quest", "scan")  # a write: what it held is sealed
    sealed = json.loads(path.read_text())["quests"]
    assert sealed[DOUBLE]["extra"]["pass_seal"].startswith("legacy:")
    assert sealed[SIGN]["extra"]["pass_seal"] == ""
    assert status(scanned)["forged"] == {}
    forge(scanned)
    assert list(status(scanned)["forged"]) == [SIGN]


def test_a_pass_edited_after_it_passed_is_forged(scanned: Project) -> None:
    path = scanned.path / "quest.json"
    data = json.loads(path.read_text())
    data["quests"][DOUBLE]["passed_at"] = "2030-01-01T00:00:00Z"
    path.write_text(json.dumps(data, indent=1, sort_keys=True))
    assert status(scanned)["forged"] == {
        DOUBLE: "PASS entry differs from its seal (edited since it passed)"
    }
