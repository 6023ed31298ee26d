"""engine/mutation.py's small parts: outcomes per run, a test passing again, per-line tests,
the child's command and the file as the child is told it."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.engine.mutation import (
    MutationReport,
    Target,
    _line_tests,
    _relative,
    mutation_command,
)
from pytest_quest.engine.runner import child_command


def test_outcomes_of_with_errors_and_a_first_run() -> None:
    report = MutationReport(
        runs=[{"t": "failed", "u": "passed"}, {"u": "passed"}, {"t": "passed"}],
        errors={"t": ["AssertionError: 1 != 2"]},
    )
    assert report.outcomes_of("t") == ["failed (AssertionError: 1 != 2)", "passed"]
    assert report.outcomes_of("t", {"t": "passed"}) == [
        "passed",
        "failed (AssertionError: 1 != 2)",
        "passed",
    ]
    assert report.outcomes_of("u", {"t": "passed"}) == ["passed", "passed"]
    assert report.outcomes_of("gone") == []


def test_outcomes_of_with_an_empty_error_line() -> None:
    report = MutationReport(runs=[{"t": "passed"}, {"t": "failed"}], errors={"t": ["", "E"]})
    assert report.outcomes_of("t") == ["passed", "failed (E)"]


def test_passed_again() -> None:
    assert MutationReport().passed_again() is False
    assert MutationReport(runs=[{"a": "passed", "b": "failed"}]).passed_again() is True
    assert MutationReport(runs=[{"a": "passed"}, {"a": "failed"}]).passed_again() is False
    assert MutationReport(runs=[{"a": "passed"}, {"b": "passed"}]).passed_again() is False
    assert (
        MutationReport(
            runs=[{"a": "failed", "b": "passed"}, {"a": "passed", "b": "passed"}]
        ).passed_again()
        is True
    )
    assert MutationReport(runs=[{"a": "skipped"}]).passed_again() is False


def test_line_tests_only_of_the_covering_tests(tmp_path: Path) -> None:
    target = Target(
        file=tmp_path / "m.py",
        start=1,
        nodeids=("t::a", "t::b"),
        line_tests={3: {"t::b", "t::a", "other"}, 2: {"t::b"}, 5: {"other"}},
    )
    assert _line_tests(target) == {"2": ["t::b"], "3": ["t::a", "t::b"]}
    assert list(_line_tests(target) or {}) == ["2", "3"]


def test_line_tests_none_or_empty(tmp_path: Path) -> None:
    assert _line_tests(Target(file=tmp_path, start=1, nodeids=("t::a",))) is None
    assert _line_tests(Target(file=tmp_path, start=1, nodeids=("t::a",), line_tests={})) is None


def test_mutation_command_is_the_measuring_childs(tmp_path: Path) -> None:
    made = mutation_command(
        rootdir=tmp_path, inifile=tmp_path / "pytest.ini", plugin_args=["-p", "x"], channel="3,4"
    )
    assert made == child_command(
        rootdir=tmp_path, inifile=tmp_path / "pytest.ini", plugin_args=["-p", "x"], channel="3,4"
    )
    assert "3,4" in made
    assert str(tmp_path) in made


def test_relative_inside_and_outside_the_rootdir(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert _relative(tmp_path / "src" / "m.py", tmp_path) == "src/m.py"
    assert _relative(tmp_path / "src" / ".." / "m.py", tmp_path) == "m.py"
    outside = tmp_path.parent / "elsewhere.py"
    assert _relative(outside, tmp_path / "src") == str(outside)
