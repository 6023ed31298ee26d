"""Unit tests of ``pytest_quest/store.py``: round trip, locked updates, atomic writes, migrations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NoReturn

import filelock
import pytest
from filelock import FileLock

from pytest_quest.core.errors import LockTimeoutError, QuestUsageError, RatchetFileError
from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State
from pytest_quest.core.seal import mark_seals
from pytest_quest.engine import codec, layout, store
from pytest_quest.engine.codec import SCHEMA_VERSION, dumps, loads
from pytest_quest.engine.store import RatchetStore
from tests.support.quests import double_pass


def sample_ratchet() -> Ratchet:
    """A small ratchet with one quest in each interesting state."""
    todo = Quest(
        id="src/pkg/calc.py::sign",
        file="src/pkg/calc.py",
        qualname="sign",
        first=5,
        last=8,
        fingerprint="f-sign",
        tries=1,
        statements=4,
        branches=2,
        missing_lines=[6, 7],
        missing_branches=[(5, 6)],
        facts=[Fact("coverage.line", "src/pkg/calc.py:6", "executed", "never", "line 6")],
        issued_at="2026-01-01T00:00:00Z",
        history=[Event(at="2026-01-01T00:00:01Z", action="submit", verdict="FAIL")],
    )
    passed = double_pass("f-double")
    twin = Quest(
        id="src/pkg/calc.py::Box.x@2",
        file="src/pkg/calc.py",
        qualname="Box.x",
        first=12,
        last=13,
        fingerprint="f-x2",
        state=State.REVIEW,
        statements=1,
        issued_at="2026-01-01T00:00:00Z",
        last_run_seconds=1.5,
    )
    return Ratchet(
        quests={q.id: q for q in (todo, passed, twin)},
        active=todo.id,
        coverage_config={"run:branch": True},
        test_files={"tests/test_calc.py": "abc"},
        removed=[{"id": "src/pkg/old.py::gone", "state": "TODO", "at": "x", "note": "n"}],
        excluded_functions=["src/pkg/calc.py::skipped"],
        scanned_at="2026-01-01T00:00:00Z",
    )


# -- format -----------------------------------------------------------------------


def test_round_trip_is_exact() -> None:
    ratchet = sample_ratchet()
    text = dumps(ratchet)
    assert loads(text) == ratchet
    assert dumps(loads(text)) == text


def test_file_is_diff_friendly() -> None:
    text = dumps(sample_ratchet())
    data = json.loads(text)
    assert data["schema"] == SCHEMA_VERSION
    assert list(data["quests"]) == sorted(data["quests"])
    # Version 2: one field a line, then one quest a line, a final newline.
    assert '\n"schema": 2,\n' in text
    lines = text.splitlines()
    for qid in data["quests"]:
        assert sum(line.startswith(json.dumps(qid) + ": {") for line in lines) == 1
    assert text.endswith("}\n")


# -- update ------------------------------------------------------------------------


def test_update_creates_the_file_and_rereads(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    first = RatchetStore(path)
    second = RatchetStore(path)

    def add(ratchet: Ratchet) -> None:
        ratchet.quests.update(sample_ratchet().quests)

    first.update(add)
    # The second store never loaded before: update must re-read the file, not
    # start from an empty ratchet (a lost update).
    second.update(lambda r: setattr(r, "active", "src/pkg/calc.py::sign"))
    assert set(first.load().quests) == set(sample_ratchet().quests)
    assert first.load().active == "src/pkg/calc.py::sign"


def test_update_that_raises_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))
    before = path.read_bytes()
    mtime = path.stat().st_mtime_ns

    def broken(ratchet: Ratchet) -> None:
        ratchet.quests.clear()
        raise RuntimeError("abort")

    with pytest.raises(RuntimeError):
        RatchetStore(path).update(broken)
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == mtime


def test_unchanged_content_is_not_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))
    inode = path.stat().st_ino
    assert RatchetStore(path).update(lambda r: 42) == 42
    assert path.stat().st_ino == inode


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="tells a folder fd via /proc")
def test_write_is_temp_fsync_rename_fsync_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "quest.json"
    calls: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        calls.append(("fsync", "folder" if os.path.isdir(f"/proc/self/fd/{fd}") else "file"))
        real_fsync(fd)

    def replace(src: str, dst: str) -> None:
        calls.append(("replace", Path(src).name))
        assert Path(src).parent == Path(dst).parent == tmp_path
        assert Path(src).read_text() == dumps(sealed(sample_ratchet()))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    RatchetStore(path).update(lambda r: replace_with(r, sample_ratchet()))
    assert [c[0] for c in calls] == ["fsync", "replace", "fsync"]
    assert calls[0][1] == "file" and calls[2][1] == "folder"
    assert calls[1][1].startswith(".quest-tmp-quest.json-")
    # The lock out of sight, in a folder git ignores by itself.
    assert sorted(p.name for p in tmp_path.iterdir()) == [".quest", "quest.json"]
    assert sorted(p.name for p in (tmp_path / ".quest").iterdir()) == [
        ".gitignore",
        "quest.json.lock",
    ]
    assert (tmp_path / ".quest" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_failed_write_leaves_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))
    before = path.read_bytes()

    def no_space(fd: int) -> NoReturn:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(RatchetFileError, match="No space left on device; the old file"):
        RatchetStore(path).update(lambda r: setattr(r, "active", None))
    assert path.read_bytes() == before
    assert RatchetStore(path).stale_temp_files() == []


def test_stale_temp_files_are_ignored_then_cleaned(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))
    stale = tmp_path / ".quest-tmp-quest.json-dead.json"
    stale.write_text('{"half": ')
    other = tmp_path / ".quest-tmp-other.json-live.json"  # another ratchet file's writer
    other.write_text("{}")
    ratchet_store = RatchetStore(path)
    assert ratchet_store.load() == sample_ratchet()  # readers never look at them
    assert ratchet_store.stale_temp_files() == [stale]
    ratchet_store.update(lambda r: setattr(r, "active", None))
    assert not stale.exists()
    assert other.exists()


def test_write_through_symlink_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "quest.json").write_text(dumps(sample_ratchet()))
    link = tmp_path / "quest.json"
    link.symlink_to(real / "quest.json")
    RatchetStore(link).update(lambda r: setattr(r, "active", None))
    assert link.is_symlink()
    assert loads((real / "quest.json").read_text()).active is None


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "quest.json"
    with pytest.raises(RatchetFileError, match="its folder .*nowhere does not exist"):
        RatchetStore(path).update(lambda r: None)
    assert not path.parent.exists()


def test_read_only_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))
    path.chmod(0o444)
    before = path.read_bytes()
    with pytest.raises(RatchetFileError, match=r"is read-only \(make it writable"):
        RatchetStore(path).update(lambda r: setattr(r, "active", None))
    assert path.read_bytes() == before


@pytest.fixture
def immutable(tmp_path: Path) -> Any:
    """A ratchet file with the immutable attribute (`chattr +i`, root on a file system with
    attributes); cleared after the test."""
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"chattr +i is not possible here: {done.stderr.decode(errors='replace')}")
    yield path
    subprocess.run(["chattr", "-i", str(path)], check=True)


def test_an_immutable_file_is_named_so_with_the_command_that_clears_it(immutable: Path) -> None:
    before = immutable.read_bytes()
    assert immutable.stat().st_mode & 0o200  # writable by its mode: chmod is not the fix
    with pytest.raises(RatchetFileError) as caught:
        RatchetStore(immutable).update(lambda r: setattr(r, "active", None))
    assert str(caught.value) == (
        f"{immutable}: is immutable: a file attribute forbids changing it, whatever its mode "
        f"(clear it with `sudo chattr -i {immutable}` to record results)"
    )
    assert immutable.read_bytes() == before


def test_folder_as_ratchet_file(tmp_path: Path) -> None:
    (tmp_path / "quest.json").mkdir()
    ratchet_store = RatchetStore(tmp_path / "quest.json")
    with pytest.raises(RatchetFileError, match="is a folder, not a file"):
        ratchet_store.load()
    with pytest.raises(RatchetFileError, match="is a folder, not a file"):
        ratchet_store.update(lambda r: None)


# -- the lock ---------------------------------------------------------------------

HOLD_LOCK = """
import sys, time
from filelock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire()
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""


def hold_lock(lock_path: Path, seconds: float = 30) -> subprocess.Popen[str]:
    """Another live process holding the ratchet lock."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(lock_path), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "locked"
    process.stdout.close()
    return process


def test_lock_held_by_a_live_process_times_out_naming_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))
    before = path.read_bytes()
    holder = hold_lock(RatchetStore(path).lock_path)
    try:
        started = time.monotonic()
        with pytest.raises(LockTimeoutError) as info:
            RatchetStore(path, lock_timeout=0.5).update(lambda r: setattr(r, "active", None))
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert str(info.value).startswith(
        f"{tmp_path}/.quest/quest.json.lock: could not take the ratchet file's lock"
    )
    assert "within 0.5s" in str(info.value)
    assert "--quest-lock-timeout" in str(info.value)
    assert 0.5 <= waited < 3
    assert path.read_bytes() == before


def test_lock_of_a_killed_process_is_free_at_once(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))
    holder = hold_lock(RatchetStore(path).lock_path)
    holder.kill()  # SIGKILL: no cleanup runs; the kernel drops its flock
    holder.wait()
    assert (tmp_path / ".quest" / "quest.json.lock").exists()
    # Free at once, not after a wait: a lock still held would make this attempt
    # without waiting fail (no timing: a loaded machine made a 1 s bound flaky).
    probe = FileLock(str(RatchetStore(path).lock_path), timeout=0)
    probe.acquire()
    probe.release()
    RatchetStore(path, lock_timeout=2).update(lambda r: setattr(r, "active", None))
    assert RatchetStore(path).load().active is None


def test_lock_is_released_after_update_and_after_an_error(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    ratchet_store = RatchetStore(path)
    ratchet_store.update(lambda r: None)
    with pytest.raises(ValueError):
        ratchet_store.update(lambda r: (_ for _ in ()).throw(ValueError("x")))
    probe = FileLock(str(ratchet_store.lock_path), timeout=0)
    probe.acquire()
    probe.release()


# -- migrations -------------------------------------------------------------------


def v1_text() -> str:
    """The sample as version 1 writes it (whatever `SCHEMA_VERSION` is patched to)."""
    data = json.loads(dumps(sample_ratchet()))
    data["schema"] = 1
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def replace_with(target: Ratchet, source: Ratchet) -> None:
    for name, value in vars(source).items():
        setattr(target, name, value)


def test_migration_machinery_upgrades_an_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Version 1 is the first real version: pretend this pytest-quest writes
    # version 2 and registers the step from version 1.
    seen = []

    def tracked(data: dict[str, Any]) -> dict[str, Any]:
        seen.append(data["schema"])
        migrated = dict(data)
        return migrated

    monkeypatch.setattr(codec, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(codec.MIGRATIONS, 1, tracked)
    path = tmp_path / "quest.json"
    path.write_text(v1_text())
    before = path.read_bytes()
    ratchet_store = RatchetStore(path)
    assert ratchet_store.load() == sample_ratchet()
    assert seen == [1]
    assert path.read_bytes() == before  # a read never rewrites
    ratchet_store.update(lambda r: None)  # re-reads (migrating again), writes v2
    assert json.loads(path.read_text())["schema"] == 2
    assert seen == [1, 1]
    assert ratchet_store.load() == sealed(sample_ratchet())
    assert seen == [1, 1]  # a v2 file is not migrated again


def test_migration_steps_chain_and_transform(monkeypatch: pytest.MonkeyPatch) -> None:
    def one_to_two(data: dict[str, Any]) -> dict[str, Any]:
        data["quests_v2"] = data.pop("quests")
        return data

    def two_to_three(data: dict[str, Any]) -> dict[str, Any]:
        data["quests"] = data.pop("quests_v2")
        return data

    monkeypatch.setattr(codec, "SCHEMA_VERSION", 3)
    monkeypatch.setitem(codec.MIGRATIONS, 1, one_to_two)
    monkeypatch.setitem(codec.MIGRATIONS, 2, two_to_three)
    assert loads(v1_text()) == sample_ratchet()


def test_old_version_without_migration_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "SCHEMA_VERSION", 3)
    monkeypatch.setitem(codec.MIGRATIONS, 1, lambda data: data)
    with pytest.raises(RatchetFileError, match="schema: version 2 is older than"):
        loads(v1_text())


def test_failing_migration_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(codec.MIGRATIONS, 1, lambda data: data["no such field"])
    with pytest.raises(
        RatchetFileError, match="schema: migrating from version 1 to 2 failed: KeyError"
    ):
        loads(v1_text())
    monkeypatch.setitem(codec.MIGRATIONS, 1, lambda data: None)
    with pytest.raises(RatchetFileError, match="gave no JSON object"):
        loads(v1_text())


def test_version_2_registers_the_step_from_version_1() -> None:
    assert SCHEMA_VERSION == 2
    assert {1: layout.migrate_1_to_2} == codec.MIGRATIONS


# -- judging claims -------------------------------------------------------------------

CLAIM = """
import sys, time
from pathlib import Path
from pytest_quest.engine.store import RatchetStore
RatchetStore(Path(sys.argv[1])).claim(sys.argv[2])
print("claimed", flush=True)
time.sleep(30)
"""


def test_claim_refuses_a_second_judge_of_the_same_quest(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    holder = subprocess.Popen(
        [sys.executable, "-c", CLAIM, str(path), "src/pkg/calc.py::sign"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "claimed"
        holder.stdout.close()
        ratchet_store = RatchetStore(path)
        with pytest.raises(
            QuestUsageError,
            match=r"quest src/pkg/calc.py::sign is being judged by another process right now",
        ):
            ratchet_store.claim("src/pkg/calc.py::sign")
        ratchet_store.claim("src/pkg/calc.py::double")  # another quest: free
        ratchet_store.claim("src/pkg/calc.py::double")  # and this process may claim again
    finally:
        holder.kill()  # the kernel drops a killed process's claims
        holder.wait()
    RatchetStore(path).claim("src/pkg/calc.py::sign")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".quest"]
    assert (tmp_path / ".quest" / "quest.json.judging.lock").is_file()


def test_update_that_records_nothing_creates_no_file(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    assert RatchetStore(path).update(lambda r: setattr(r, "active", None)) is None
    assert not path.exists()


# -- what the operating system refuses ---------------------------------------------------


def test_lock_file_that_cannot_be_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class RefusingLock:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def acquire(self) -> NoReturn:
            raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(filelock, "FileLock", RefusingLock)
    with pytest.raises(RatchetFileError) as info:
        RatchetStore(tmp_path / "quest.json").update(lambda r: None)
    assert str(info.value) == (
        f"{tmp_path}/.quest/quest.json.lock: the lock file cannot be created: Permission denied "
        "(make the ratchet file's folder writable)"
    )


def test_temporary_file_that_cannot_be_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))
    before = path.read_bytes()

    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)  # the module store.py writes with
    with pytest.raises(RatchetFileError, match="cannot write a temporary file in .*: Read-only"):
        RatchetStore(path).update(lambda r: setattr(r, "active", None))
    assert path.read_bytes() == before


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))

    def refuse(path: str) -> NoReturn:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(store, "read_regular", refuse)
    with pytest.raises(RatchetFileError) as info:
        RatchetStore(path).load()
    assert (
        str(info.value)
        == f"{path}: cannot be read: Permission denied (make it readable with chmod u+r)"
    )


def test_claims_file_that_cannot_be_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def refuse(name: str, *args: Any, **kwargs: Any) -> int:
        if str(name).endswith(".judging.lock"):
            raise PermissionError(13, "Permission denied")
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(
        RatchetFileError, match=r"judging.lock: cannot be opened: Permission denied"
    ):
        RatchetStore(tmp_path / "quest.json").claim("src/pkg/calc.py::sign")


def test_claim_on_a_file_system_without_record_locks_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import fcntl

    def no_locks(*args: object) -> NoReturn:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "lockf", no_locks)
    RatchetStore(tmp_path / "quest.json").claim("src/pkg/calc.py::sign")  # no error, no claim


def test_restore_puts_back_earlier_bytes_under_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    ratchet_store = RatchetStore(path, lock_timeout=0.2)
    ratchet_store.update(lambda r: r.quests.update(sample_ratchet().quests))
    good = path.read_bytes()
    path.write_text("{broken")
    ratchet_store.restore(good)
    assert path.read_bytes() == good
    assert not ratchet_store.stale_temp_files()
    # Under the lock: a held lock makes it wait, then say so.
    with FileLock(str(ratchet_store.lock_path)):
        with pytest.raises(LockTimeoutError, match="could not take the ratchet file's lock"):
            ratchet_store.restore(good)
    # Never restores something that is not a valid ratchet file.
    with pytest.raises(RatchetFileError):
        ratchet_store.restore(b"{}")
    assert path.read_bytes() == good


def test_typed_extra_fields_are_stored_inside_extra() -> None:
    ratchet = sample_ratchet()
    quest = ratchet.quests["src/pkg/calc.py::double"]
    quest.issued_seal = "sha256:seal"
    quest.mutation_seconds = 0.25
    quest.verification = {"result": "verified_clean"}
    quest.extra["note"] = "kept"
    text = dumps(ratchet)
    stored = json.loads(text)["quests"]["src/pkg/calc.py::double"]
    assert stored["extra"] == {
        "issued_seal": "sha256:seal",
        "mutation_seconds": 0.25,
        "note": "kept",
        "verification": {"result": "verified_clean"},
    }
    again = loads(text).quests["src/pkg/calc.py::double"]
    assert again.issued_seal == "sha256:seal"
    assert again.mutation_seconds == 0.25
    assert again.last_run_seconds is None
    assert again.verification == {"result": "verified_clean"}
    assert again.extra == {"note": "kept"}
    assert dumps(loads(text)) == text


def test_a_typed_extra_field_of_another_type_is_kept_as_found() -> None:
    data = json.loads(dumps(sample_ratchet()))
    data["quests"]["src/pkg/calc.py::sign"]["extra"] = {
        "issued_seal": 5,
        "last_run_seconds": True,
        "mutation_seconds": "slow",
        "verification": [],
    }
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    quest = loads(text).quests["src/pkg/calc.py::sign"]
    assert quest.issued_seal is None and quest.last_run_seconds is None
    assert quest.extra == data["quests"]["src/pkg/calc.py::sign"]["extra"]
    again = dumps(loads(text))
    assert loads(again).quests["src/pkg/calc.py::sign"].extra == quest.extra
    assert dumps(loads(again)) == again


def test_update_validates_before_taking_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock is held for the change and the write: the same bytes are not validated twice."""
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))
    events: list[str] = []
    take = RatchetStore._acquire_lock

    def loads(*args: Any) -> Ratchet:
        events.append("loads")
        return codec.loads(*args)

    def acquire_lock(self: RatchetStore) -> Any:
        events.append("lock")
        return take(self)

    monkeypatch.setattr(store, "loads", loads)
    monkeypatch.setattr(RatchetStore, "_acquire_lock", acquire_lock)
    RatchetStore(path).update(lambda r: setattr(r, "active", None))
    assert events == ["loads", "lock"]
    assert loads(path.read_bytes()).active is None


def test_update_reads_again_when_the_file_changed_before_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "quest.json"
    path.write_text(dumps(sample_ratchet()))
    take = RatchetStore._acquire_lock

    def late(self: RatchetStore) -> FileLock:
        other = sample_ratchet()
        other.scanned_at = "2026-02-02T00:00:00Z"  # another writer, between the read and the lock
        path.write_text(dumps(other))
        return take(self)

    monkeypatch.setattr(RatchetStore, "_acquire_lock", late)
    seen: list[str] = []
    RatchetStore(path).update(lambda r: seen.append(r.scanned_at))
    assert seen == ["2026-02-02T00:00:00Z"]


def sealed(ratchet: Ratchet) -> Ratchet:
    """`ratchet` as its first write stores it: PASS seals marked (core/seal.py `mark_seals`)."""
    mark_seals(ratchet, legacy=True)
    return ratchet
