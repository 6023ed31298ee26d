"""End-to-end tests of the quest loop: scan, next, submit, status.

Every command runs in a pytest subprocess on a throwaway project (the
``project`` fixture of ``tests/conftest.py``), as a user or an agent runs it.
Each test is a short scenario, so that the whole file starts as few
processes as it can.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, cast

import pytest

from pytest_quest.app.next import next_quest
from tests.support import projects
from tests.support.contexts import app_context
from tests.support.projects import Project, quest_files, scanned_template
from tests.support.quests import ratchet_view
from tests.support.runner import assert_quiet, parse_json, run_pytest

SHAPES = (
    projects.SHAPES
    + """

def by_failing(x):
    return x * 3


def by_skipped(x):
    return x * 4


def by_xfail(x):
    return x * 5


def at_import(x):
    return x * 6


def by_setup_error(x):
    return x * 7


def by_teardown_error(x):
    return x * 8


def by_xpass(x):
    return x * 9


def at_test_import(x):
    return x * 10
"""
)

SHAPES_CONFTEST = """\
from pkg.shapes import at_import, one

# Runs at collection time, outside any test: must not count.
VALUE = at_import(1) + one()
"""

SHAPES_TESTS = """\
import asyncio

import pytest

from pkg.shapes import (
    C,
    at_test_import,
    by_failing,
    by_setup_error,
    by_skipped,
    by_teardown_error,
    by_xfail,
    by_xpass,
    fetch,
    gen,
    outer,
    plain,
)

# Runs when the test module is collected, outside any test: must not count.
CONSTANT = at_test_import(2)


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup fails")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown fails")


def test_plain():
    assert plain(1) == 2


def test_outer():
    assert outer(2) == 4


def test_fetch():
    assert asyncio.run(fetch(3)) == 3


def test_gen():
    assert list(gen(3)) == [0, 1, 2]


def test_c():
    c = C()
    c._x = 7
    assert c.method() == 1
    assert C.stat(2) == 2
    assert C.klass() == "C"
    assert c.x == 7


def test_failing():
    assert by_failing(1) == 0


def test_skipped():
    assert by_skipped(1) == 4
    pytest.skip("not today")


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert by_xfail(1) == 0


def test_setup_error(broken_setup):
    assert by_setup_error(1) == 7


def test_teardown_error(broken_teardown):
    assert by_teardown_error(1) == 8


@pytest.mark.xfail(reason="passes unexpectedly", strict=False)
def test_xpass():
    assert by_xpass(1) == 9
"""

CALC = (
    projects.CALC
    + """

def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x
"""
)

CALC_TESTS = """\
from pkg.calc import double


def test_double():
    assert double(3) == 6
"""

SIGN_TEST = """\
from pkg.calc import sign


def test_sign():
    assert sign(-5) == -1
    assert sign(5) == 1
"""

SIGN_HALF_TEST = """\
from pkg.calc import sign


def test_sign_negative():
    assert sign(-5) == -1
"""

CLAMP_TEST = """\
from pkg.calc import clamp


def test_clamp():
    assert clamp(-1, 0, 10) == 0
    assert clamp(11, 0, 10) == 10
    assert clamp(5, 0, 10) == 5
"""

SIGN = "src/pkg/calc.py::sign"
CLAMP = "src/pkg/calc.py::clamp"
DOUBLE = "src/pkg/calc.py::double"

# DESIGN.md: the fields of a quest in `next` and `submit` (status may leave
# out source and example).
QUEST_FIELDS = {
    "id",
    "file",
    "qualname",
    "lines",
    "state",
    "tries",
    "max_tries",
    "missing_lines",
    "missing_branches",
    "facts",
    "source",
    "example",
    "submit",
}
FACT_FIELDS = {"check", "field", "expected", "actual"}


def line_of(text: str, needle: str) -> int:
    """The 1-based number of the first line of `text` containing `needle`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def calc_project(project: Project) -> Project:
    project.source("calc", CALC)
    project.test("test_calc", CALC_TESTS)
    return project


@pytest.fixture(scope="module")
def calc_template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """`calc_project` scanned once; tests copy it with `project.fill_from`."""
    return scanned_template(tmp_path_factory, calc_project)[0]


def quest_section(result: pytest.RunResult) -> list[str]:
    """The lines of the plugin's own section of the text output."""
    lines: list[str] = result.stdout.lines
    # After a test run (scan, check) the section follows pytest's report under a
    # separator; a command that runs no test prints only its own lines.
    start = next((i for i, line in enumerate(lines) if re.match(r"^=+ pytest-quest =+$", line)), -1)
    end = next(
        (i for i in range(start + 1, len(lines)) if re.match(r"^=+ .* =+$", lines[i])), len(lines)
    )
    section = lines[start + 1 : end]
    while section and not section[-1].strip():
        section.pop()
    return section


def ratchet_bytes(project: Project) -> bytes:
    return (project.path / "quest.json").read_bytes()


def check_envelope(data: dict[str, Any], command: str) -> None:
    assert data["schema"] == "pytest-quest/1"
    assert data["command"] == command


def check_quest(quest: dict[str, Any], full: bool = True) -> None:
    wanted = QUEST_FIELDS if full else QUEST_FIELDS - {"source", "example"}
    assert wanted <= set(quest), wanted - set(quest)
    for fact in quest["facts"]:
        assert set(fact) >= FACT_FIELDS
    assert len(quest["lines"]) == 2
    assert all(len(arc) == 2 for arc in quest["missing_branches"])


# -- scan ----------------------------------------------------------------------------


def test_scan_lists_every_shape_and_counts_only_passing_tests(project: Project) -> None:
    project.source("shapes", SHAPES)
    project.test("conftest", SHAPES_CONFTEST)
    project.test("test_shapes", SHAPES_TESTS)
    result, data = project.run_json("--quest", "scan")
    # A test fails: pytest's exit status, and the quests are recorded all the same.
    assert result.ret == 1, result.stderr.str()
    check_envelope(data, "scan")
    ratchet = project.ratchet()
    states = {qid.split("::")[1]: entry["state"] for qid, entry in ratchet["quests"].items()}
    assert states == {
        "plain": "PASS",
        "outer": "PASS",
        "outer.inner": "PASS",
        "fetch": "PASS",
        "gen": "PASS",
        "one": "TODO",
        "C.method": "PASS",
        "C.stat": "PASS",
        "C.klass": "PASS",
        "C.x": "PASS",
        "C.x@2": "TODO",
        "by_failing": "TODO",
        "by_skipped": "TODO",
        "by_xfail": "TODO",
        "at_import": "TODO",
        "by_setup_error": "TODO",
        "by_teardown_error": "TODO",
        "by_xpass": "TODO",
        "at_test_import": "TODO",
    }
    quests = ratchet["quests"]
    # Executed by a failing, a skipped and an xfailed test, and at import: never counted.
    for name in [
        "by_failing",
        "by_skipped",
        "by_xfail",
        "at_import",
        "by_setup_error",
        "by_teardown_error",
        "by_xpass",
        "at_test_import",
    ]:
        line = line_of(SHAPES, f"def {name}(") + 1
        entry = quests[f"src/pkg/shapes.py::{name}"]
        assert entry["missing_lines"] == [line], name
        assert entry["covering_tests"] == [], name
        assert [fact["field"] for fact in entry["facts"]] == [f"src/pkg/shapes.py:{line}"]
    # The one-liner looks line-covered by its `def` at import; its exit arc is not.
    one = line_of(SHAPES, "def one()")
    assert quests["src/pkg/shapes.py::one"]["missing_lines"] == [one]
    assert [fact["field"] for fact in quests["src/pkg/shapes.py::one"]["facts"]] == [
        f"src/pkg/shapes.py:{one}"
    ]
    setter = line_of(SHAPES, "def x(self, value)")
    assert quests["src/pkg/shapes.py::C.x@2"]["lines"] == [setter, setter + 1]
    assert quests["src/pkg/shapes.py::C.x@2"]["missing_lines"] == [setter + 1]
    assert quests["src/pkg/shapes.py::C.x"]["covering_tests"] == ["tests/test_shapes.py::test_c"]
    # The pragma'd function is no quest.
    assert "src/pkg/shapes.py::skipped" not in quests
    assert ratchet["excluded_functions"] == ["src/pkg/shapes.py::skipped"]
    assert data["counts"] == {"TODO": 10, "PASS": 9, "REVIEW": 0, "DONE": 0, "EXCLUDED": 0}
    assert data["remaining"] == 10
    assert sorted(data["tests_not_passed"]) == [
        "tests/test_shapes.py::test_failing",
        "tests/test_shapes.py::test_setup_error",
        "tests/test_shapes.py::test_skipped",
        "tests/test_shapes.py::test_teardown_error",
        "tests/test_shapes.py::test_xfail",
        "tests/test_shapes.py::test_xpass",
    ]
    assert len(data["added"]) == 10 and len(data["added_pass"]) == 9


def test_rescan_adds_new_functions_reports_removed_and_keeps_pass(project: Project) -> None:
    calc_project(project)
    result = project.run("--quest", "scan")
    assert result.ret == 0
    assert quest_section(result) == [
        "3 quests: 2 TODO, 1 PASS, 0 REVIEW, 0 DONE; 2 remaining",
        "scan: 2 new quests, 1 function fully covered (PASS baseline), 0 removed",
        "next: pytest --quest next",
    ]
    before = project.ratchet()["quests"][DOUBLE]
    # double moves down and loses its test; sign is removed; triple is new.
    project.source(
        "calc",
        "import os\n\n\n"
        + CALC.replace("def sign(x):", "def triple(x):\n    return x * 3\n\n\ndef sign_gone(x):"),
    )
    (project.path / "tests" / "test_calc.py").unlink()
    result, data = project.run_json("--quest", "scan")
    assert result.ret == 0
    assert sorted(data["added"]) == ["src/pkg/calc.py::sign_gone", "src/pkg/calc.py::triple"]
    assert (data["added_pass"], data["removed"]) == ([], [SIGN])
    ratchet = project.ratchet()
    after = ratchet["quests"][DOUBLE]
    assert after["lines"] == [4, 5]
    assert {k: v for k, v in after.items() if k != "lines"} == {
        k: v for k, v in before.items() if k != "lines"
    }
    assert after["state"] == "PASS"
    assert [entry["id"] for entry in ratchet["removed"]] == [SIGN]


# -- next -------------------------------------------------------------------------------


def test_next_shows_the_quest_without_running_tests_or_spending_a_try(
    project: Project, calc_template: Project
) -> None:
    project.fill_from(calc_template)
    before = project.ratchet()
    result = project.run("--quest", "next")
    assert result.ret == 0
    assert "no tests ran" not in result.stdout.str()  # and no pytest header either
    section = quest_section(result)
    text = "\n".join(section)
    assert section[0] == "3 quests: 2 TODO, 1 PASS, 0 REVIEW, 0 DONE; 2 remaining"
    assert f"quest {SIGN}" in section
    assert "  where : src/pkg/calc.py:5-8" in section
    assert "  state : TODO   tries: 0/3" in section
    for fact in [
        "src/pkg/calc.py:6: line 6 not covered",
        "src/pkg/calc.py:7: line 7 not covered",
        "src/pkg/calc.py:8: line 8 not covered",
    ]:
        assert f"    {fact}" in section
    # Source with uncovered lines marked.
    assert "    > 6 |     if x < 0:" in section
    assert "      5 | def sign(x):" in section
    # The example is the neighbouring function's passing test.
    assert (
        "example: a passing test of a neighbouring function (tests/test_calc.py::test_double)"
        in text
    )
    assert "    def test_double():" in section
    assert f"  submit: pytest --quest submit --quest-id {SIGN}" in section
    after = project.ratchet()
    assert after["active"] == SIGN
    assert after["quests"] == before["quests"]  # no try spent, nothing measured

    # Again, as JSON: the same quest, every DESIGN field (and `--quest=next` is `--quest next`).
    result, data = project.run_json("--quest=next")
    assert result.ret == 0
    check_envelope(data, "next")
    assert (data["remaining"], data["counts"]) == (
        2,
        {"TODO": 2, "PASS": 1, "REVIEW": 0, "DONE": 0, "EXCLUDED": 0},
    )
    quest = data["quest"]
    check_quest(quest)
    assert quest["id"] == SIGN
    assert (quest["file"], quest["qualname"], quest["lines"]) == ("src/pkg/calc.py", "sign", [5, 8])
    assert (quest["state"], quest["tries"], quest["max_tries"]) == ("TODO", 0, 3)
    assert quest["missing_lines"] == [6, 7, 8]
    assert quest["facts"][0] == {
        "check": "coverage.line",
        "field": "src/pkg/calc.py:6",
        "expected": "executed by a passing test",
        "actual": "never executed",
        "message": "line 6 not covered",
    }
    assert quest["example"]["kind"] == "neighbour"
    assert quest["example"]["test"] == "tests/test_calc.py::test_double"
    assert "assert double(3) == 6" in quest["example"]["source"]
    assert quest["submit"] == f"pytest --quest submit --quest-id {SIGN} --quest-format json"
    assert quest["source"].splitlines()[1] == "> 6 |     if x < 0:"


# `next` runs no test: after a real scan, these run it in-process on app.next
# (the test above runs it end to end, in text and JSON).


def test_next_quest_id_makes_it_active_and_skeleton_has_the_import(project: Project) -> None:
    project.source("calc", CALC)  # no tests at all: no neighbour to show
    project.run("--quest", "scan")
    output = next_quest(app_context(project.path, "next", quest_id=CLAMP))
    assert output.exitcode == 0
    data = output.data
    assert data["quest"]["id"] == CLAMP
    assert project.ratchet()["active"] == CLAMP
    example = data["quest"]["example"]
    assert example["kind"] == "skeleton"
    assert example["source"].startswith("from pkg.calc import clamp\n")
    assert "def test_clamp():" in example["source"]
    # Without --quest-id, next keeps showing the active quest, not the first TODO.
    assert next_quest(app_context(project.path, "next")).data["quest"]["id"] == CLAMP


def test_next_when_nothing_remains(project: Project) -> None:
    calc_project(project)
    project.test("test_sign", SIGN_TEST)
    project.test("test_clamp", CLAMP_TEST)
    project.run("--quest", "scan")
    output = next_quest(app_context(project.path, "next", format="text"))
    assert output.exitcode == 0
    assert output.lines == [
        "3 quests: 0 TODO, 3 PASS, 0 REVIEW, 0 DONE; 0 remaining",
        "nothing remains: every quest is settled",
    ]
    output = next_quest(app_context(project.path, "next"))
    assert output.exitcode == 0
    assert (output.data["quest"], output.data["remaining"]) == (None, 0)


# -- submit -------------------------------------------------------------------------------


def test_submit_pass_then_fail_then_done(project: Project, calc_template: Project) -> None:
    project.fill_from(calc_template)
    next_quest(app_context(project.path, "next"))  # runs no test: in-process
    project.test("test_sign", SIGN_TEST)
    result = project.run("--quest", "submit")
    assert result.ret == 0, result.stdout.str()
    # No pytest header though its child ran the tests: the verdict is the first line.
    assert_quiet(result)
    assert result.stdout.lines[0].startswith(f"PASS: {SIGN}")
    section = quest_section(result)
    assert section[0] == f"PASS: {SIGN} is now PASS (tries 0/3)"
    # PASS shows the next quest.
    assert "next quest:" in section
    assert f"quest {CLAMP}" in section
    assert section[-1] == "3 quests: 1 TODO, 2 PASS, 0 REVIEW, 0 DONE; 1 remaining"
    ratchet = project.ratchet()
    assert ratchet["quests"][SIGN]["state"] == "PASS"
    assert ratchet["quests"][SIGN]["covering_tests"] == ["tests/test_sign.py::test_sign"]
    assert ratchet["active"] == CLAMP

    # FAIL: clamp's test covers only one branch.  Facts, a try spent, exit 1.
    project.test(
        "test_clamp",
        "from pkg.calc import clamp\n\ndef test_low():\n    assert clamp(-1, 0, 9) == 0\n",
    )
    result = project.run("--quest", "submit", "--quest-max-tries", "2")
    assert result.ret == 1
    section = quest_section(result)
    assert section[0] == f"FAIL: {CLAMP} is now TODO (tries 1/2)"
    assert "  src/pkg/calc.py:14: branch 14->15 not taken" in section
    assert "  src/pkg/calc.py:15: line 15 not covered" in section
    assert f"submit again: pytest --quest submit --quest-id {CLAMP}" in section
    assert project.ratchet()["quests"][CLAMP]["tries"] == 1

    # Again (changed: the same tests are not judged twice): with --quest-max-tries 2
    # the second failure settles it, DONE, exit 0.
    clamp_test = project.path / "tests" / "test_clamp.py"
    clamp_test.write_text(clamp_test.read_text() + "# again\n")
    result, data = project.run_json("--quest", "submit", "--quest-max-tries", "2")
    assert result.ret == 0
    check_envelope(data, "submit")
    assert (data["verdict"], data["step"]) == ("FAIL", "3-coverage")
    check_quest(data["quest"])
    quest = data["quest"]
    assert (quest["state"], quest["tries"], quest["max_tries"]) == ("DONE", 2, 2)
    assert quest["missing_lines"] == [14, 15, 16]
    assert quest["missing_branches"] == [[12, 14], [14, 15], [14, 16]]
    assert [fact["field"] for fact in quest["facts"]] == [
        "src/pkg/calc.py:14",
        "src/pkg/calc.py:15",
        "src/pkg/calc.py:16",
        "src/pkg/calc.py:12->14",
        "src/pkg/calc.py:14->15",
        "src/pkg/calc.py:14->16",
    ]
    assert (data["remaining"], data["next_quest"]) == (0, None)
    assert project.ratchet()["quests"][CLAMP]["state"] == "DONE"

    # After next, submits and status, no temporary file is left beside the ratchet file.
    assert project.run("--quest-status").ret == 0
    assert quest_files(project) == [
        ".quest/quest.json.judging.lock",
        ".quest/quest.json.lock",
        ".quest/quest.json.run.gz",
        "quest.json",
    ]


def test_max_tries_ini_option(project: Project, calc_template: Project) -> None:
    project.fill_from(calc_template)
    project.test("test_sign", SIGN_HALF_TEST)
    # The ini option: one try only.
    pyproject = project.path / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text()
        .replace("[tool.coverage.run]", "")
        .replace(
            'quest_source = ["src/pkg"]',
            'quest_source = ["src/pkg"]\nquest_max_tries = "1"\n\n[tool.coverage.run]',
        )
    )
    result, data = project.run_json("--quest", "submit", "--quest-id", CLAMP)
    assert (result.ret, data["quest"]["state"], data["quest"]["tries"]) == (0, "DONE", 1)
    assert data["quest"]["max_tries"] == 1


def test_submit_refuses_terminal_quests_and_changes_nothing(
    project: Project, calc_template: Project
) -> None:
    project.fill_from(calc_template)
    before = ratchet_bytes(project)
    result = project.run("--quest", "submit", "--quest-id", DOUBLE)
    assert result.ret == 4
    assert (
        f"quest {DOUBLE} is PASS and refuses resubmission"
        in result.stderr.str() + result.stdout.str()
    )
    assert ratchet_bytes(project) == before
    # A DONE quest, through max tries 1.
    result = project.run("--quest", "submit", "--quest-id", SIGN, "--quest-max-tries", "1")
    assert result.ret == 0
    assert project.ratchet()["quests"][SIGN]["state"] == "DONE"
    before = ratchet_bytes(project)
    project.test("test_sign", SIGN_TEST)
    result, data = project.run_json("--quest", "submit", "--quest-id", SIGN)
    assert result.ret == 4
    check_envelope(data, "submit")
    assert "is DONE and refuses resubmission" in data["error"]
    assert ratchet_bytes(project) == before


@pytest.mark.children_measured
def test_submit_of_a_changed_function_is_review(project: Project, calc_template: Project) -> None:
    project.fill_from(calc_template)
    project.source("calc", CALC.replace("return -1", "return -2"))
    result, data = project.run_json("--quest", "submit", "--quest-id", SIGN)
    assert result.ret == 0
    assert (data["verdict"], data["step"]) == ("REVIEW", "1-identity")
    assert data["quest"]["state"] == "REVIEW"
    assert data["quest"]["facts"][0]["check"] == "identity.changed"
    # REVIEW is settled: the next quest comes with every field of a quest.
    check_quest(data["next_quest"])
    assert data["next_quest"]["id"] == CLAMP
    assert project.ratchet()["active"] == CLAMP


@pytest.mark.slow  # waits out a timeout
@pytest.mark.children_measured
def test_submit_whose_run_times_out_is_review(project: Project) -> None:
    calc_project(project)
    # The policy's timeout floor; no budget for the scan's own run.
    assert project.run("--quest", "scan", "--quest-timeout", "3").ret == 0
    project.test(
        "test_sign",
        "import time\n\nfrom pkg.calc import sign\n\n\ndef test_slow():\n"
        "    time.sleep(60)\n    assert sign(-1) == -1\n",
    )
    result, data = project.run_json("--quest", "submit", "--quest-id", SIGN, "--quest-timeout", "3")
    assert result.ret == 0
    assert (data["verdict"], data["step"]) == ("REVIEW", "environment")
    assert data["quest"]["tries"] == 0
    [fact] = data["quest"]["facts"]
    assert fact["check"] == "environment"
    assert fact["actual"] == "the test run exceeded --quest-timeout (3s) and was stopped"


# -- status --------------------------------------------------------------------------------


# The status of a project with a quest in each state (its REVIEW and DONE sections, the
# quests' order) is tested in-process on app.status:
# tests/unit/app/test_app_status_export.py::test_status_text_and_json.


def test_status_text_json_colour_and_both_spellings(
    project: Project, monkeypatch: pytest.MonkeyPatch, calc_template: Project
) -> None:
    project.fill_from(calc_template)
    before = ratchet_bytes(project)
    result = project.run("--quest-status", "--color=no")
    assert result.ret == 0
    assert "no tests ran" not in result.stdout.str()  # and no pytest header either
    section = quest_section(result)
    text = "\n".join(section)
    assert section[0] == "3 quests: 2 TODO, 1 PASS, 0 REVIEW, 0 DONE; 2 remaining"
    assert "1/3 settled (33%)" in text
    [row] = [line for line in section if line.startswith("src/pkg/calc.py")]
    # TODO, PASS, REVIEW, DONE, EXCLUDED, all
    assert re.findall(r"\d+", row) == ["2", "1", "0", "0", "0", "3"]
    assert "\x1b[" not in result.stdout.str()
    # Colour follows pytest: NO_COLOR, and `--quest status` is `--quest-status`.
    monkeypatch.setenv("NO_COLOR", "1")
    plain = project.run("--quest", "status")
    assert "\x1b[" not in plain.stdout.str()
    assert quest_section(plain) == section
    monkeypatch.delenv("NO_COLOR")
    coloured = "\n".join(quest_section(project.run("--quest", "status", "--color=yes")))
    assert "\x1b[" in coloured
    assert "2 remaining" in coloured
    assert ratchet_bytes(project) == before

    result, data = project.run_json("--quest", "status")
    check_envelope(data, "status")
    assert data["counts"] == {"TODO": 2, "PASS": 1, "REVIEW": 0, "DONE": 0, "EXCLUDED": 0}
    assert data["remaining"] == 2
    assert [quest["id"] for quest in data["quests"]] == [DOUBLE, SIGN, CLAMP]
    for quest in data["quests"]:
        check_quest(quest, full=False)
    assert ratchet_bytes(project) == before


# -- ini options -------------------------------------------------------------------------------


def test_ini_options_quest_file_format_and_source(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_calc", CALC_TESTS)
    (project.path / "pyproject.toml").write_text(
        "[tool.pytest.ini_options]\n"
        'pythonpath = ["src"]\n'
        'testpaths = ["tests"]\n'
        'quest_source = ["src/pkg"]\n'
        'quest_file = "state/ratchet.json"\n'
        'quest_format = "json"\n'
    )
    (project.path / "state").mkdir()
    result = project.run("--quest", "scan")
    assert result.ret == 0, result.stderr.str()
    data = json.loads(result.stdout.str())  # JSON without --quest-format: the ini says so
    check_envelope(data, "scan")
    assert data["remaining"] == 2
    assert not (project.path / "quest.json").exists()
    ratchet = ratchet_view((project.path / "state" / "ratchet.json").read_bytes())
    assert set(ratchet["quests"]) == {DOUBLE, SIGN, CLAMP}
    # The command line wins over the ini file.
    result = project.run("--quest", "next", "--quest-format", "text")
    assert quest_section(result)[1] == f"quest {SIGN}"


def test_quest_source_on_the_command_line(project: Project) -> None:
    project.source("calc", CALC)
    project.source("other", "def f():\n    return 1\n")
    (project.path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n'
    )
    result, data = project.run_json("--quest", "scan", "--quest-source", "src/pkg")
    assert result.ret == 0, result.stderr.str()
    assert set(project.ratchet()["quests"]) == {"src/pkg/other.py::f", DOUBLE, SIGN, CLAMP}
    assert data["remaining"] == 4


def test_submit_by_id_from_a_subfolder_of_a_checkout_elsewhere(
    project: Project, tmp_path: Path
) -> None:
    """One submit for three things (each was a test of its own, with a submit of its own)."""
    spare = "src/pkg/calc.py::spare"
    project.source("calc", CALC + "\n\ndef spare(x):\n    return x\n")
    project.test("test_calc", CALC_TESTS)
    assert project.run("--quest", "scan").ret == 0
    assert project.ratchet()["coverage_config"]["run:source"] == ["src/pkg"]
    next_quest(app_context(project.path, "next", quest_id=spare))  # runs no test: in-process
    # The ratchet file is committed: CI or a colleague has the project elsewhere.
    moved = tmp_path / "elsewhere"
    shutil.copytree(project.path, moved)
    (moved / "tests" / "test_sign.py").write_text(SIGN_TEST)
    # Node ids are relative to the rootdir: run from tests/, they must still resolve
    # (in the judge, the measuring child and the mutation child alike).
    result = run_pytest(
        moved / "tests", "--quest", "submit", "--quest-id", SIGN, "--quest-format", "json"
    )
    data = parse_json(result)
    assert (result.ret, data["verdict"]) == (0, "PASS"), data
    ratchet = ratchet_view((moved / "quest.json").read_bytes())
    assert ratchet["quests"][SIGN]["covering_tests"] == ["tests/test_sign.py::test_sign"]
    # By --quest-id: the next quest is the one being worked on, not the first TODO (clamp).
    assert data["next_quest"]["id"] == spare
    assert ratchet["active"] == spare


def test_submit_with_a_broken_new_test_file_names_its_line_and_spends_no_try(
    project: Project, calc_template: Project
) -> None:
    # A collection error of the submission is not a judgement: shown with its
    # file and line, exit 4, nothing recorded.
    project.fill_from(calc_template)
    project.test("test_sign", "from pkg.calc import sign\n\n\ndef test_sign(:\n    pass\n")
    result, data = project.run_json("--quest", "submit", "--quest-id", SIGN)
    assert result.ret == 4, data
    assert "tests/test_sign.py:4: SyntaxError" in data["error"], data
    quest = project.ratchet()["quests"][SIGN]
    assert (quest["state"], quest["tries"], quest["history"]) == ("TODO", 0, [])


def test_twin_ids_survive_a_rescan_after_lines_are_added_above(project: Project) -> None:
    twins = (
        "class Box:\n"
        "    @property\n"
        "    def size(self):\n"
        "        return self._size\n"
        "\n"
        "    @size.setter\n"
        "    def size(self, value):\n"
        "        if value < 0:\n"
        "            raise ValueError(value)\n"
        "        self._size = value\n"
    )
    project.source("box", twins)
    project.run("--quest", "scan")
    first = project.ratchet()["quests"]
    assert sorted(first) == ["src/pkg/box.py::Box.size", "src/pkg/box.py::Box.size@2"]
    assert first["src/pkg/box.py::Box.size@2"]["lines"] == [7, 10]
    project.source("box", '"""Boxes."""\n\nLIMIT = 10\n\n\n' + twins)
    _result, data = project.run_json("--quest", "scan")
    assert (data["added"], data["added_pass"], data["removed"]) == ([], [], [])
    quests = project.ratchet()["quests"]
    assert sorted(quests) == sorted(first)
    assert quests["src/pkg/box.py::Box.size@2"]["lines"] == [12, 15]
    assert quests["src/pkg/box.py::Box.size@2"]["missing_lines"] == [13, 14, 15]
    assert (
        quests["src/pkg/box.py::Box.size@2"]["fingerprint"]
        == (first["src/pkg/box.py::Box.size@2"]["fingerprint"])
    )


SUBTESTS_SIGN = """\
from pkg.calc import sign


def test_sign(subtests):
    with subtests.test("negative"):
        assert sign(-5) == 99
    with subtests.test("positive"):
        assert sign(5) == 1
"""


SIGN_SUBTEST = """\
from unittest import TestCase

from pkg.calc import sign


class SignTests(TestCase):
    def test_sign(self):
        for x, expected in [(-5, -1), (5, 1)]:
            with self.subTest(x=x):
                self.assertEqual(sign(x), expected)
"""


def test_a_mutant_failing_only_a_subtest_is_killed(
    project: Project, calc_template: Project
) -> None:
    # runtestprotocol's reports hold the test's own only: a subtest's failure
    # is logged to the hook alone, so a mutation child reading the reports
    # would miss it and every mutant would "survive" (as on more-itertools' suite).
    project.fill_from(calc_template)
    project.test("test_sign", SIGN_SUBTEST)
    result, data = project.run_json("--quest", "submit", "--quest-id", SIGN)
    assert (result.ret, data["verdict"]) == (0, "PASS"), data


def test_a_test_with_a_failed_subtest_does_not_count(project: Project) -> None:
    # Text mode, as the gate's child runs: pytest fails the test itself only in
    # the terminal reporter's hook.
    calc_project(project)
    project.test("test_sign", SUBTESTS_SIGN)
    result = project.run("--quest", "scan")
    assert result.ret == 1  # a failed subtest fails the run, as in plain pytest
    sign = project.ratchet()["quests"][SIGN]
    assert (sign["state"], sign["covering_tests"]) == ("TODO", [])
    result, data = project.run_json("--quest", "submit", "--quest-id", SIGN)
    assert (result.ret, data["verdict"], data["step"]) == (1, "FAIL", "3-coverage")


class FakeReport:
    def __init__(self, when: str, outcome: str, wasxfail: str | None = None) -> None:
        self.when = when
        self.failed = outcome == "failed"
        self.skipped = outcome == "skipped"
        self.passed = outcome == "passed"
        if wasxfail is not None:
            self.wasxfail = wasxfail


def fake_report(when: str, outcome: str, wasxfail: str | None = None) -> pytest.TestReport:
    """The attributes of a report `combine_outcome` reads (a stand-in, not a pytest.TestReport)."""
    return cast(pytest.TestReport, FakeReport(when, outcome, wasxfail))


@pytest.mark.parametrize(
    ("reports", "outcome"),
    [
        ([("setup", "passed"), ("call", "passed"), ("teardown", "passed")], "passed"),
        ([("setup", "passed"), ("call", "failed"), ("teardown", "passed")], "failed"),
        ([("setup", "failed"), ("teardown", "passed")], "error"),
        ([("setup", "passed"), ("call", "passed"), ("teardown", "failed")], "error"),
        ([("setup", "skipped"), ("teardown", "passed")], "skipped"),
        ([("setup", "passed"), ("call", "skipped"), ("teardown", "passed")], "skipped"),
        # subtests: a failed one fails the test, whatever call reports follow
        (
            [
                ("setup", "passed"),
                ("call", "failed"),
                ("call", "passed"),
                ("call", "passed"),
                ("teardown", "passed"),
            ],
            "failed",
        ),
        ([("setup", "passed"), ("call", "passed"), ("call", "passed")], "passed"),
        # a rerun starts again at setup
        (
            [
                ("setup", "passed"),
                ("call", "failed"),
                ("setup", "passed"),
                ("call", "passed"),
                ("teardown", "passed"),
            ],
            "passed",
        ),
    ],
)
def test_combine_outcome(reports: list[tuple[str, str]], outcome: str) -> None:
    from pytest_quest.plugin.session import combine_outcome

    result = None
    for when, report_outcome in reports:
        result = combine_outcome(result, fake_report(when, report_outcome))
    assert result == outcome


def test_combine_outcome_of_xfail_marked_tests() -> None:
    from pytest_quest.plugin.session import combine_outcome

    setup = combine_outcome(None, fake_report("setup", "passed"))
    assert combine_outcome(setup, fake_report("call", "skipped", "reason")) == "xfailed"
    assert combine_outcome(setup, fake_report("call", "passed", "reason")) == "xpassed"
