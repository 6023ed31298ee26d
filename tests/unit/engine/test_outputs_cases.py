"""engine/outputs.py: where an export may be written, refused with the reason, and the atomic write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.engine.outputs import target, write


def _refused(given: str, where: Path, **kwargs: object) -> str:
    with pytest.raises(QuestUsageError) as caught:
        target(
            given,
            where,
            bool(kwargs.pop("force", False)),
            kwargs.pop("protected", []),  # type: ignore[arg-type]
            kwargs.pop("source_roots", []),  # type: ignore[arg-type]
            **kwargs,  # type: ignore[arg-type]
        )
    return str(caught.value)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("r.json", "json"),
        ("r.CSV", "csv"),
        ("r.md", "md"),
        ("r.sarif", "sarif"),
        ("r.html", "html"),
    ],
)
def test_target_by_suffix(tmp_path: Path, name: str, kind: str) -> None:
    assert target(name, tmp_path, False, [], []) == (tmp_path / name, kind)


def test_target_given_as_an_absolute_path(tmp_path: Path) -> None:
    given = tmp_path / "out" / "r.md"
    given.parent.mkdir()
    elsewhere = tmp_path / "elsewhere"
    assert target(str(given), elsewhere, False, [], [], rootdir=tmp_path) == (given, "md")


def test_target_unknown_suffix(tmp_path: Path) -> None:
    assert _refused("r.txt", tmp_path) == (
        "--quest-export-to r.txt: unknown suffix '.txt'; use one of .json, .csv, .md, .sarif, .html"
    )
    assert _refused("report", tmp_path) == (
        "--quest-export-to report: unknown suffix '(none)'; use one of .json, .csv, .md, .sarif, .html"
    )


def test_target_in_a_missing_folder(tmp_path: Path) -> None:
    assert _refused("gone/r.json", tmp_path) == (
        f"--quest-export-to gone/r.json: the folder {tmp_path / 'gone'} does not exist; "
        "create it first"
    )


def test_target_is_the_ratchet_file_or_its_lock(tmp_path: Path) -> None:
    ratchet = tmp_path / "quest.json"
    assert _refused("quest.json", tmp_path, force=True, protected=[ratchet]) == (
        f"--quest-export-to quest.json: that is the ratchet file {ratchet}; "
        "an export never writes over it (choose another path)"
    )
    assert _refused("quest.json.lock.json", tmp_path, force=True, protected=[ratchet]) == (
        f"--quest-export-to quest.json.lock.json: that name belongs to the ratchet file {ratchet} "
        "(its lock or temporary files); an export never writes there (choose another path)"
    )
    assert _refused(".quest-tmp-1.json", tmp_path, force=True, protected=[ratchet]).startswith(
        "--quest-export-to .quest-tmp-1.json: that name belongs to the ratchet file"
    )


def test_target_beside_the_ratchet_file_with_another_name(tmp_path: Path) -> None:
    ratchet = tmp_path / "quest.json"
    assert target("questx.json", tmp_path, False, [ratchet], []) == (
        tmp_path / "questx.json",
        "json",
    )
    sub = tmp_path / "sub"
    sub.mkdir()
    assert target("quest.json.md", sub, False, [ratchet], []) == (sub / "quest.json.md", "md")


def test_target_inside_the_code_or_the_tests(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    tests = tmp_path / "tests"
    tests.mkdir()
    assert _refused("src/r.json", tmp_path, force=True, source_roots=[src]) == (
        f"--quest-export-to src/r.json: it is inside the code under test ({src}); "
        "an export never writes there (choose another path)"
    )
    assert _refused("tests/r.json", tmp_path, force=True, test_roots=[tests]) == (
        f"--quest-export-to tests/r.json: it is inside the tests ({tests}); "
        "an export never writes there (choose another path)"
    )
    one = src / "one.json"
    assert _refused(str(one), tmp_path, force=True, source_roots=[one]).startswith(
        f"--quest-export-to {one}: it is inside the code under test ({one})"
    )


def test_target_that_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "r.json").mkdir()
    assert _refused("r.json", tmp_path, force=True) == (
        "--quest-export-to r.json: it is a folder; name a file in it"
    )


def test_target_that_is_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "r.json")
    assert _refused("r.json", tmp_path, force=True) == (
        "--quest-export-to r.json: it is not a regular file (a FIFO, a device?); name a file"
    )


def test_target_outside_the_rootdir_needs_force(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    out = tmp_path / "r.json"
    assert _refused(str(out), root, rootdir=root) == (
        f"--quest-export-to {out}: {out} is outside the rootdir {root}; "
        "pass --quest-export-force to write there"
    )
    assert target(str(out), root, True, [], [], rootdir=root) == (out, "json")


def test_target_that_exists_needs_force(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text("{}")
    assert _refused("r.json", tmp_path, rootdir=tmp_path) == (
        "--quest-export-to r.json: the file exists; pass --quest-export-force to overwrite it"
    )
    assert target("r.json", tmp_path, True, [], [], rootdir=tmp_path) == (
        tmp_path / "r.json",
        "json",
    )


def test_write_replaces_the_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "r.md"
    path.write_text("old")
    write(path, "new\r\ntext")
    assert path.read_bytes() == b"new\r\ntext"
    assert sorted(os.listdir(tmp_path)) == ["r.md"]


def test_write_that_fails_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "r.md"
    path.mkdir()
    (path / "inside").write_text("x")
    with pytest.raises(OSError):
        write(path, "text")
    assert sorted(os.listdir(tmp_path)) == ["r.md"]
