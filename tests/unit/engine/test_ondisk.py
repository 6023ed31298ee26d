"""engine/ondisk.py: the mutant in the module's bytecode file, only in a throwaway layer, seen by every process."""

from __future__ import annotations

import importlib.util
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


def test_each_mutant_runs_from_the_bytecode_file_and_the_source_stays_the_original(
    tmp_path: Path,
) -> None:
    root, module, table = _project(tmp_path)
    before = os.stat(module)
    # x + 10 -> x - 10 and x - 10 -> x + 10: sources of the same size, run one after the other.
    same_size = [m for m in plan_mutants(SOURCE, 1) if m.operator == "arith.replace"]
    assert len(same_size) == 2
    assert _isolated(root) == "11 -11"  # the original's bytecode cached
    cached = importlib.util.cache_from_source(str(module))
    original = Path(cached).read_bytes()
    disk = OnDisk(str(root), str(tmp_path / "record"), table)
    answers = []
    for mutant in same_size:
        assert disk.write(str(module), 1, mutant.index)
        answers.append(_isolated(root))
        # What a test reads of the file is the original's text, in every run.
        assert module.read_text() == SOURCE
        disk.restore()
    assert answers == ["-9 -11", "11 9"]
    after = os.stat(module)
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
    assert Path(cached).read_bytes() == original
    assert _isolated(root) == "11 -11"


def test_a_bytecode_file_written_where_there_was_none_is_removed(tmp_path: Path) -> None:
    root, module, table = _project(tmp_path)
    disk = OnDisk(str(root), str(tmp_path / "record"), table)
    assert disk.write(str(module), 1, 0)
    cached = Path(importlib.util.cache_from_source(str(module)))
    assert cached.exists()
    disk.restore()
    assert not cached.exists()


def test_a_file_that_cannot_be_read_compiled_or_cached_is_not_written(tmp_path: Path) -> None:
    root, module, table = _project(tmp_path)
    disk = OnDisk(str(root), str(tmp_path / "record"), table)
    assert not disk.write(str(root / "pkg" / "gone.py"), 1, 0)  # no such file
    latin = root / "pkg" / "latin.py"
    latin.write_bytes(b"# \xe9\n" + SOURCE.encode())
    assert not disk.write(str(latin), 2, 0)  # not UTF-8: no text to compile
    (root / "pkg" / "__pycache__").write_text("a file where the folder would be")
    assert not disk.write(str(module), 1, 0)
    assert disk.written == ""
    disk.restore()  # nothing written: nothing to put back


def test_a_bytecode_file_the_run_removed_is_not_missed(tmp_path: Path) -> None:
    root, module, table = _project(tmp_path)
    disk = OnDisk(str(root), str(tmp_path / "record"), table)
    assert disk.write(str(module), 1, 0)
    Path(importlib.util.cache_from_source(str(module))).unlink()  # a test cleaned its caches
    disk.restore()
    assert disk.written == ""
    assert disk.write(str(module), 1, 0)  # the same mutant again: made once
    assert len(disk._made) == 1
    assert not disk.write(str(module), 3, 0)  # no function starts on line 3: no text


def test_no_bytecode_file_is_written_outside_the_files_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, module, table = _project(tmp_path)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    disk = OnDisk(str(root), str(tmp_path / "record"), table)
    assert not disk.write(str(module), 1, 0)
    assert not (tmp_path / "prefix").exists()


def test_nothing_is_written_outside_a_throwaway_layer(tmp_path: Path) -> None:
    root, module, _ = _project(tmp_path)
    disk = OnDisk(str(root), str(tmp_path / "record"), _table(tmp_path, _mount("/", "ext4")))
    assert not disk.write(str(module), 1, 0)
    assert module.read_text() == SOURCE


def test_the_reach_marks_work_where_no_start_up_hook_put_them(tmp_path: Path) -> None:
    # The run record names the marks file; the compiled text's prelude finds it.
    root, module, table = _project(tmp_path)
    remote = RemoteMutants(str(tmp_path / "children"))
    try:
        remote.ondisk = OnDisk(str(root), remote.record, table)
        assert remote.writes(str(module))
        marks = remote.arm(str(module), 1, None)
        record = Path(remote.record).read_bytes()
        assert b'"mode": "ondisk"' in record
        assert _isolated(root) == "11 -11"  # the probe: the original, with its mark
        assert os.path.exists(marks)
        remote.disarm()
        assert Path(remote.record).read_bytes() == record
        changed = next(m for m in plan_mutants(SOURCE, 1) if m.operator == "return.changed")
        assert remote.arm(str(module), 1, changed.index) == marks
        assert not os.path.exists(marks)  # each run's marks start afresh
        # The probe's record and a mutant's are the same: nothing a process reads tells them apart.
        assert Path(remote.record).read_bytes() == record
        assert _isolated(root) == "-12 -11"  # another int: -v - 1
        assert os.path.exists(marks)
    finally:
        remote.close()
    assert module.read_text() == SOURCE


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
