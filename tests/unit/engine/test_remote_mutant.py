"""Mutants in the processes a test starts (engine/remote_mutant.py), with real children."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_quest.core.mutants import plan_mutants
from pytest_quest.engine.remote_mutant import RemoteMutants, rcfile_text

CODE = textwrap.dedent(
    """\
    def double(x):
        return 2 * x


    if __name__ == "__main__":
        print(double(4))
    """
)


@pytest.fixture
def remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RemoteMutants]:
    for name in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_FILE", "COVERAGE_RCFILE"):
        monkeypatch.delenv(name, raising=False)
    made = RemoteMutants()
    monkeypatch.setenv("COVERAGE_PROCESS_START", made.rcfile)
    yield made
    made.close()
    assert not os.path.exists(made.root)


def run(folder: Path, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(folder))
    done = subprocess.run(
        [sys.executable, *args], env=env, cwd=folder, capture_output=True, text=True, check=True
    )
    assert done.stderr == ""  # nothing of ours on the program's stderr
    return done.stdout.strip()


def test_a_child_imports_the_mutant_and_marks_the_run(
    tmp_path: Path, remote: RemoteMutants
) -> None:
    (tmp_path / "dbl.py").write_text(CODE)
    changed = next(m.index for m in plan_mutants(CODE, 1) if m.operator == "return.changed")
    assert run(tmp_path, "-c", "import dbl; print(dbl.double(4))") == "8"  # off: the original
    marks = remote.arm(str(tmp_path / "dbl.py"), 1, changed)
    assert run(tmp_path, "-c", "import dbl; print(dbl.double(4))") != "8"
    assert os.path.exists(marks)
    remote.disarm()
    marks = remote.arm(str(tmp_path / "dbl.py"), 1, None)  # the probe: original plus a mark
    assert run(tmp_path, "-m", "dbl") == "8"
    assert os.path.exists(marks)
    marks = remote.arm(str(tmp_path / "dbl.py"), 1, changed)
    assert run(tmp_path, "-c", "print(1)") == "1"  # a run that never imports it: no mark
    assert not os.path.exists(marks)


def test_the_rcfile_escapes_percent_and_names_the_spec() -> None:
    text = rcfile_text("/tmp/a%b", "mutant", file="/x.py", start=3, index=1, marks="/m")
    assert "data_file = /tmp/a%%b/.coverage-remote" in text
    assert "mode = mutant\nfile = /x.py\nindex = 1\nmarks = /m\nstart = 3\n" in text


def test_each_run_starts_without_the_forkserver_of_an_earlier_run(
    tmp_path: Path, remote: RemoteMutants
) -> None:
    # A forkserver forks every later worker from the module it imported when
    # it started (another run's mutant, or none): each run gets its own.
    from multiprocessing import forkserver

    forkserver.ensure_running()
    pid = forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
    assert isinstance(pid, int)
    remote.arm(str(tmp_path / "dbl.py"), 1, None)
    assert forkserver._forkserver._forkserver_pid is None  # type: ignore[attr-defined]
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # ended and reaped


def test_each_run_rewrites_the_record_in_place_and_the_rcfile_never(
    tmp_path: Path, remote: RemoteMutants
) -> None:
    # A rename over a file on ext4 flushed the new file's data: 15 % of an
    # audit of boltons went to the rcfile's rewrites before and after each run.
    from pytest_quest.engine.remote_mutant import RECORD_SIZE, read_record

    rc, record = os.stat(remote.rcfile), os.stat(remote.record)
    marks = remote.arm(str(tmp_path / "dbl.py"), 1, 2)
    assert read_record(remote.record) == {
        "mode": "mutant", "file": str(tmp_path / "dbl.py"), "start": 1, "index": 2, "marks": marks,
    }  # fmt: skip
    remote.disarm()
    assert read_record(remote.record) == {"mode": "off"}
    assert os.stat(remote.rcfile).st_mtime_ns == rc.st_mtime_ns
    assert os.stat(remote.record).st_ino == record.st_ino
    assert os.stat(remote.record).st_size == RECORD_SIZE


def test_a_record_read_half_written_is_not_believed(tmp_path: Path) -> None:
    from pytest_quest.engine.remote_mutant import read_record, record_bytes

    whole = record_bytes("mutant", file="/x.py", start=1, index=0, marks="/m")
    off = record_bytes()
    path = tmp_path / "run"
    for torn in (whole[:40] + off[40:], off[:70] + whole[70:], whole[:-4000], b"", b"zz {}"):
        path.write_bytes(torn)
        assert read_record(str(path), tries=3) == {}, torn[:100]
    path.write_bytes(whole)
    assert read_record(str(path))["mode"] == "mutant"
    long = record_bytes("mutant", file="/x" * 3000 + ".py", start=1, index=0, marks="/m")
    path.write_bytes(off + long[len(off) :])  # a long record renamed in, a short one over its start
    assert read_record(str(path)) == {"mode": "off"}


def test_a_record_longer_than_its_place_is_renamed_in_and_read_whole(
    tmp_path: Path, remote: RemoteMutants
) -> None:
    # A file path of 5,000 characters does not fit RECORD_SIZE: the record is written
    # whole under a new inode (not in place), and the next short one goes in place there.
    from pytest_quest.engine.remote_mutant import RECORD_SIZE, read_record

    before = os.stat(remote.record).st_ino
    far = str(tmp_path / ("d" * 200) / ("e" * 200)) + "/" + "x" * 5000 + ".py"
    marks = remote.arm(far, 1, 0)
    assert read_record(remote.record) == {
        "mode": "mutant", "file": far, "start": 1, "index": 0, "marks": marks,
    }  # fmt: skip
    assert os.stat(remote.record).st_size > RECORD_SIZE
    assert os.stat(remote.record).st_ino != before
    long_inode = os.stat(remote.record).st_ino
    remote.disarm()
    assert read_record(remote.record) == {"mode": "off"}
    assert os.stat(remote.record).st_ino == long_inode


def test_a_module_the_start_up_hook_imported_itself_is_imported_again_with_the_mutant(
    tmp_path: Path, remote: RemoteMutants
) -> None:
    # The hook's own imports (pytest-quest's, when the project judged is pytest-quest)
    # come before the mutant is in place: dropped, the next import takes the mutant,
    # and a fresh run can have it in place from the start.
    from pytest_quest.core import words

    source = Path(words.__file__).read_text(encoding="utf-8")
    start = source.index("def counted(")
    line = source[:start].count("\n") + 1
    changed = next(m.index for m in plan_mutants(source, line) if m.operator == "return.changed")
    program = (
        "import pytest_quest.core.words as words\n"
        "from pytest_quest.engine import remote_mutant\n"
        "print(repr(words.counted(1, 'test')), repr(remote_mutant.imported_before()))\n"
    )
    assert run(tmp_path, "-c", program) == "'1 test' ''"
    marks = remote.arm(str(Path(words.__file__).resolve()), line, changed)
    # The mutant's value, and no module of its file imported without the mutant.
    assert run(tmp_path, "-c", program) == "'' ''"
    assert os.path.exists(marks)
