"""Attacks on `pytest --quest check`: project code that patches the check or rewrites what it writes.

Each runs `pytest --quest check` in a subprocess on a throwaway project whose
one PASS function lost its covering test, so the honest answer is a
regression (exit 1).  The check decides in a process that loads no project
code; the suite runs in its child, in the sandbox the recorded policy asks for
(`bwrap`) or unsandboxed (`sandbox=off`).
"""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

from tests.support.projects import Project, built_template

ENGINES_ENV = "PYTEST_QUEST_SANDBOX_ENGINES"
CALC = """\
def sign(x):
    if x < 0:
        return -1
    return 1


def double(x):
    return 2 * x
"""
SIGN_ID = "src/pkg/calc.py::sign"
SIGN_TEST = """\
from pkg.calc import sign


def test_sign():
    assert sign(-5) == -1
    assert sign(3) == 1
"""
# Runs, passes, and does not reach `sign`: the check has a suite to run.
OTHER_TEST = """\
from pkg.calc import double


def test_double():
    assert double(2) == 4
"""
RECORD = ".quest/quest.json.run.gz"
EXPORT = "quest-report.json"

# Each makes the check say OK, or its files say so, if it runs where the check decides.
CHEATS = {
    "patch-check-ratchet": """
import pytest_quest.app.check as _c
_orig = _c.check_ratchet
def _fake(ratchet, functions):
    rep = _orig(ratchet, functions); rep.regressions.clear(); return rep
_c.check_ratchet = _fake
""",
    "edit-sys-modules": """
import sys
import pytest_quest.report.ci
_real = pytest_quest.report.ci.check_outcome
def _fake(report, *args, **kwargs):
    report.regressions.clear()
    return _real(report, *args, **kwargs)
sys.modules["pytest_quest.report.ci"].check_outcome = _fake
""",
    # Written when the process ends, after the check wrote its own.
    "rewrite-export": """
import atexit, json, os
def _forge():
    with open(os.path.join(os.path.dirname(__file__), "..", "quest-report.json"), "w") as out:
        json.dump({"regressions": [], "forged": True}, out)
atexit.register(_forge)
""",
    "rewrite-run-record": """
import atexit, os, shutil
def _forge():
    root = os.path.join(os.path.dirname(__file__), "..")
    shutil.copyfile(os.path.join(root, "good.run.gz"), os.path.join(root, ".quest", "quest.json.run.gz"))
atexit.register(_forge)
""",
}


def built(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_sign", SIGN_TEST)
    project.test("test_other", OTHER_TEST)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return built_template(tmp_path_factory, built)


@pytest.fixture(params=["bwrap", "off"])
def judged(
    request: pytest.FixtureRequest,
    project: Project,
    template: Project,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """`sign` PASS at a scan that recorded `sandbox=required` (bwrap) or `sandbox=off`; then
    its test removed: a regression for every check."""
    project.fill_from(template)
    monkeypatch.setenv(ENGINES_ENV, "bwrap" if request.param == "bwrap" else "")
    result, data = project.run_json("--quest", "scan")
    assert result.ret == 0, result.stderr.str()
    assert project.ratchet()["quests"][SIGN_ID]["state"] == "PASS", data
    policy = json.loads((project.path / "quest.json").read_text())["policy"]
    assert policy.get("sandbox", "off") == ("required" if request.param == "bwrap" else "off")
    # The scan's record: `test_sign` passed and covered `sign` (what a forger copies back).
    (project.path / "good.run.gz").write_bytes((project.path / RECORD).read_bytes())
    (project.path / "tests" / "test_sign.py").unlink()
    return str(request.param)


def check(project: Project) -> tuple[pytest.RunResult, dict[str, Any]]:
    return project.run_json("--quest", "check", "--quest-full", "--quest-export-to", EXPORT)


def assert_regression(result: pytest.RunResult, data: dict[str, Any]) -> None:
    assert result.ret == 1, (data, result.stderr.str())
    assert data["ok"] is False
    assert [r["id"] for r in data["regressions"]] == [SIGN_ID], data


@pytest.mark.slow
@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_a_conftest_cannot_make_a_regression_pass_the_check(
    project: Project, judged: str, cheat: str
) -> None:
    (project.path / "tests" / "conftest.py").write_text(CHEATS[cheat])
    result, data = check(project)
    assert_regression(result, data)
    # The export is the judge's: it names the regression.
    export = json.loads((project.path / EXPORT).read_text())
    assert "forged" not in export, export
    assert SIGN_ID in json.dumps(export["regressions"]), export
    # The run record is the judge's, of this run: the removed test is not in it.
    record = json.loads(gzip.decompress((project.path / RECORD).read_bytes()))
    assert "tests/test_sign.py::test_sign" not in record["tests"], sorted(record["tests"])
    assert "tests/test_other.py::test_double" in record["tests"]
    assert data["sandbox"] == ("none" if judged == "off" else "bwrap"), data


@pytest.mark.slow
def test_an_honest_check_of_the_same_project_reports_the_regression(
    project: Project, judged: str
) -> None:
    result, data = check(project)
    assert_regression(result, data)
    assert "REGRESSION" not in result.stdout.str()  # JSON mode: one object on stdout


# Makes every measured function a PASS baseline if it runs where the scan decides.
SCAN_CHEAT = """
import pytest_quest.app.scan as _s
_real = _s.merge_scan
def _fake(ratchet, functions, *args, **kwargs):
    for facts in functions:
        facts.missing_lines = []
        facts.missing_branches = []
    return _real(ratchet, functions, *args, **kwargs)
_s.merge_scan = _fake
"""
# Reaches `sign`'s one branch only: `sign` is a quest (TODO), never a PASS baseline.
HALF_TEST = """\
from pkg.calc import sign


def test_sign():
    assert sign(3) == 1
"""


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["bwrap", "off"])
def test_a_conftest_cannot_make_a_scan_record_a_pass_baseline(
    project: Project, template: Project, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    project.fill_from(template)
    monkeypatch.setenv(ENGINES_ENV, "bwrap" if engine == "bwrap" else "")
    project.test("test_sign", HALF_TEST)
    (project.path / "tests" / "conftest.py").write_text(SCAN_CHEAT)
    result, data = project.run_json("--quest", "scan")
    assert result.ret == 0, result.stderr.str()
    assert SIGN_ID in data["added"], data
    assert project.ratchet()["quests"][SIGN_ID]["state"] == "TODO"
    assert data["sandbox"] == ("none" if engine == "off" else "bwrap"), data


# Covers all of `sign`, then fails: what it ran counts for nothing, in a shard too.
FAILING_SIGN_TEST = """\
from pkg.calc import sign


def test_sign():
    assert sign(-5) == -1
    assert sign(3) == 1
    assert False, "fails after covering sign"
"""
# Each turns the failed test into a passed one in the shard, if it runs where the shard is written.
SHARD_CHEATS = {
    "patch-shard-out": """
import pytest_quest.app.shard as _s
_real = _s.shard_out
def _fake(ctx, run):
    for nodeid in ctx.run.outcomes:
        ctx.run.outcomes[nodeid] = "passed"
    return _real(ctx, run)
_s.shard_out = _fake
""",
    # Written when the process ends, after the shard was written.
    "rewrite-manifest": """
import atexit, json, os
def _forge():
    path = os.path.join(os.path.dirname(__file__), "..", "shard", "manifest.json")
    if os.path.exists(path):
        with open(path) as stream:
            manifest = json.load(stream)
        manifest["outcomes"] = {nodeid: "passed" for nodeid in manifest["outcomes"]}
        with open(path, "w") as stream:
            json.dump(manifest, stream)
atexit.register(_forge)
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["bwrap", "off"])
@pytest.mark.parametrize("cheat", sorted(SHARD_CHEATS))
def test_a_conftest_cannot_forge_the_shard_of_its_job(
    project: Project, template: Project, monkeypatch: pytest.MonkeyPatch, engine: str, cheat: str
) -> None:
    project.fill_from(template)
    monkeypatch.setenv(ENGINES_ENV, "bwrap" if engine == "bwrap" else "")
    project.test("test_sign", FAILING_SIGN_TEST)
    (project.path / "tests" / "conftest.py").write_text(SHARD_CHEATS[cheat])
    result, data = project.run_json("--quest", "scan", "--quest-shard-out", "shard")
    assert result.ret == 1, (data, result.stderr.str())  # a test failed
    assert data["tests_not_passed"] == ["tests/test_sign.py::test_sign"], data
    assert data["sandbox"] == ("none" if engine == "off" else "bwrap"), data
    manifest = json.loads((project.path / "shard" / "manifest.json").read_text())
    assert manifest["outcomes"]["tests/test_sign.py::test_sign"] == "failed", manifest
    result, data = project.run_json("--quest", "combine", "shard")
    assert result.ret == 1, (data, result.stderr.str())  # as a scan whose suite failed
    assert project.ratchet()["quests"][SIGN_ID]["state"] == "TODO", data
