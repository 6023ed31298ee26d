"""Honest work is judged on what it does: signal handlers, the README's setup,
failing tests, typos, resubmits with nothing new, and closed quests."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.support.gitrepo import commit_all, git, init_repo
from tests.support.projects import CALC, PYPROJECT, SIGN, Project, scanned_template

TRIPLE = "src/pkg/more.py::triple"

MORE = """\
def triple(x):
    return x * 3
"""

# A good test of `sign`: every line and branch, the boundary too.
GOOD_SIGN = """\
from pkg.calc import sign


def test_sign():
    assert sign(-5) == -1
    assert sign(0) == 1
    assert sign(5) == 1
"""

GOOD_TRIPLE = """\
from pkg.more import triple


def test_triple():
    assert triple(5) == 15
    assert triple(-2) == -6
"""

# What tests of command-line code do: a SIGINT handler saved and put back.
SIGNAL_SIGN = """\
import signal

from pkg.calc import sign


def test_sign_under_a_handler():
    seen = []
    old = signal.signal(signal.SIGINT, lambda number, frame: seen.append(number))
    try:
        assert sign(-5) == -1
        assert sign(0) == 1
        assert sign(5) == 1
    finally:
        signal.signal(signal.SIGINT, old)
    assert seen == []
"""


def _build(project: Project) -> None:
    project.source("calc", CALC)
    project.source("more", MORE)


@pytest.fixture(scope="module")
def two_quests(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, Any]]:
    return scanned_template(tmp_path_factory, _build)


def _submit(project: Project, quest_id: str) -> tuple[int, dict[str, Any], str]:
    result, data = project.run_json("--quest", "submit", "--quest-id", quest_id)
    return int(result.ret), data, result.stdout.str() + result.stderr.str()


def _checks(data: dict[str, Any]) -> list[str]:
    return [fact["check"] for fact in data["quest"]["facts"]]


def test_a_saved_and_restored_signal_handler_passes(
    project: Project, two_quests: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(two_quests[0])
    project.test("test_sign", SIGNAL_SIGN)
    code, data, _ = _submit(project, SIGN)
    assert (code, data["verdict"], _checks(data)) == (0, "PASS", []), data


def test_following_the_readme_is_not_tampering(project: Project) -> None:
    # The project's configuration as committed, without pytest-quest's setting.
    without = PYPROJECT.replace('quest_source = ["src/pkg"]\n', "")
    (project.path / "pyproject.toml").write_text(without)
    project.source("calc", CALC)
    init_repo(project.path)
    # The README: add quest_source, scan, write good tests, submit.
    (project.path / "pyproject.toml").write_text(PYPROJECT)
    result, _ = project.run_json("--quest", "scan")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    project.test("test_sign", GOOD_SIGN)
    code, data, _ = _submit(project, SIGN)
    assert (code, data["verdict"], _checks(data)) == (0, "PASS", []), data


def test_pytest_options_added_after_the_scan_are_judged_by_the_run(
    project: Project, two_quests: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(two_quests[0])
    pyproject = project.path / "pyproject.toml"
    options = (
        'testpaths = ["tests"]\naddopts = "-x -p no:cov -p no:cacheprovider"\nquest_timeout = 900\n'
    )
    pyproject.write_text(pyproject.read_text().replace('testpaths = ["tests"]\n', options))
    project.test("test_sign", GOOD_SIGN)
    code, data, out = _submit(project, SIGN)
    assert (code, data.get("verdict")) == (0, "PASS"), out
    assert _checks(data) == [], data


def test_coverage_settings_changed_after_the_scan_are_not_passed(
    project: Project, two_quests: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(two_quests[0])
    pyproject = project.path / "pyproject.toml"
    excluded = pyproject.read_text() + '\n[tool.coverage.report]\nexclude_lines = ["return -1"]\n'
    pyproject.write_text(excluded)
    project.test("test_sign", GOOD_SIGN.replace("    assert sign(-5) == -1\n", ""))
    code, data, _ = _submit(project, SIGN)
    assert (code, data["verdict"], data["step"]) == (1, "FAIL", "2-exclusions"), data
    assert "exclusion.config" in _checks(data), data["quest"]["facts"]


def test_a_failing_test_of_a_new_file_fails_the_submit_whatever_the_coverage(
    project: Project, two_quests: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(two_quests[0])
    failing = "\n\ndef test_unrelated():\n    assert 1 + 1 == 3, 'arithmetic is off'\n"
    project.test("test_sign", GOOD_SIGN + failing)
    code, data, out = _submit(project, SIGN)
    assert (code, data["verdict"]) == (1, "FAIL"), data
    [fact] = data["quest"]["facts"]
    assert (fact["check"], fact["field"]) == ("test.failed", "tests/test_sign.py::test_unrelated")
    assert "arithmetic is off" in fact["actual"], fact
    # The file's tests never reach `triple`: that quest is not failed by it.
    project.test("test_more", GOOD_TRIPLE)
    code, data, _ = _submit(project, TRIPLE)
    assert (code, data["verdict"], _checks(data)) == (0, "PASS", []), data


def test_a_collection_error_of_a_new_file_spends_no_try(
    project: Project, two_quests: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(two_quests[0])
    before = (project.path / "quest.json").read_bytes()
    project.test("test_sign", GOOD_SIGN)
    project.test("test_typo", "from pkg.calc import sign\n\n\ndef test_x(:\n    pass\n")
    result = project.run("--quest", "submit", "--quest-id", SIGN)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, out
    assert "tests/test_typo.py:4" in out, out
    assert "SyntaxError" in out, out
    assert "no try" in out, out
    assert (project.path / "quest.json").read_bytes() == before
    # Fixed, it is judged as any submission.
    (project.path / "tests" / "test_typo.py").unlink()
    code, data, _ = _submit(project, SIGN)
    assert (code, data["verdict"], data["quest"]["tries"]) == (0, "PASS", 0), data


def test_a_resubmit_of_what_failed_is_refused_and_a_done_quest_says_so(
    project: Project, two_quests: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(two_quests[0])
    project.test("test_sign", GOOD_SIGN.replace("    assert sign(-5) == -1\n", ""))
    code, data, _ = _submit(project, SIGN)
    assert (code, data["verdict"], data["quest"]["tries"]) == (1, "FAIL", 1), data
    before = (project.path / "quest.json").read_bytes()
    result = project.run("--quest", "submit", "--quest-id", SIGN)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, out
    assert f"nothing changed since the last FAIL of {SIGN} at " in out, out
    assert (project.path / "quest.json").read_bytes() == before
    # A change, even of a comment, is judged again; its last try closes the quest.
    path = project.path / "tests" / "test_sign.py"
    path.write_text(path.read_text() + "# attempt 2\n")
    code, data, _ = _submit(project, SIGN)
    assert (code, data["verdict"], data["quest"]["tries"]) == (1, "FAIL", 2), data
    assert data["closed"] is False, data
    path.write_text(path.read_text() + "# attempt 3\n")
    kept = project.path.parent / "kept.json"
    kept.write_bytes((project.path / "quest.json").read_bytes())
    code, data, _ = _submit(project, SIGN)
    assert (code, data["verdict"], data["quest"]["state"]) == (0, "FAIL", "DONE"), data
    assert data["closed"] is True, data
    assert "closed" in data["summary"] and "nothing remains" in data["summary"], data
    # The same last try in text.
    (project.path / "quest.json").write_bytes(kept.read_bytes())
    result = project.run("--quest", "submit", "--quest-id", SIGN)
    text = result.stdout.str()
    assert "is now DONE" in text and "closed" in text and "nothing remains" in text, text


PARITY = """\
def parity(n):
    r = int(n) % 2
    if r == 0:
        return "even"
    if r == 1:
        return "odd"
    raise AssertionError("unreachable")
"""
PARITY_ID = "src/pkg/par.py::parity"
TEST_EVEN = """\
from pkg.par import parity


def test_even():
    assert parity(2) == "even"
"""
TEST_ODD = """\
from pkg.par import parity


def test_odd():
    assert parity(3) == "odd"
    assert parity(-3) == "odd"
    assert parity(4) == "even"
"""


@pytest.fixture(scope="module")
def parity_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, Any]]:
    def build(project: Project) -> None:
        project.source("par", PARITY)
        project.test("test_even", TEST_EVEN)

    return scanned_template(tmp_path_factory, build)


def _dispute(project: Project, spots: str) -> tuple[int, dict[str, Any]]:
    result, data = project.run_json(
        "--quest", "submit", "--quest-id", PARITY_ID,
        "--quest-dispute", spots, "--quest-reason", "int(n) % 2 is 0 or 1",
    )  # fmt: skip
    return int(result.ret), data


def test_an_unreachable_line_and_branch_disputed_go_to_a_person(
    project: Project, parity_template: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(parity_template[0])
    project.test("test_odd", TEST_ODD)
    code, data, _ = _submit(project, PARITY_ID)
    assert (code, data["verdict"], _checks(data)) == (
        1, "FAIL", ["coverage.line", "coverage.branch"]
    ), data  # fmt: skip
    code, data = _dispute(project, "src/pkg/par.py:7,5->7")
    assert (code, data["verdict"], data["quest"]["state"]) == (0, "REVIEW", "REVIEW"), data
    assert data["quest"]["tries"] == 1, data  # the dispute spent none
    facts = data["quest"]["facts"]
    assert [(f["check"], f["field"]) for f in facts] == [
        ("dispute.unreachable", "src/pkg/par.py:7"),
        ("dispute.unreachable", "src/pkg/par.py:5->7"),
    ], facts
    assert "int(n) % 2 is 0 or 1" in facts[0]["message"], facts


def test_a_dispute_over_tests_that_check_nothing_fails_on_their_mutants(
    project: Project, parity_template: tuple[Project, dict[str, Any]]
) -> None:
    # The disputed line is taken as reached; the rest of the gate still judges the tests.
    project.fill_from(parity_template[0])
    project.test("test_odd", TEST_ODD.replace("assert ", ""))
    code, data = _dispute(project, "src/pkg/par.py:7,5->7")
    assert (code, data["verdict"], data["quest"]["tries"]) == (1, "FAIL", 1), data
    checks = _checks(data)
    assert any(check.startswith("mutation.") for check in checks), data
    assert "dispute.not_judged" in checks, data


def test_a_disputed_line_a_test_reaches_is_refused_naming_it(
    project: Project, parity_template: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(parity_template[0])
    code, data = _dispute(project, "4")
    assert (code, data["verdict"], data["quest"]["tries"]) == (1, "FAIL", 1), data
    fact = data["quest"]["facts"][0]
    assert (fact["check"], fact["field"]) == ("dispute.refused", "src/pkg/par.py:4"), fact
    assert "tests/test_even.py::test_even" in fact["message"], fact


def test_a_disputed_line_outside_the_function_is_a_usage_error(
    project: Project, parity_template: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(parity_template[0])
    before = (project.path / "quest.json").read_bytes()
    code, data = _dispute(project, "12")
    assert code == 4, data
    assert "line 12 is not in src/pkg/par.py::parity (lines 1-7)" in data["error"], data
    assert (project.path / "quest.json").read_bytes() == before


# A test that sets a short timer where the mutant watchdog is armed, to pass each
# mutant off as one that ran too long: the watchdog believes only its own clock.
ALARM_CHEAT = """\
import signal
import time

from pkg.calc import sign


def test_sign():
    sign(-5)
    sign(0)
    sign(5)
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        time.sleep(0.2)
"""


def test_a_test_s_own_timer_kills_no_mutant(
    project: Project, two_quests: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(two_quests[0])
    project.test("test_sign", ALARM_CHEAT)
    code, data, _ = _submit(project, SIGN)
    assert (code, data["verdict"], data["step"]) == (1, "FAIL", "4-mutants"), data
    assert all(check.startswith("mutation.") for check in _checks(data)), data


# Honest tests of code that works with code objects (a helper's: reading the code
# of the function under judgement is measured, docs/judge.md), memory, the garbage
# collector or the interpreter's exit: what such a test does is judged by running it.
CODE_OBJECT_SIGN = """\
from pkg.calc import sign


def helper():
    return 4


def test_sign_and_a_code_object_with_one_more_constant():
    assert sign(-5) == -1
    assert sign(0) == 1
    assert sign(5) == 1
    code = helper.__code__
    other = code.replace(co_consts=(*code.co_consts, 5))
    assert other.co_consts[-1] == 5 and other != code
"""

LOW_LEVEL_SIGN = """\
import atexit
import ctypes
import gc
import inspect
import os
import subprocess
import sys

from pkg.calc import sign


def test_sign_beside_low_level_tools():
    assert sign(-5) == -1
    assert sign(0) == 1
    assert sign(5) == 1
    assert ctypes.c_int(sign(-5)).value == -1
    assert any(isinstance(holder, dict) for holder in gc.get_referrers(sign))
    assert inspect.stack()[0].function == "test_sign_beside_low_level_tools"
    assert os.getppid() > 0
    atexit.register(print, end="")
    atexit.unregister(print)
    done = subprocess.run([sys.executable, "-c", "pass"], start_new_session=True, check=True)
    assert done.returncode == 0
"""


@pytest.mark.parametrize(
    "source", [CODE_OBJECT_SIGN, LOW_LEVEL_SIGN], ids=["code-object", "low-level"]
)
def test_honest_tests_using_interpreter_internals_pass_and_later_quests_too(
    project: Project, two_quests: tuple[Project, dict[str, Any]], source: str
) -> None:
    project.fill_from(two_quests[0])
    project.test("test_sign", source)
    code, data, _ = _submit(project, SIGN)
    assert (code, data["verdict"], _checks(data)) == (0, "PASS", []), data["quest"]["facts"]
    # The file stays changed since the scan and runs again in the next submit.
    project.test("test_more", GOOD_TRIPLE)
    code, data, _ = _submit(project, TRIPLE)
    assert (code, data["verdict"], _checks(data)) == (0, "PASS", []), data


def test_a_signal_handler_saved_and_restored_leaves_later_quests_pass(
    project: Project, two_quests: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(two_quests[0])
    project.test("test_sign", SIGNAL_SIGN)
    code, data, _ = _submit(project, SIGN)
    assert (code, data["verdict"], _checks(data)) == (0, "PASS", []), data
    project.test("test_more", GOOD_TRIPLE)
    code, data, _ = _submit(project, TRIPLE)
    assert (code, data["verdict"], _checks(data)) == (0, "PASS", []), data


@pytest.mark.parametrize("committed", ["nothing", "the code only"])
def test_the_readme_quickstart_with_uncommitted_configuration_passes(
    project: Project, committed: str
) -> None:
    project.source("calc", CALC)
    git(project.path, "init", "-q", "-b", "main")
    if committed == "the code only":
        commit_all(project.path, "code")  # pyproject.toml is written after, never committed
    # The README: quest_source in pyproject.toml (and a timeout), scan, good tests, submit.
    (project.path / "pyproject.toml").write_text(PYPROJECT + "\n")
    text = (project.path / "pyproject.toml").read_text()
    (project.path / "pyproject.toml").write_text(
        text.replace(
            'quest_source = ["src/pkg"]\n',
            'quest_source = ["src/pkg"]\naddopts = "-x -p no:cacheprovider"\n',
        )
    )
    result, _ = project.run_json("--quest", "scan")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    project.test("test_sign", GOOD_SIGN)
    code, data, _ = _submit(project, SIGN)
    assert (code, data["verdict"], _checks(data)) == (0, "PASS", []), data


# `word` is covered by its doctest but for its last line; the doctest runs with the
# suite (`--doctest-modules`, testpaths with the source folder), as in many libraries.
DOCTESTED = '''\
def word(x):
    """The sign of x as a word.

    >>> word(5)
    'positive'
    >>> word(-5)
    'negative'
    """
    if x > 0:
        return "positive"
    if x < 0:
        return "negative"
    return "zero"
'''

ZERO_WORD = """\
from pkg.doc import word


def test_zero():
    assert word(0) == "zero"
"""


def test_a_doctest_that_covers_the_function_counts_in_the_judged_runs(project: Project) -> None:
    pyproject = project.path / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            'testpaths = ["tests"]\n',
            'testpaths = ["src", "tests"]\naddopts = "--doctest-modules"\n',
        )
    )
    project.source("doc", DOCTESTED)
    result, scan = project.run_json("--quest", "scan")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    project.test("test_word", ZERO_WORD)
    # `next` measures again with the covering tests, the doctest among them.
    _, upcoming = project.run_json("--quest", "next", "--quest-id", "src/pkg/doc.py::word")
    lines = [fact["field"] for fact in upcoming["quest"]["facts"]]
    assert lines == [], upcoming["quest"]["facts"]
    # Every submit command it shows asks for JSON, as this `next` did.
    commands = re.findall(
        r"pytest --quest submit --quest-id [^ \"]+( --quest-format json)?", json.dumps(upcoming)
    )
    assert commands and all(commands), json.dumps(upcoming, indent=1)
    # Its mutants of the lines only the doctest checks are killed there, and confirmed
    # in a fresh run with the mutant in place from the start.
    code, data, out = _submit(project, "src/pkg/doc.py::word")
    assert (code, data["verdict"], _checks(data)) == (0, "PASS", []), out
