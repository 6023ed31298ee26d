"""engine/incremental.py: the record's tests with their lines, its body and its reading back,
saving beside the locks or anywhere, and the project's files."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path

import pytest

from pytest_quest.core.incremental import RecordedTest
from pytest_quest.engine.incremental import (
    FORMAT,
    VERSION,
    RunRecord,
    from_body,
    load,
    project_files,
    save,
    to_body,
)


def test_recorded_tests_with_their_lines_per_file() -> None:
    shared = [(1, 2), (2, -1)]
    record = RunRecord(
        outcomes={"t::a": "passed", "t::b": "failed", "t::c": "passed"},
        arcs={"t::a": {"m.py": shared, "n.py": [(5, 6)]}, "t::b": {"m.py": shared}},
        children={"t::b"},
    )
    found = record.recorded_tests()
    assert found == {
        "t::a": RecordedTest("passed", {"m.py": frozenset({1, 2}), "n.py": frozenset({5, 6})}),
        "t::b": RecordedTest("failed", {"m.py": frozenset({1, 2})}, children=True),
        "t::c": RecordedTest("passed", {}),
    }
    assert found["t::a"].lines["m.py"] is found["t::b"].lines["m.py"]


def test_recorded_tests_of_equal_lists_apart() -> None:
    record = RunRecord(
        outcomes={"t::a": "passed", "t::b": "passed"},
        arcs={"t::a": {"m.py": [(1, 2)]}, "t::b": {"m.py": [(3, 4)]}},
    )
    found = record.recorded_tests()
    assert found["t::a"].lines == {"m.py": frozenset({1, 2})}
    assert found["t::b"].lines == {"m.py": frozenset({3, 4})}


def test_to_body_shares_a_list_of_arcs_between_tests() -> None:
    shared = [(3, 4), (1, 2)]
    record = RunRecord(
        environment={"python": "3.11"},
        test_files=["t2.py", "t1.py"],
        outcomes={"t::a": "passed", "t::b": "failed"},
        seconds={"t::a": 0.1234567891},
        arcs={"t::a": {"m.py": shared, "n.py": [(1, 2), (3, 4)]}, "t::b": {"m.py": shared}},
        children={"t::b"},
    )
    assert to_body(record) == {
        "format": FORMAT,
        "version": VERSION,
        "environment": {"python": "3.11"},
        "files": {},
        "sources": {},
        "test_files": ["t1.py", "t2.py"],
        "tests": {
            "t::a": ["passed", 0.123457, False, {"m.py": 0, "n.py": 0}],
            "t::b": ["failed", 0.0, True, {"m.py": 0}],
        },
        "arcsets": [[1, 2, 3, 4]],
    }


def test_from_body_of_another_version() -> None:
    body = to_body(RunRecord())
    body["version"] = 7
    assert from_body(body, "r.gz") == "the run record r.gz has version 7, not 1"
    del body["version"]
    assert from_body(body, "r.gz") == "the run record r.gz has version None, not 1"


def test_from_body_of_something_else() -> None:
    assert from_body([1], "r.gz") == "r.gz is not a pytest-quest run record"
    assert from_body({"format": "x"}, "r.gz") == "r.gz is not a pytest-quest run record"


def test_from_body_reads_back_to_body() -> None:
    record = RunRecord(
        files={"a.py": "d1"},
        sources={"m.py": "d2"},
        test_files=["t.py"],
        outcomes={"t::a": "passed"},
        seconds={"t::a": 0.5},
        arcs={"t::a": {"m.py": [(1, 2)]}},
        children={"t::a"},
    )
    assert from_body(to_body(record), "r.gz") == record


def test_from_body_of_a_damaged_record() -> None:
    body = to_body(RunRecord())
    body["arcsets"] = [[1, 2, 3]]
    assert from_body(body, "r.gz") == (
        "the run record r.gz is damaged "
        "(ValueError: an arc list of 3 items, not pairs of line numbers)"
    )
    body = to_body(RunRecord())
    del body["files"]
    assert from_body(body, "r.gz") == "the run record r.gz is damaged (KeyError: 'files')"


def test_save_and_load_beside_the_locks(tmp_path: Path) -> None:
    path = tmp_path / ".quest" / "quest.json.run.gz"
    record = RunRecord(outcomes={"t::a": "passed"}, seconds={"t::a": 1.0}, arcs={"t::a": {}})
    save(path, record)
    assert load(path) == record
    assert (tmp_path / ".quest" / ".gitignore").exists()
    assert sorted(os.listdir(path.parent)) == [".gitignore", "quest.json.run.gz"]
    body = json.loads(gzip.decompress(path.read_bytes()))
    assert body == to_body(record)


def test_save_anywhere_else_makes_the_folder(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "run.gz"
    save(path, RunRecord())
    assert load(path) == RunRecord()
    assert sorted(os.listdir(path.parent)) == ["run.gz"]


def test_save_that_fails_leaves_no_temporary_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def refuse(source: str, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pytest_quest.engine.incremental.os.replace", refuse)
    with pytest.raises(OSError):
        save(tmp_path / "run.gz", RunRecord())
    assert os.listdir(tmp_path) == []


def test_load_of_no_file_or_an_unreadable_one(tmp_path: Path) -> None:
    assert load(tmp_path / "gone.gz") == f"no previous run recorded at {tmp_path / 'gone.gz'}"
    (tmp_path / "bad.gz").write_bytes(b"not gzip")
    assert str(load(tmp_path / "bad.gz")).startswith(
        f"the run record {tmp_path / 'bad.gz'} is unreadable ("
    )


def test_project_files_leave_out_what_is_no_input(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_bytes(b"x = 1\n")
    (tmp_path / "src" / "m.pyc").write_bytes(b"")
    (tmp_path / ".coverage").write_bytes(b"")
    (tmp_path / ".coveragerc").write_bytes(b"[run]\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_bytes(b"")
    (tmp_path / "pkg.egg-info").mkdir()
    (tmp_path / "pkg.egg-info" / "PKG-INFO").write_bytes(b"")
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv" / "pyvenv.cfg").write_bytes(b"")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "x.py").write_bytes(b"")
    (tmp_path / "quest.json").write_bytes(b"{}")
    (tmp_path / "quest.json.lock").write_bytes(b"")
    (tmp_path / "skip").mkdir()
    (tmp_path / "skip" / "a.py").write_bytes(b"")
    os.symlink(tmp_path / "nowhere", tmp_path / "broken")
    found = project_files(tmp_path, [tmp_path / "quest.json", tmp_path / "skip"])
    assert found == {
        ".coveragerc": hashlib.sha1(b"[run]\n").hexdigest(),
        "src/m.py": hashlib.sha1(b"x = 1\n").hexdigest(),
    }
