"""The fresh run that confirms kills, started early and held (plugin/fresh_kill.py, Parked).

Started while the mutants run, it is told which tests to run once every
mutant is killed; it must judge as a fresh run started then does.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_quest.engine.mutation import MutationReport, run_mutation_check

SOURCE = """\
def sign(x):
    if x > 0:
        return "positive"
    if x < 0:
        return "negative"
    return "zero"
"""

HONEST = """
from mod import sign

def test_sign():
    assert sign(3) == "positive"
    assert sign(-3) == "negative"
    assert sign(0) == "zero"
"""

SAVED = """
from mod import sign

EXPECTED = {x: sign(x) for x in (-3, 0, 4)}

def test_sign():
    for x, want in EXPECTED.items():
        assert sign(x) == want
"""


def check(
    tmp_path: Path, tests: str, plugin_args: list[str] | None = None, names: tuple[str, ...] = ()
) -> MutationReport:
    # The module at the rootdir: `python -m pytest` puts the folder it runs in on sys.path,
    # so `-p plug` can import it while pytest reads its options.
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "mod.py").write_text(SOURCE)
    (tmp_path / "plug.py").write_text("import mod  # noqa: F401\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(textwrap.dedent(tests))
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    report = run_mutation_check(
        ["tests/test_mod.py::test_sign", *names], file=tmp_path / "mod.py", start=1, rootdir=tmp_path,
        inifile=tmp_path / "pyproject.toml", timeout=120, cwd=tmp_path,
        plugin_args=plugin_args, seed="mod.py::sign",
    )  # fmt: skip
    assert report.completed, report.problem
    assert report.survivors() == []
    return report


def test_honest_kills_are_confirmed_and_a_saved_oracle_is_not(tmp_path: Path) -> None:
    assert check(tmp_path / "honest", HONEST).kill_unconfirmed == {}
    found = check(tmp_path / "saved", SAVED).kill_unconfirmed
    assert list(found) == ["tests/test_mod.py::test_sign"], found


@pytest.mark.children_measured
def test_a_module_imported_before_the_hold_is_judged_by_a_fresh_run_started_afresh(
    tmp_path: Path,
) -> None:
    # A plugin (`-p plug`) imports the function's module while pytest reads its options,
    # before the held run could put the mutant in place: the original would run there
    # and every honest kill would look unconfirmed.  It says so; one started afresh judges.
    # (`-p mod` itself would not do: pytest's assertion rewriter imports the modules
    # named by -p from their files, in a fresh run too.)
    assert check(tmp_path / "honest", HONEST, ["-p", "plug"]).kill_unconfirmed == {}
    found = check(tmp_path / "saved", SAVED, ["-p", "plug"]).kill_unconfirmed
    assert list(found) == ["tests/test_mod.py::test_sign"], found


def test_the_held_run_is_no_child_of_the_process_whose_tests_run(tmp_path: Path) -> None:
    # A test that reaps its process's children (or asserts it has none) sees no held
    # fresh run there: its outcome is the same in every run, as without one.
    report = check(
        tmp_path,
        HONEST
        + """
import os, pytest

def test_no_child_left():
    assert sign(1) == "positive"
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)
""",
        names=("tests/test_mod.py::test_no_child_left",),
    )
    both = {
        "tests/test_mod.py::test_sign": "passed",
        "tests/test_mod.py::test_no_child_left": "passed",
    }
    assert report.runs == [both] * 2
    assert report.kill_unconfirmed == {}


@pytest.mark.slow  # waits out a timeout
def test_a_covering_test_that_hangs_with_the_mutant_is_stopped_in_the_fresh_run(
    tmp_path: Path,
) -> None:
    # Every stable covering test runs in the fresh run; one that never ran against a
    # mutant (a faster test killed each first) may loop with `return None` there.
    # Stopped at its budget (as against a mutant), its outcome says nothing; without
    # a budget the whole fresh run took its timeout and every kill was unconfirmed.
    report = check(
        tmp_path,
        HONEST
        + """
import time

def test_waits_for_a_sign():
    time.sleep(0.05)  # slower: the mutants are tried with test_sign first
    while sign(5) is None:
        pass
""",
        names=("tests/test_mod.py::test_waits_for_a_sign",),
    )
    assert report.kill_unconfirmed == {}
    assert report.phases["confirm"] < 30, report.phases
