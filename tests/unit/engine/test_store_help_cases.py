"""engine/store_help.py: special files named, old files pruned, stamps, write refusals, the gc pause."""

from __future__ import annotations

import fcntl
import gc
import os
import stat
import struct
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_quest.engine import store_help
from pytest_quest.engine.store_help import (
    file_stamp,
    locked_attribute,
    paused_gc,
    prune_older,
    special_kind,
    unwritable,
)


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        (stat.S_IFIFO | 0o644, "FIFO (named pipe)"),
        (stat.S_IFSOCK | 0o644, "socket"),
        (stat.S_IFCHR | 0o644, "device"),
        (stat.S_IFBLK | 0o644, "device"),
        (stat.S_IFREG | 0o644, "special file"),
        (stat.S_IFLNK | 0o644, "special file"),
    ],
)
def test_special_kind_names_the_kind_of_file(mode: int, kind: str) -> None:
    assert special_kind(mode) == kind


def _aged(path: Path, seconds_ago: float) -> Path:
    path.write_text("x")
    then = time.time() - seconds_ago
    os.utime(path, (then, then))
    return path


def test_prune_older_removes_only_old_files_of_the_pattern(tmp_path: Path) -> None:
    old = _aged(tmp_path / "a.journal", 200)
    new = _aged(tmp_path / "b.journal", 10)
    other = _aged(tmp_path / "c.lock", 200)
    prune_older(tmp_path, "*.journal", 100)
    assert not old.exists()
    assert new.exists()
    assert other.exists()


def test_prune_older_passes_over_a_file_it_cannot_stat(tmp_path: Path) -> None:
    os.symlink(tmp_path / "nowhere", tmp_path / "broken.journal")
    old = _aged(tmp_path / "z.journal", 200)
    prune_older(tmp_path, "*.journal", 100)
    assert os.path.islink(tmp_path / "broken.journal")
    assert not old.exists()


def test_file_stamp_is_inode_size_and_time(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    found = os.stat(path)
    assert file_stamp(path) == (found.st_ino, 5, found.st_mtime_ns)


def test_file_stamp_of_a_missing_file_is_none(tmp_path: Path) -> None:
    assert file_stamp(tmp_path / "missing") is None


def test_stat_or_none(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    found = store_help._stat_or_none(path)
    assert found is not None
    assert found.st_size == 3
    assert store_help._stat_or_none(tmp_path / "missing") is None


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (stat.UF_IMMUTABLE, ("immutable", "chflags nouchg,noschg")),
        (stat.SF_IMMUTABLE, ("immutable", "chflags nouchg,noschg")),
        (stat.UF_IMMUTABLE | stat.UF_APPEND, ("immutable", "chflags nouchg,noschg")),
        (stat.UF_APPEND, ("append-only", "chflags nouappnd,nosappnd")),
        (stat.SF_APPEND, ("append-only", "chflags nouappnd,nosappnd")),
        (0, None),
        (stat.UF_NODUMP, None),
    ],
)
def test_locked_attribute_from_bsd_flags(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flags: int, expected: object
) -> None:
    monkeypatch.setattr(store_help, "_stat_or_none", lambda path: SimpleNamespace(st_flags=flags))
    assert locked_attribute(tmp_path / "f") == expected


def test_locked_attribute_of_a_missing_file_is_none(tmp_path: Path) -> None:
    assert locked_attribute(tmp_path / "missing") is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0x10, ("immutable", "chattr -i")),
        (0x30, ("immutable", "chattr -i")),
        (0x20, ("append-only", "chattr -a")),
        (0x0, None),
        (0x40, None),
    ],
)
def test_locked_attribute_from_linux_flags(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: int, expected: object
) -> None:
    path = tmp_path / "f"
    path.write_text("x")
    asked: list[int] = []

    def ioctl(fd: int, request: int, arg: bytes) -> bytes:
        asked.append(request)
        assert struct.unpack("l", arg) == (0,)
        return struct.pack("l", value)

    monkeypatch.setattr(fcntl, "ioctl", ioctl)
    assert locked_attribute(path) == expected
    assert asked == [0x80086601]


def test_locked_attribute_when_the_file_system_has_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "f"
    path.write_text("x")

    def ioctl(fd: int, request: int, arg: bytes) -> bytes:
        raise OSError(25, "Inappropriate ioctl for device")

    monkeypatch.setattr(fcntl, "ioctl", ioctl)
    assert locked_attribute(path) is None


def test_unwritable_read_only_file(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    path.write_text("{}")
    path.chmod(0o444)
    error = unwritable(path)
    assert error is not None
    assert str(error) == (
        f"{path}: is read-only (make it writable with chmod u+w to record results)"
    )


def test_unwritable_writable_file_is_none(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    path.write_text("{}")
    assert unwritable(path) is None


def test_unwritable_locked_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    path.write_text("{}")
    monkeypatch.setattr("pytest_quest.engine.store_help.os.access", lambda p, mode: False)
    monkeypatch.setattr(store_help, "locked_attribute", lambda p: ("immutable", "chattr -i"))
    error = unwritable(path)
    assert error is not None
    assert error.problem == "is immutable: a file attribute forbids changing it, whatever its mode"
    assert error.fix == f"clear it with `sudo chattr -i {path}` to record results"


def test_unwritable_by_this_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    path.write_text("{}")
    monkeypatch.setattr("pytest_quest.engine.store_help.os.access", lambda p, mode: False)
    monkeypatch.setattr(store_help, "locked_attribute", lambda p: None)
    error = unwritable(path)
    assert error is not None
    assert error.path == str(path)
    assert error.problem == "cannot be written by this user"
    assert error.fix == (
        "give this user write access to it, as its owner or through its group, to record results"
    )


def test_paused_gc_turns_the_collector_back_on() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_paused_gc_leaves_an_off_collector_off() -> None:
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_paused_gc_turns_it_back_on_after_an_error() -> None:
    with pytest.raises(KeyError), paused_gc():
        raise KeyError("x")
    assert gc.isenabled()
