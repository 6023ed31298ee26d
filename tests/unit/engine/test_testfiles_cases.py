"""engine/testfiles.py: recorded roots, roots given back, test files found and digested."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pytest_quest.engine.testfiles import (
    FileSearch,
    as_recorded,
    digest,
    digest_test_files,
    find_test_files,
    recorded_paths,
)


def test_recorded_paths_are_relative_posix_paths(tmp_path: Path) -> None:
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    search = FileSearch(roots=[tmp_path / "tests" / "unit", tmp_path])
    assert recorded_paths(search, tmp_path) == ["tests/unit", "."]


def test_recorded_paths_of_the_rootdir_alone(tmp_path: Path) -> None:
    assert recorded_paths(FileSearch(roots=[tmp_path]), tmp_path) == ["."]


def test_recorded_paths_are_empty_when_one_root_lies_outside(tmp_path: Path) -> None:
    inside = tmp_path / "project" / "tests"
    inside.mkdir(parents=True)
    outside = tmp_path / "other"
    outside.mkdir()
    search = FileSearch(roots=[inside, outside])
    assert recorded_paths(search, tmp_path / "project") == []


def test_recorded_paths_of_no_roots(tmp_path: Path) -> None:
    assert recorded_paths(FileSearch(roots=[]), tmp_path) == []


def test_as_recorded_takes_the_recorded_paths_that_exist(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    search = FileSearch(roots=[tmp_path], patterns=["check_*.py"])
    found = as_recorded(search, ["tests", "gone"], tmp_path)
    assert found == FileSearch(roots=[(tmp_path / "tests").resolve()], patterns=["check_*.py"])
    assert search.roots == [tmp_path]


def test_as_recorded_keeps_the_search_when_no_recorded_path_exists(tmp_path: Path) -> None:
    search = FileSearch(roots=[tmp_path])
    assert as_recorded(search, ["gone", "also/gone"], tmp_path) is search


def test_as_recorded_keeps_given_roots(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    search = FileSearch(roots=[tmp_path], given=True)
    assert as_recorded(search, ["tests"], tmp_path) is search


def test_as_recorded_keeps_the_search_without_recorded_paths(tmp_path: Path) -> None:
    search = FileSearch(roots=[tmp_path])
    assert as_recorded(search, [], tmp_path) is search


def _write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_find_test_files_by_pattern_skipping_hidden_skipped_and_norecurse(tmp_path: Path) -> None:
    a = _write(tmp_path / "test_a.py")
    b = _write(tmp_path / "sub" / "b_test.py")
    _write(tmp_path / "sub" / "helper.py")
    _write(tmp_path / "sub" / "test_data.txt")
    _write(tmp_path / ".hidden" / "test_h.py")
    _write(tmp_path / "build" / "test_b.py")
    _write(tmp_path / "__pycache__" / "test_c.py")
    _write(tmp_path / "vendored" / "test_v.py")
    _write(tmp_path / "skipme" / "test_x.py")
    search = FileSearch(roots=[tmp_path], norecurse=["vend*"])
    found = find_test_files(search, exclude=[tmp_path / "skipme"])
    assert found == sorted([a.resolve(), b.resolve()])


def test_find_test_files_with_no_patterns_uses_the_defaults(tmp_path: Path) -> None:
    a = _write(tmp_path / "test_a.py")
    b = _write(tmp_path / "a_test.py")
    _write(tmp_path / "check_a.py")
    assert find_test_files(FileSearch(roots=[tmp_path], patterns=[])) == sorted([a, b])


def test_find_test_files_with_own_patterns(tmp_path: Path) -> None:
    _write(tmp_path / "test_a.py")
    c = _write(tmp_path / "check_a.py")
    assert find_test_files(FileSearch(roots=[tmp_path], patterns=["check_*.py"])) == [c]


def test_find_test_files_takes_a_file_root_whatever_its_name(tmp_path: Path) -> None:
    one = _write(tmp_path / "anything.py")
    _write(tmp_path / "test_other.py")
    assert find_test_files(FileSearch(roots=[one])) == [one]


def test_digest_is_the_short_sha256_of_the_bytes(tmp_path: Path) -> None:
    path = _write(tmp_path / "test_a.py", "x = 1\n")
    expected = "sha256:" + hashlib.sha256(b"x = 1\n").hexdigest()[:32]
    assert digest(path) == expected
    assert len(expected) == 7 + 32


def test_digest_test_files_maps_relative_paths_to_digests(tmp_path: Path) -> None:
    a = _write(tmp_path / "tests" / "test_a.py", "a\n")
    b = _write(tmp_path / "tests" / "deep" / "test_b.py", "b\n")
    search = FileSearch(roots=[tmp_path / "tests"])
    assert digest_test_files(search, tmp_path) == {
        "tests/deep/test_b.py": digest(b),
        "tests/test_a.py": digest(a),
    }


def test_digest_test_files_passes_over_a_file_it_cannot_read(tmp_path: Path) -> None:
    a = _write(tmp_path / "test_a.py", "a\n")
    os.symlink(tmp_path / "nowhere.py", tmp_path / "test_broken.py")
    assert digest_test_files(FileSearch(roots=[tmp_path]), tmp_path) == {"test_a.py": digest(a)}


def test_digest_test_files_leaves_out_excluded_folders(tmp_path: Path) -> None:
    a = _write(tmp_path / "test_a.py", "a\n")
    _write(tmp_path / "out" / "test_b.py", "b\n")
    found = digest_test_files(FileSearch(roots=[tmp_path]), tmp_path, exclude=[tmp_path / "out"])
    assert found == {"test_a.py": digest(a)}
