"""`pytest --quest audit`: the mutation check over the scan's PASS baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import Project, built_template, qid
from tests.support.runner import parse_json, run_pytest, run_quest

pytestmark = pytest.mark.slow

SOURCE = """
def checked(x):
    if x > 0:
        return "pos"
    return "neg"


def unchecked(x):
    if x > 0:
        return "pos"
    return "neg"


def uncovered(x):
    return x
"""

TESTS = """
from pkg.audited import checked, unchecked

def test_checked():
    assert checked(1) == "pos"
    assert checked(-1) == "neg"

def test_unchecked_runs():
    unchecked(1)
    unchecked(-1)
"""


def scanned(project: Project) -> None:
    project.source("audited", SOURCE)
    project.test("test_audited", TESTS)
    code, data, stderr = run_quest(project.path, "--quest", "scan")
    assert code == 0, stderr
    assert sorted(data["added_pass"]) == [qid("audited", "checked"), qid("audited", "unchecked")]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The project scanned once; each test audits a copy."""
    return built_template(tmp_path_factory, scanned)


@pytest.fixture
def audited(tmp_path: Path, template: Project) -> Project:
    return Project(tmp_path / "project").fill_from(template)


def test_audit_lists_baseline_functions_run_but_not_checked(audited: Project) -> None:
    before = (audited.path / "quest.json").read_bytes()
    code, data, stderr = run_quest(audited.path, "--quest", "audit")
    assert code == 0, stderr
    assert data["schema"] == "pytest-quest/1" and data["command"] == "audit"
    assert data["audited"] == [qid("audited", "checked"), qid("audited", "unchecked")]
    assert [finding["id"] for finding in data["findings"]] == [qid("audited", "unchecked")]
    facts = data["findings"][0]["facts"]
    assert {fact["field"] for fact in facts} == {
        "src/pkg/audited.py:9",
        "src/pkg/audited.py:10",
        "src/pkg/audited.py:11",
    }
    assert all(fact["check"].startswith("mutation.") for fact in facts)
    assert data["findings"][0]["mutants"] == 4
    # A report only: the ratchet file is untouched, PASS stays PASS.
    assert (audited.path / "quest.json").read_bytes() == before
    assert audited.ratchet()["quests"][qid("audited", "unchecked")]["state"] == "PASS"


@pytest.mark.children_measured
def test_audit_text_output_and_mutants_off(audited: Project) -> None:
    completed = run_pytest(audited.path, "--quest", "audit")
    stdout = completed.stdout.str()
    assert completed.ret == 0
    assert "audit: 2 PASS functions checked, 1 run without being checked" in stdout
    assert "src/pkg/audited.py:11: mutant survived: `return 'neg'`" not in stdout
    assert 'src/pkg/audited.py:11: mutant survived: `return "neg"`' in stdout
    code, data, _ = run_quest(audited.path, "--quest", "audit", "--quest-mutants", "off")
    assert code == 4
    assert "--quest-mutants is off" in data["error"]


def test_audit_across_workers_finds_the_same(audited: Project) -> None:
    """`-n 2` (pytest-xdist): the functions are checked in two children, the findings the same."""
    runs = []
    for xdist in ((), ("-n", "2")):
        args = ("--quest", "audit", *xdist, "--quest-format", "json")
        result = run_pytest(audited.path, *args, autoload=True)
        assert result.ret == 0, result.stderr.str()
        runs.append(parse_json(result))
    one, two = runs
    assert (one["timing"]["children"], two["timing"]["children"]) == (1, 2)
    assert (
        two["audited"] == one["audited"] == [qid("audited", "checked"), qid("audited", "unchecked")]
    )
    assert [(f["id"], f["facts"], f["mutants"]) for f in two["findings"]] == [
        (f["id"], f["facts"], f["mutants"]) for f in one["findings"]
    ]
    assert set(two["timing"]["phases"]) >= {"baseline", "plan", "probe", "killed", "survived"}


DOCTESTED = '''
def add(a, b):
    """
    >>> add(1, 2)
    3
    """
    return a + b
'''

PARAMETRIZED = """
import pytest
from pkg.doctested import add

@pytest.mark.parametrize("a, b, total", [(1, 2, 3), (0, 0, 0), ("x", "y", "xy")])
def test_add(a, b, total):
    assert add(a, b) == total
"""

DOCTEST_PYPROJECT = """\
[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests", "src"]
addopts = "--doctest-modules"
quest_source = ["src/pkg"]

[tool.coverage.run]
branch = true
source = ["src/pkg"]
"""


def test_audit_runs_doctests_and_parametrized_cases_again_without_calling_them_flaky(
    tmp_path: Path,
) -> None:
    """A doctest run twice in the mutation child has its namespace back each time: it
    passes in both runs, as it does in two plain runs, and kills the mutants it detects."""
    project = Project(tmp_path / "project", DOCTEST_PYPROJECT)
    project.source("doctested", DOCTESTED)
    project.test("test_doctested", PARAMETRIZED)
    code, data, stderr = run_quest(project.path, "--quest", "scan")
    assert code == 0 and data["added_pass"] == [qid("doctested", "add")], stderr
    code, data, stderr = run_quest(project.path, "--quest", "audit")
    assert code == 0, stderr
    assert data["audited"] == [qid("doctested", "add")]
    assert data["findings"] == [], data["findings"]


def test_audit_text_leads_with_one_line_per_survivor(audited: Project) -> None:
    completed = run_pytest(audited.path, "--quest", "audit")
    assert completed.ret == 0
    lines = completed.stdout.lines
    start = next(i for i, line in enumerate(lines) if line.startswith("audit: "))
    assert lines[start] == (
        "audit: 2 PASS functions checked, 1 run without being checked, 0 could not be confirmed"
    )
    assert lines[start + 1] == (
        f"  survived: {qid('audited', 'unchecked')}: 4 mutants at lines 9, 10, 11"
    )
    assert lines[start + 2] == "details:"


# Each hides the audit's findings, if it runs in the process that decides the audit.
HIDING = {
    "patch-audit-functions": """
import pytest_quest.app.audit as _a
from pytest_quest.app.audit import AuditReport
_a.audit_functions = lambda *args, **kwargs: AuditReport()
""",
    "patch-audit-lines": """
import pytest_quest.app.audit as _a
_real = _a.audit
def _quiet(ctx):
    output = _real(ctx)
    output.data["findings"] = []
    return output
_a.audit = _quiet
import pytest_quest.plugin.session as _s
_s.use_case = lambda command: _quiet
""",
}


@pytest.mark.parametrize("cheat", sorted(HIDING))
def test_a_conftest_cannot_hide_the_audits_findings(audited: Project, cheat: str) -> None:
    (audited.path / "tests" / "conftest.py").write_text(HIDING[cheat])
    code, data, stderr = run_quest(audited.path, "--quest", "audit")
    assert code == 0, stderr
    assert [finding["id"] for finding in data["findings"]] == [qid("audited", "unchecked")]
    assert data["sandbox"] in ("bwrap", "landlock", "none"), data
