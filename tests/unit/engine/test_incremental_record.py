"""The run record of incremental runs: written and read back whole, refused when damaged."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from pytest_quest.engine.incremental import (
    RunRecord,
    default_path,
    environment,
    from_body,
    load,
    project_files,
    save,
    to_body,
)


def test_a_record_reads_back_as_written_and_identical_arcs_are_stored_once(tmp_path: Path) -> None:
    arcs = [(1, 2), (2, -1)]
    record = RunRecord(
        environment={"python": "3.11"},
        files={"src/a.py": "d1"},
        sources={"src/a.py": "x = 1\n"},
        test_files=["tests/test_a.py"],
        outcomes={"t::a": "passed", "t::b": "passed", "t::c": "failed"},
        seconds={"t::a": 0.5, "t::b": 0.25, "t::c": 1.0},
        arcs={"t::a": {"src/a.py": arcs}, "t::b": {"src/a.py": list(reversed(arcs))}},
        children={"t::b"},
    )
    path = tmp_path / "quest.run.gz"
    save(path, record)
    assert load(path) == RunRecord(
        **{**record.__dict__, "arcs": {**record.arcs, "t::b": {"src/a.py": arcs}, "t::c": {}}}
    )
    assert gzip.decompress(path.read_bytes()).count(b"[1,2,2,-1]") == 1


def test_a_missing_damaged_or_foreign_record_is_a_reason_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "quest.run.gz"
    assert load(path) == f"no previous run recorded at {path}"
    path.write_bytes(b"not gzip")
    assert "is unreadable" in str(load(path))
    path.write_bytes(gzip.compress(b'{"format": "other"}'))
    assert load(path) == f"{path} is not a pytest-quest run record"
    path.write_bytes(gzip.compress(b'{"format": "pytest-quest run record", "version": 1}'))
    assert "is damaged" in str(load(path))


def test_project_files_leave_out_caches_environments_and_the_ratchet(tmp_path: Path) -> None:
    for name in (
        "src/a.py",
        "tests/data.json",
        ".coveragerc",
        ".git/HEAD",
        "src/__pycache__/a.pyc",
        "venv/pyvenv.cfg",
        "venv/lib/x.py",
        ".coverage",
        "quest.json",
        "quest.json.lock",
        ".quest/quest.json.run.gz",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    quest = tmp_path / "quest.json"
    found = project_files(tmp_path, [quest, default_path(quest)])
    assert sorted(found) == [".coveragerc", "src/a.py", "tests/data.json"]
    (tmp_path / "tests/data.json").write_text("changed")
    assert project_files(tmp_path, [quest])["tests/data.json"] != found["tests/data.json"]


def test_a_named_pipe_in_the_project_is_no_input_and_blocks_nothing(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    os.mkfifo(tmp_path / "src" / "pipe")  # opened for reading, it would wait for a writer
    assert sorted(project_files(tmp_path, [])) == ["src/a.py"]


def test_the_environment_key_names_python_arguments_and_sources() -> None:
    key = environment(["-k", "fast"], ["src/pkg"], {"subprocesses measured": "True"})
    assert key["arguments"] == "-k fast" and key["sources"] == "src/pkg"
    assert key["python"].split()[0].count(".") == 2
    assert len(key["installed packages"]) == 40


def test_a_record_sent_as_its_body_is_the_record() -> None:
    """check's child sends its record as the file's JSON object; its judge reads it back."""
    record = RunRecord(
        environment={"python": "3.11"},
        files={"src/a.py": "d1"},
        sources={"src/a.py": "def f():\n    return 1\n"},
        test_files=["tests/test_a.py"],
        outcomes={"tests/test_a.py::test_f": "passed", "tests/test_a.py::test_g": "failed"},
        seconds={"tests/test_a.py::test_f": 0.5, "tests/test_a.py::test_g": 0.25},
        arcs={"tests/test_a.py::test_f": {"src/a.py": [(-1, 1), (1, 2), (2, -1)]}},
        children={"tests/test_a.py::test_g"},
    )
    back = from_body(to_body(record), "the child")
    assert isinstance(back, RunRecord)
    assert back.outcomes == record.outcomes and back.seconds == record.seconds
    assert back.arcs["tests/test_a.py::test_f"] == record.arcs["tests/test_a.py::test_f"]
    assert back.children == record.children and back.sources == record.sources
    assert isinstance(from_body({"format": "something else"}, "the child"), str)
    damaged = {**to_body(record), "arcsets": "x"}
    assert "damaged" in str(from_body(damaged, "the child"))
