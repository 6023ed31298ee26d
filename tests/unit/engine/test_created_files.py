"""engine/created_files.py: files created by judged runs, read back by a later run, are named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_quest.engine import created_files
from pytest_quest.engine.created_files import CREATED_ENV, CreatedFiles, track_created


def test_without_the_variable_nothing_is_tracked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CREATED_ENV, raising=False)
    monkeypatch.setattr(created_files, "_CREATED", [])
    assert track_created() is None


def test_a_read_of_a_file_an_earlier_run_created_is_named(tmp_path: Path) -> None:
    log = tmp_path / "created.log"
    log.write_text("")
    watch = CreatedFiles(str(log))
    golden, fresh, cache = (
        tmp_path / "golden.json",
        tmp_path / "fresh.txt",
        tmp_path / "__pycache__",
    )
    watch.hook("open", (str(golden), "w", 0))  # the measuring run creates it (no run window)
    golden.write_text("{}")
    watch.hook("open", (str(golden), "w", 0))  # written again: not created, not logged again
    watch.hook("open", (str(cache / "m.pyc"), "wb", 0))
    watch.hook("open", (str(log), "a", 0))
    assert log.read_text().splitlines() == [os.path.realpath(golden)]
    watch.begin("t::honest")
    watch.hook("open", (str(fresh), None, os.O_WRONLY | os.O_CREAT))  # written in this run...
    watch.hook("open", (str(fresh), "r", 0))  # ...then read: fine
    watch.hook("open", (str(tmp_path / "other"), "r", 0))
    watch.end()
    watch.begin("t::golden")
    watch.hook("open", (str(golden), "r", 0))
    watch.hook("open", (str(golden).encode(), "rb", 0))
    watch.hook("open", (3, "r", 0))  # a descriptor
    watch.hook("exec", (None,))
    watch.hook("open", (str(golden),))  # not the shape of an open event
    watch.end()
    watch.hook("open", (str(golden), "r", 0))  # outside a run
    assert watch.found == {
        "t::golden": f"read {os.path.realpath(golden)}, a file an earlier run of this "
        "submission created"
    }


def test_a_broken_log_breaks_no_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    watch = CreatedFiles(str(tmp_path / "missing" / "created.log"))
    watch.hook("open", (str(tmp_path / "new.txt"), "w", 0))  # cannot log: no error
    watch.begin("t::x")
    assert watch.known == set()
    monkeypatch.setenv(CREATED_ENV, str(tmp_path / "log"))
    monkeypatch.setattr(created_files, "_CREATED", [watch])
    assert track_created() is watch


def test_a_name_made_by_rename_or_link_is_created_like_an_open(tmp_path: Path) -> None:
    # A snapshot written beside and renamed into place (os.replace raises "os.rename").
    log = tmp_path / "created.log"
    log.write_text("")
    watch = CreatedFiles(str(log))
    renamed, linked, existing = tmp_path / "golden.json", tmp_path / "linked", tmp_path / "old"
    existing.write_text("x")
    watch.hook("os.rename", (str(tmp_path / "tmp123"), str(renamed), None, None))
    watch.hook("os.link", (str(tmp_path / "tmp456"), str(linked), None, None, True))
    watch.hook("os.rename", (str(tmp_path / "tmp789"), str(existing), None, None))  # not new
    assert log.read_text().splitlines() == [os.path.realpath(renamed), os.path.realpath(linked)]
    renamed.write_text("{}")
    watch.begin("t::golden")
    watch.hook("open", (str(renamed), "r", 0))
    assert "golden.json" in watch.found["t::golden"]


def test_the_opens_the_watch_makes_itself_are_not_watched(tmp_path: Path) -> None:
    log = tmp_path / "created.log"
    log.write_text("")
    watch = CreatedFiles(str(log))
    watch._busy = True  # inside the watch's own write of the log (an open of its own)
    watch.hook("open", (str(tmp_path / "new.txt"), "w", 0))
    assert log.read_text() == ""
    watch._busy = False
    watch.hook("open", (str(tmp_path / "new.txt"), "w", 0))
    assert log.read_text() == f"{tmp_path / 'new.txt'}\n"
