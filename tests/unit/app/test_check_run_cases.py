"""app/check_run.py's parts: the incremental instructions, arguments split at ``--``, files put
back, the child's incremental part read, and the child's usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_quest.app.check_run import (
    Incremental,
    SuiteRun,
    _incremental_part,
    _line_tests,
    _put_back,
    _read,
    _seconds,
    _split_at_dashes,
    refuse_incomplete,
    usage_error,
)
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.run import RunReport
from pytest_quest.engine import incremental as records
from pytest_quest.engine.measure import MeasuredSource


def test_incremental_instructions(tmp_path: Path) -> None:
    arguments = ["-k", "x"]
    made = Incremental(tmp_path / "r.gz", tmp_path / "quest.json", True, arguments)
    found = made.instructions()
    assert found == {
        "path": str(tmp_path / "r.gz"),
        "quest_file": str(tmp_path / "quest.json"),
        "full": True,
        "arguments": ["-k", "x"],
    }
    assert found["arguments"] is not arguments
    # A shard job's output folder goes to the child: no input of its next run.
    sharded = Incremental(tmp_path / "r.gz", tmp_path / "quest.json", False, [], tmp_path / "s")
    assert sharded.instructions()["shard_out"] == str(tmp_path / "s")


def test_split_at_dashes() -> None:
    args = ["-q", "tests"]
    before, after = _split_at_dashes(args)
    assert (before, after) == (["-q", "tests"], [])
    assert before is not args
    assert _split_at_dashes(["-q", "--", "-x", "--"]) == (["-q"], ["--", "-x", "--"])
    assert _split_at_dashes(["--"]) == ([], ["--"])


def test_read(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"data")
    assert _read(tmp_path / "f") == b"data"
    assert _read(tmp_path / "missing") is None
    assert _read(tmp_path) is None


def test_put_back_writes_the_bytes_again(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "f"
    _put_back(path, b"old")
    assert path.read_bytes() == b"old"
    path.write_bytes(b"new")
    _put_back(path, b"old")
    assert path.read_bytes() == b"old"


def test_put_back_removes_a_file_that_was_not_there(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"new")
    _put_back(path, None)
    assert not path.exists()
    _put_back(path, None)
    assert not path.exists()


def test_put_back_leaves_an_unchanged_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"same")
    before = path.stat().st_mtime_ns
    path.chmod(0o444)
    _put_back(path, b"same")
    assert path.read_bytes() == b"same"
    assert path.stat().st_mtime_ns == before


def test_put_back_over_a_folder_is_no_error(tmp_path: Path) -> None:
    path = tmp_path / "f"
    (path / "inside").mkdir(parents=True)
    _put_back(path, b"data")
    assert path.is_dir()
    _put_back(path, None)
    assert path.is_dir()


def _suite(**fields: object) -> SuiteRun:
    suite = SuiteRun(run=RunReport(), measured=None, output="", sandbox="")
    for key, value in fields.items():
        setattr(suite, key, value)
    return suite


def test_incremental_part_that_is_not_an_object() -> None:
    suite = _suite()
    _incremental_part(suite, ["lines"])
    _incremental_part(suite, None)
    assert (suite.lines, suite.data, suite.whole, suite.record) == ([], None, False, None)


def test_incremental_part_read() -> None:
    suite = _suite()
    record = records.RunRecord(
        outcomes={"t.py::a": "passed"},
        seconds={"t.py::a": 0.5},
        arcs={"t.py::a": {"m.py": [(1, 2)]}},
    )
    _incremental_part(
        suite,
        {"lines": [1, "two"], "data": {"k": 1}, "whole": True, "record": records.to_body(record)},
    )
    assert suite.lines == ["1", "two"]
    assert suite.data == {"k": 1}
    assert suite.whole is True
    assert suite.record == record


def test_incremental_part_with_malformed_fields() -> None:
    suite = _suite()
    _incremental_part(suite, {"lines": "x", "data": [1], "whole": 1})
    assert (suite.lines, suite.data, suite.whole, suite.record) == ([], None, False, None)


def test_incremental_part_with_a_damaged_record() -> None:
    suite = _suite()
    _incremental_part(suite, {"lines": ["ran"], "record": {"format": "other"}})
    assert suite.lines == [
        "ran",
        "warning: the run record was not written: "
        "the check's child is not a pytest-quest run record",
    ]
    assert suite.record is None


OUTPUT = "collected\nERROR: first\nnoise\nERROR: file or folder not found: x\n"


def test_usage_error_is_the_last_error_line_of_a_usage_exit() -> None:
    incomplete = RunReport(completed=False)
    assert usage_error(_suite(returncode=4, run=incomplete, output=OUTPUT)) == (
        "file or folder not found: x"
    )
    assert usage_error(_suite(returncode=4, run=incomplete, output="nothing said\n")) is None


def test_usage_error_only_for_an_incomplete_usage_exit() -> None:
    assert usage_error(_suite(returncode=1, run=RunReport(completed=False), output=OUTPUT)) is None
    assert usage_error(_suite(returncode=4, run=RunReport(), output=OUTPUT)) is None
    assert (
        usage_error(_suite(returncode=None, run=RunReport(completed=False), output=OUTPUT)) is None
    )


def test_refuse_incomplete_lets_a_measured_run_through() -> None:
    measured = MeasuredSource.__new__(MeasuredSource)
    refuse_incomplete(_suite(measured=measured))  # no error


def test_refuse_incomplete_says_the_childs_usage_error() -> None:
    suite = _suite(returncode=4, run=RunReport(completed=False), output=OUTPUT)
    with pytest.raises(QuestUsageError) as caught:
        refuse_incomplete(suite)
    assert str(caught.value) == "file or folder not found: x"


def test_refuse_incomplete_says_the_runs_problem() -> None:
    suite = _suite(returncode=2, run=RunReport(completed=False, problem="timed out after 5 s"))
    with pytest.raises(QuestUsageError) as caught:
        refuse_incomplete(suite)
    assert (
        str(caught.value) == "check: the suite's run gave no result to judge: timed out after 5 s"
    )


def test_refuse_incomplete_of_a_complete_run_without_measurement() -> None:
    with pytest.raises(QuestUsageError) as caught:
        refuse_incomplete(_suite(returncode=0))
    assert str(caught.value) == (
        "check: the suite's run gave no result to judge: the test run did not complete"
    )
    with pytest.raises(QuestUsageError) as caught:
        refuse_incomplete(_suite(returncode=0), "audit")
    assert str(caught.value).startswith("audit: the suite's run gave no result to judge: ")


def test_the_childs_times_and_line_tests_are_read_leaving_out_what_is_malformed() -> None:
    assert _seconds({"t1": 0.5, "t2": 2, "t3": "1", "t4": True}) == {"t1": 0.5, "t2": 2.0}
    assert _seconds(None) == _seconds([1]) == {}
    given = {"src/a.py": {"3": ["t2", "t1"], "x": ["t"], "4": "t"}, "src/b.py": [1]}
    assert _line_tests(given) == {"src/a.py": {3: {"t1", "t2"}}}
    assert _line_tests("no") == {}
