"""Reading a kB field of a /proc status file (engine/memory_cap.py `_field`)."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.engine.memory_cap import _field

STATUS = "Name:\tpython\nVmPeak:\t  2048 kB\nVmRSS:\t   512 kB\nVmSwap:\n"


def test_field_in_bytes(tmp_path: Path) -> None:
    path = tmp_path / "status"
    path.write_text(STATUS, encoding="ascii")
    assert _field(str(path), "VmRSS") == 512 * 1024
    assert _field(str(path), "VmPeak") == 2048 * 1024


def test_field_absent_unreadable_or_malformed_is_none(tmp_path: Path) -> None:
    path = tmp_path / "status"
    path.write_text(STATUS + "Bad:\tlots kB\n", encoding="ascii")
    assert _field(str(path), "VmHWM") is None
    assert _field(str(path), "Vm") is None  # a prefix of a name is not the name
    assert _field(str(path), "VmSwap") is None  # no value
    assert _field(str(path), "Bad") is None  # not a number
    assert _field(str(tmp_path / "missing"), "VmRSS") is None
    assert _field(str(tmp_path), "VmRSS") is None  # a folder
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xffVmRSS:\t7 kB\nVmRSS:\t9 kB\n")
    assert _field(str(binary), "VmRSS") == 9 * 1024
