"""engine/guard.py's `_Protected`: the ratchet file's names and identities, which paths it
covers, the refusal (logged), and the audit hook's events, called directly (no hook installed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_quest.engine import guard, view_cache
from pytest_quest.engine.guard import _Protected
from pytest_quest.engine.store import RatchetStore


@pytest.fixture
def protected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> _Protected:
    monkeypatch.delenv(guard.REFUSED_ENV, raising=False)
    (tmp_path / "quest.json").write_text("{}")
    return _Protected(str(tmp_path / "quest.json"))


def test_names_are_the_file_its_locks_journal_and_view(
    tmp_path: Path, protected: _Protected
) -> None:
    real = Path(os.path.realpath(tmp_path / "quest.json"))
    store = RatchetStore(real)
    assert protected.target == str(tmp_path / "quest.json")
    assert protected.names == [
        str(real),
        str(store.lock_path),
        str(store.claims_path),
        os.path.realpath(store.journal_path),
        os.path.realpath(view_cache.path_for(store.journal_path)),
    ]
    assert protected.refused_log is None


def test_identities_of_the_names_that_exist(tmp_path: Path, protected: _Protected) -> None:
    st = os.stat(tmp_path / "quest.json")
    assert (st.st_dev, st.st_ino) in protected.identities()
    protected.names = [str(tmp_path / "quest.json"), str(tmp_path / "gone")]
    assert protected.identities() == {(st.st_dev, st.st_ino)}


def test_covers_by_name_and_by_identity(tmp_path: Path, protected: _Protected) -> None:
    os.link(tmp_path / "quest.json", tmp_path / "hard")
    (tmp_path / "other").write_text("x")
    assert protected.covers(str(tmp_path / "quest.json")) is True
    assert protected.covers(os.fsencode(tmp_path / "quest.json")) is True
    assert protected.covers(tmp_path / "hard") is True
    assert protected.covers(str(tmp_path / "other")) is False
    assert protected.covers(str(tmp_path / "gone")) is False


def test_covers_a_name_missing_yet(tmp_path: Path, protected: _Protected) -> None:
    lock = protected.names[1]
    assert not os.path.exists(lock)
    assert protected.covers(lock) is True


def test_covers_no_descriptor_nor_nothing(protected: _Protected) -> None:
    assert protected.covers(3) is False
    assert protected.covers(None) is False
    assert protected.covers(object()) is False
    assert protected.covers("bad\0name") is False


def test_covers_relative_to_a_folder_descriptor(tmp_path: Path, protected: _Protected) -> None:
    (tmp_path / "other").write_text("x")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert protected.covers("quest.json", fd) is True
        assert protected.covers("other", fd) is False
        assert protected.covers("gone", fd) is False
        assert protected.covers(str(tmp_path / "quest.json"), fd) is True
        assert protected.covers("quest.json", -1) is False
    finally:
        os.close(fd)


def test_refuse_without_a_log(protected: _Protected, tmp_path: Path) -> None:
    error = protected.refuse("write")
    assert isinstance(error, PermissionError)
    assert (
        str(error) == f"pytest-quest: tests under judgment cannot write {tmp_path / 'quest.json'}"
    )


def test_refuse_with_a_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "refused.log"
    log.write_text("")
    monkeypatch.setenv(guard.REFUSED_ENV, str(log))
    made = _Protected(str(tmp_path / "quest.json"))
    assert made.refused_log == str(log)
    made.refuse("change")
    made.refuse("write")
    assert log.read_text() == f"{os.getpid()} change\n{os.getpid()} write\n"


def test_refuse_with_a_log_that_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(guard.REFUSED_ENV, str(tmp_path / "missing" / "refused.log"))
    made = _Protected(str(tmp_path / "quest.json"))
    assert str(made.refuse("write")).startswith("pytest-quest: tests under judgment cannot write")


def _refused(protected: _Protected, event: str, args: tuple[object, ...]) -> str | None:
    try:
        protected.hook(event, args)
    except PermissionError as exc:
        return str(exc).split(" cannot ")[1].rsplit(" ", 1)[0]
    return None


def test_hook_refuses_opening_for_writing(tmp_path: Path, protected: _Protected) -> None:
    path = str(tmp_path / "quest.json")
    assert _refused(protected, "open", (path, "w", 0)) == "write"
    assert _refused(protected, "open", (path, "a", 0)) == "write"
    assert _refused(protected, "open", (path, "r+", 0)) == "write"
    assert _refused(protected, "open", (path, "xb", 0)) == "write"
    assert _refused(protected, "open", (path, "r", 0)) is None
    assert _refused(protected, "open", (path, None, os.O_WRONLY)) == "write"
    assert _refused(protected, "open", (path, None, os.O_RDONLY)) is None
    assert _refused(protected, "open", (path, None, None)) is None
    assert _refused(protected, "open", (str(tmp_path / "other"), "w", 0)) is None


def test_hook_refuses_renames_links_and_removal(tmp_path: Path, protected: _Protected) -> None:
    path = str(tmp_path / "quest.json")
    other = str(tmp_path / "other")
    for event in ("os.rename", "os.replace", "os.link"):
        assert _refused(protected, event, (path, other, None, None)) == "link or replace"
        assert _refused(protected, event, (other, path, None, None)) == "link or replace"
        assert _refused(protected, event, (other, other, None, None)) is None
    assert _refused(protected, "os.symlink", (path, other, None)) == "link or replace"
    assert _refused(protected, "os.symlink", (other, path, None)) == "link or replace"
    assert _refused(protected, "os.symlink", (other, other, None)) is None
    assert _refused(protected, "os.remove", (path, None)) == "change"
    assert _refused(protected, "os.remove", (other, None)) is None
    assert _refused(protected, "os.truncate", (path, 0)) == "change"
    assert _refused(protected, "os.truncate", (other, 0)) is None


def test_hook_passes_other_events(tmp_path: Path, protected: _Protected) -> None:
    path = str(tmp_path / "quest.json")
    assert _refused(protected, "os.chmod", (path, 0o644, None)) is None
    assert _refused(protected, "os.listdir", (path,)) is None


def test_hook_with_folder_descriptors(tmp_path: Path, protected: _Protected) -> None:
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert _refused(protected, "os.replace", ("x", "quest.json", fd, fd)) == "link or replace"
        assert _refused(protected, "os.rename", ("quest.json", "x", fd, -1)) == "link or replace"
        assert _refused(protected, "os.symlink", ("x", "quest.json", fd)) == "link or replace"
        assert _refused(protected, "os.remove", ("quest.json", fd)) == "change"
        assert _refused(protected, "os.remove", ("other", fd)) is None
    finally:
        os.close(fd)
