"""engine/ondisk.py: the mutant written into its file, only in a throwaway layer, seen by every process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_quest.core.mutants import plan_mutants
from pytest_quest.engine.ondisk import OnDisk, in_overlay, mounts
from pytest_quest.engine.remote_mutant import RemoteMutants, record_bytes

SOURCE = "def shift(x):\n    if x > 0:\n        return x + 10\n    return x - 10\n"


def _table(tmp_path: Path, *lines: str) -> str:
    table = tmp_path / "mountinfo"
    table.write_text("".join(line + "\n" for line in lines))
    return str(table)


def _mount(point: str, kind: str) -> str:
    return f"197 164 0:68 / {point} rw,relatime - {kind} {kind} rw"


def test_the_layer_is_taken_from_the_mount_table(tmp_path: Path) -> None:
    root = tmp_path / "my project"
    (root / "venv").mkdir(parents=True)
    escaped = str(root).replace(" ", "\\040")
    table = _table(tmp_path, _mount("/", "ext4"), _mount(escaped, "overlay"))
    assert mounts(table)[-1] == (str(root), "overlay")
    assert in_overlay(str(root / "pkg" / "calc.py"), str(root), table)
    assert not in_overlay(str(tmp_path / "elsewhere.py"), str(root), table)
    # A mount deeper in the project (a read-only environment bound over it) holds its files.
    deeper = _table(tmp_path, _mount(escaped, "overlay"), _mount(escaped + "/venv", "ext4"))
    assert not in_overlay(str(root / "venv" / "x.py"), str(root), deeper)
    assert in_overlay(str(root / "x.py"), str(root), deeper)
    # The project on the user's disk (Landlock, no sandbox): never written.
    plain = _table(tmp_path, _mount("/", "ext4"))
    assert not in_overlay(str(root / "x.py"), str(root), plain)
    assert not in_overlay(str(root / "x.py"), str(root), str(tmp_path / "no-table"))


def _project(tmp_path: Path) -> tuple[Path, Path, str]:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    module = root / "pkg" / "calc.py"
    module.write_text(SOURCE)
    return root, module, _table(tmp_path, _mount(str(root), "overlay"))


def _isolated(root: Path) -> str:
    """What `shift` gives for 1 and -1 in ``python -I -S`` with no environment (no start-up hook)."""
    code = (
        f"import sys; sys.path.insert(0, {str(root)!r}); from pkg.calc import shift; "
        "print(shift(1), shift(-1))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, env={}, check=True
    )
    return done.stdout.strip()


def test_a_mutant_of_the_same_size_written_in_the_same_second_is_seen(tmp_path: Path) -> None:
    root, module, table = _project(tmp_path)
    before = os.stat(module)
    # x + 10 -> x - 10 and x - 10 -> x + 10: texts of the same size; the bytecode of each is cached.
    same_size = [m for m in plan_mutants(SOURCE, 1) if m.operator == "arith.replace"]
    assert len(same_size) == 2
    disk = OnDisk(str(root), str(tmp_path / "record"), table)
    assert _isolated(root) == "11 -11"  # the original's bytecode cached
    answers = []
    for mutant in same_size:
        assert disk.write(str(module), 1, mutant.index)
        answers.append(_isolated(root))
        disk.restore()
    assert answers == ["-9 -11", "11 9"]
    assert len({len(text) for text, _ in filter(None, disk._texts.values())}) == 1
    # The original's bytes and times are back, and its cached bytecode is right again.
    assert module.read_text() == SOURCE
    after = os.stat(module)
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
    assert _isolated(root) == "11 -11"


def test_nothing_is_written_outside_a_throwaway_layer(tmp_path: Path) -> None:
    root, module, _ = _project(tmp_path)
    disk = OnDisk(str(root), str(tmp_path / "record"), _table(tmp_path, _mount("/", "ext4")))
    assert not disk.write(str(module), 1, 0)
    assert module.read_text() == SOURCE


def test_the_reach_marks_work_where_no_start_up_hook_put_them(tmp_path: Path) -> None:
    # The run record names this run's marks file; the text's prelude finds it.
    root, module, table = _project(tmp_path)
    remote = RemoteMutants(str(tmp_path / "children"))
    try:
        remote.ondisk = OnDisk(str(root), remote.record, table)
        assert remote.writes(str(module))
        marks = remote.arm(str(module), 1, None)
        assert b'"ondisk": true' in Path(remote.record).read_bytes()
        assert _isolated(root) == "11 -11"  # the probe: the original, with its mark
        assert os.path.exists(marks)
        remote.disarm()
        assert module.read_text() == SOURCE
        changed = next(m for m in plan_mutants(SOURCE, 1) if m.operator == "return.changed")
        marks = remote.arm(str(module), 1, changed.index)
        assert _isolated(root) == "-12 -11"  # another int: -v - 1
        assert os.path.exists(marks)
    finally:
        remote.close()
    assert module.read_text() == SOURCE  # put back when the child ends
    assert Path(remote.record).exists() is False or record_bytes() is not None


@pytest.mark.parametrize("mode", ["off", "mutant"])
def test_a_record_that_names_no_marks_file_leaves_none(tmp_path: Path, mode: str) -> None:
    root, module, table = _project(tmp_path)
    record = tmp_path / "record"
    disk = OnDisk(str(root), str(record), table)
    record.write_bytes(record_bytes(mode) if mode == "off" else b"not a record\n")
    assert disk.write(str(module), 1, None)
    assert _isolated(root) == "11 -11"
    disk.restore()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mountinfo", "project", "record"]
