"""`status` from the view kept beside the ratchet file: the same text, and never a stale one.

Every write through the store keeps the view of what it wrote
(engine/view_cache.py); a `status` of the same bytes draws it without decoding
a quest.  The attacks: the file edited by hand (a state, a field made invalid,
the ``active`` line), a view file damaged or written for other bytes, another
rootdir or other code.  Each must give what a status without any view gives.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_calc import DOUBLE, SIGN, CalcProject, settled

from pytest_quest.app import status as status_module
from pytest_quest.app.context import Context
from pytest_quest.app.status import status
from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import Ratchet
from pytest_quest.engine import view_cache
from pytest_quest.engine.active import set_active
from pytest_quest.engine.store import RatchetStore
from pytest_quest.report.json import Output


def text_status(project: CalcProject) -> Output:
    return status(project.context("status", format="text"))


def without_view(project: CalcProject, monkeypatch: pytest.MonkeyPatch) -> Output:
    """What `status` says when no view is kept (the file read and validated whole)."""
    with monkeypatch.context() as patch:
        patch.setattr(view_cache, "load", lambda *args: None)
        patch.setattr(view_cache, "save", lambda *args: None)
        return text_status(project)


def reads_no_quest(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: Any, **kwargs: Any) -> Ratchet:
        raise AssertionError("the ratchet file was decoded")

    monkeypatch.setattr(status_module, "load_ratchet", refused)


def view_file(context: Context) -> Path:
    return view_cache.path_for(context.store.journal_path)


@pytest.fixture
def project(tmp_path: Path) -> CalcProject:
    made = CalcProject(tmp_path)
    settled(made, expected="a\x1b[2J")
    return made


def test_a_status_after_a_write_draws_the_kept_view(
    project: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = without_view(project, monkeypatch)
    assert f"  {SIGN}  (src/pkg/calc.py:5-8, tries 0/3)" in whole.lines
    reads_no_quest(monkeypatch)
    kept = text_status(project)
    assert kept.lines == whole.lines
    assert kept.data == whole.data
    assert any("\\x1b[2J" in line for line in kept.lines)  # escaped, as the whole read shows it


def test_a_status_keeps_the_view_it_drew_when_none_was_kept(
    project: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    view_file(project.context("status")).unlink()
    first = text_status(project)
    reads_no_quest(monkeypatch)
    assert text_status(project).lines == first.lines


def test_next_moving_the_active_quest_keeps_the_view(
    project: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = project.context("status").store
    store.load(lazy=True)
    set_active(store, DOUBLE)  # not allowed: PASS is settled (nothing written)
    set_active(store, None)
    assert Path(project.root / "quest.json").read_bytes().startswith(b'{\n"coverage_config"')
    store.load(lazy=True)
    set_active(store, "src/pkg/calc.py::spare")
    assert Path(project.root / "quest.json").read_bytes().startswith(b'{\n"active": ')
    whole = without_view(project, monkeypatch)
    reads_no_quest(monkeypatch)
    kept = text_status(project)
    assert kept.lines == whole.lines
    assert kept.data["active"] == "src/pkg/calc.py::spare"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A REVIEW quest turned into TODO by hand: shown as TODO.
        (b'"state":"REVIEW"', b'"state":"TODO"'),
        # A DONE quest's tries changed by hand.
        (b'"state":"DONE","statements":', b'"state":"DONE","tries":0,"statements":'),
    ],
)
def test_a_file_edited_by_hand_is_read_again(
    project: CalcProject, monkeypatch: pytest.MonkeyPatch, old: bytes, new: bytes
) -> None:
    quest_file = project.root / "quest.json"
    data = quest_file.read_bytes()
    compact = data.replace(b'": ', b'":').replace(b", ", b",")
    assert old in compact, "the attack's text is not in the file"
    text_status(project)  # the view of the file as written
    edited = _edit(data, old, new)
    quest_file.write_bytes(edited)
    assert text_status(project).lines == without_view(project, monkeypatch).lines


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        (b'"tries":1', b'"tries":-1', "tries"),
        (b'"state":"DONE"', b'"state":"WON"', "state"),
        (b'"statements":', b'"statements":"x","s":', "statements"),
    ],
)
def test_a_file_broken_by_hand_is_an_error_naming_the_field(
    project: CalcProject, old: bytes, new: bytes, named: str
) -> None:
    quest_file = project.root / "quest.json"
    text_status(project)
    quest_file.write_bytes(_edit(quest_file.read_bytes(), old, new))
    with pytest.raises(RatchetFileError, match=named):
        text_status(project)


@pytest.mark.parametrize(
    "line",
    [
        b'"active": "src/pkg/calc.py::nowhere",\n',  # names no quest
        b'"active": "src/pkg/calc.py::spare", "schema": 1,\n',  # a field hidden on its line
        b'"active": 3,\n',
        b'"active":  "src/pkg/calc.py::spare",\n',  # not as the writer writes it
    ],
)
def test_an_active_line_edited_by_hand_is_judged_as_without_a_view(
    project: CalcProject, monkeypatch: pytest.MonkeyPatch, line: bytes
) -> None:
    quest_file = project.root / "quest.json"
    data = quest_file.read_bytes()
    assert data.startswith(b'{\n"active": "src/pkg/calc.py::spare",\n')
    text_status(project)
    quest_file.write_bytes(b"{\n" + line + data[data.index(b"\n", 2) + 1 :])
    assert outcome(lambda: text_status(project)) == outcome(
        lambda: without_view(project, monkeypatch)
    )


def outcome(command: Callable[[], Output]) -> tuple[str, Any]:
    """What `command` said: its lines and data, or its error's message."""
    try:
        output = command()
    except RatchetFileError as exc:
        return ("error", str(exc))
    return ("output", (output.lines, output.data))


@pytest.mark.parametrize("damage", [b"", b"\x00garbage", b"\x85\xa6format\x01"])
def test_a_damaged_view_is_not_used(
    project: CalcProject, monkeypatch: pytest.MonkeyPatch, damage: bytes
) -> None:
    text_status(project)
    view_file(project.context("status")).write_bytes(damage)
    assert text_status(project).lines == without_view(project, monkeypatch).lines


def test_a_view_of_other_bytes_another_root_or_other_code_is_not_used(
    project: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = project.context("status")
    data = (project.root / "quest.json").read_bytes()
    journal, root = context.store.journal_path, str(context.store.root)
    text_status(project)
    assert view_cache.load(journal, data, root) is not None
    assert view_cache.load(journal, data + b" ", root) is None
    assert view_cache.load(journal, data, "/elsewhere") is None
    monkeypatch.setattr(view_cache, "_code_stamp", lambda: "other code")
    assert view_cache.load(journal, data, root) is None


def test_a_view_that_cannot_be_kept_costs_the_write_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RatchetStore(tmp_path / "quest.json")

    def broken(ratchet: Ratchet, data: bytes) -> None:
        raise OSError("disk full")

    store.after_write = broken
    store.update(lambda ratchet: setattr(ratchet, "scanned_at", "2026-01-01T00:00:00Z"))
    assert store.load().scanned_at == "2026-01-01T00:00:00Z"


def test_the_digest_leaves_out_only_a_well_placed_active_line() -> None:
    body = b'"schema": 2,\n"tests": [],\n"quests": {}\n}\n'
    plain = b"{\n" + body
    with_active = b'{\n"active": "a.py::f",\n' + body
    assert view_cache.digest(plain) == view_cache.digest(with_active)
    assert view_cache.digest(plain) != view_cache.digest(b'{\n"active": "a.py::f",' + body)
    assert view_cache.digest(b'{\n"activ": "x",\n' + body) != view_cache.digest(plain)


def test_status_with_since_or_json_reads_the_file(
    project: CalcProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    text_status(project)
    reads_no_quest(monkeypatch)
    with pytest.raises(AssertionError, match="decoded"):
        status(project.context("status"))  # JSON lists every quest: read whole


def _edit(data: bytes, old: bytes, new: bytes) -> bytes:
    """`data` with the first `old` (compact JSON) replaced by `new`, in the file's own spelling."""
    spaced_old = old.replace(b'":', b'": ').replace(b",", b", ")
    spaced_new = new.replace(b'":', b'": ').replace(b",", b", ")
    for before, after in ((old, new), (spaced_old, spaced_new)):
        if before in data:
            return data.replace(before, after, 1)
    raise AssertionError(f"{old!r} is not in the file")


def test_a_new_view_removes_the_views_nobody_wrote_for_a_week(project: CalcProject) -> None:
    folder = view_file(project.context("status")).parent
    old, recent = folder / "0-old-test.view", folder / "0-recent-test.view"
    for made in (old, recent):
        made.write_bytes(b"x")
    week = view_cache.MAX_AGE + 60
    os.utime(old, (old.stat().st_atime - week, old.stat().st_mtime - week))
    view_file(project.context("status")).unlink()
    text_status(project)  # keeps a new view
    assert not old.exists() and recent.exists()
    recent.unlink()
