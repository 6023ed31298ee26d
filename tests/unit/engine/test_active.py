"""`next` rewrites the ``active`` line alone: the same file as a full write, nothing else read."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_quest.core.model import Ratchet, State
from pytest_quest.core.seal import mark_seals
from pytest_quest.engine import active, layout
from pytest_quest.engine.codec import dumps, dumps_v1, loads
from pytest_quest.engine.store import RatchetStore
from tests.unit.engine.test_layout import passed, ratchet_of, todo

A, B, C = (f"src/pkg/m.py::{name}" for name in ("a", "b", "c"))


def three(active_id: str | None = None) -> Ratchet:
    ratchet = ratchet_of(
        todo("a", ["t::x"]), todo("b", ["t::y"]), replace(todo("c", ["t::z"]), state=State.DONE)
    )
    ratchet.active = active_id
    return ratchet


@pytest.mark.parametrize(("old", "new"), [(A, B), (None, B), (A, None), (B, A)])
def test_one_line_changed_is_the_file_a_full_write_gives(old: str | None, new: str | None) -> None:
    text = dumps(three(old)).encode()
    patched = layout.with_active(text, old, new)
    assert patched == dumps(three(new)).encode()
    assert loads(patched).active == new


def test_a_file_laid_out_otherwise_is_left_to_the_full_write() -> None:
    v1 = dumps_v1(three(A)).encode()
    assert layout.with_active(v1, A, B) is None
    text = dumps(three(A)).encode()
    assert layout.with_active(text, B, A) is None  # not the active line it holds
    assert layout.with_active(b" " + text, A, B) is None
    # No active line, but "active" elsewhere: inserting one could make a second.
    hand = dumps(three(None)).replace('"schema"', '"active": null,\n"schema"').encode()
    assert loads(hand).active is None
    assert layout.with_active(hand, None, A) is None


def store_with(tmp_path: Path, ratchet: Ratchet) -> RatchetStore:
    path = tmp_path / "quest.json"
    path.write_text(dumps(ratchet))
    return RatchetStore(path)


def test_set_active_writes_the_one_line_and_journals_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = store_with(tmp_path, three(A))
    store.load()
    monkeypatch.setattr(
        RatchetStore, "update", lambda *_a, **_k: pytest.fail("the whole file was rewritten")
    )
    assert active.set_active(store, B) == A
    assert store.path.read_text() == dumps(three(B))
    assert store.writes == 1 and store.journal_lines()
    assert store.seen is not None and store.seen[1].active == B
    assert active.set_active(store, None) == B  # again from what it wrote
    assert store.path.read_text() == dumps(three(None))


def test_a_file_changed_since_the_read_is_read_again(tmp_path: Path) -> None:
    store = store_with(tmp_path, three(A))
    store.load()
    changed = three(A)
    changed.quests[B].state = State.REVIEW  # another process settled it meanwhile
    store.path.write_text(dumps(changed))
    assert active.set_active(store, B) == A
    assert loads(store.path.read_bytes()).active == A  # settled: not made active
    store.path.write_text(dumps(three(C)))  # and another made C active (hand edit)
    assert active.set_active(store, A) == C
    assert loads(store.path.read_bytes()).active == A


def test_a_settled_or_unknown_target_goes_the_ordinary_way(tmp_path: Path) -> None:
    store = store_with(tmp_path, three(A))
    store.load()
    before = store.path.read_bytes()
    assert active.set_active(store, C) == A  # DONE: never active
    assert active.set_active(store, "src/pkg/m.py::gone") == A
    assert store.path.read_bytes() == before and store.writes == 0


def test_without_a_read_it_is_the_ordinary_update(tmp_path: Path) -> None:
    store = store_with(tmp_path, three(None))
    assert store.seen is None
    assert active.set_active(store, A) is None
    expected = three(A)
    mark_seals(expected, legacy=True)  # the file's first write marks its PASS seals
    assert store.path.read_text() == dumps(expected)


def test_a_pass_keeps_its_place(tmp_path: Path) -> None:
    ratchet = ratchet_of(todo("a", ["t::x"]), passed("p", ["t::y"]))
    store = store_with(tmp_path, ratchet)
    store.load()
    assert active.set_active(store, A) is None
    ratchet.active = A
    assert store.path.read_text() == dumps(ratchet)
