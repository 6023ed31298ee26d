"""A submit's begun mark rewrites its quest's line alone: the same file as a full write."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pytest_quest.core.environment import BEGUN_KEY
from pytest_quest.core.model import Ratchet, State
from pytest_quest.engine import active
from pytest_quest.engine.codec import dumps, dumps_v1, loads
from pytest_quest.engine.store import RatchetStore
from tests.unit.engine.test_layout import ratchet_of, todo

A, B, C = (f"src/pkg/m.py::{name}" for name in ("a", "b", "c"))
NOW = "2026-12-01T10:00:00Z"
REPO_RATCHET = Path(__file__).resolve().parents[3] / "quest.json"


def three() -> Ratchet:
    ratchet = ratchet_of(
        todo("a", ["t::x"]), todo("b", ["t::y"]), replace(todo("c", ["t::z"]), state=State.DONE)
    )
    ratchet.quests[A].extra["environment_failures"] = 1
    return ratchet


def marked(ratchet: Ratchet, qid: str) -> Ratchet:
    ratchet.quests[qid].extra[BEGUN_KEY] = NOW
    return ratchet


def test_the_patched_line_is_what_a_full_write_gives() -> None:
    for qid in (A, B, C):  # with extra, without, the last line (no comma)
        patched = active.with_quest_extra(dumps(three()).encode(), qid, BEGUN_KEY, NOW)
        assert patched == dumps(marked(three(), qid)).encode()


def test_on_this_repositorys_ratchet_file_too() -> None:
    raw = REPO_RATCHET.read_bytes()
    ratchet = loads(raw)
    for qid in sorted(ratchet.quests)[:: max(1, len(ratchet.quests) // 5)]:
        patched = active.with_quest_extra(raw, qid, BEGUN_KEY, NOW)
        assert patched is not None
        assert dumps(loads(patched)).encode() == patched
        assert loads(patched).quests[qid].extra[BEGUN_KEY] == NOW


def test_a_file_laid_out_otherwise_is_left_to_the_full_write() -> None:
    assert active.with_quest_extra(dumps_v1(three()).encode(), A, BEGUN_KEY, NOW) is None
    text = dumps(three()).encode()
    assert active.with_quest_extra(text, "src/pkg/m.py::gone", BEGUN_KEY, NOW) is None
    broken = text.replace(f'"{A}": {{'.encode(), f'"{A}": {{{{'.encode())
    assert active.with_quest_extra(broken, A, BEGUN_KEY, NOW) is None
    listed = text.replace(f'"{A}": {{'.encode(), f'"{A}": [{{'.encode(), 1)
    assert active.with_quest_extra(listed, A, BEGUN_KEY, NOW) is None


def test_through_the_store_only_when_the_file_is_what_it_read(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    path.write_text(dumps(three()))
    store = RatchetStore(path)
    assert active.set_quest_extra(store, A, BEGUN_KEY, NOW) is None  # nothing read yet
    store.load()
    written = active.set_quest_extra(store, A, BEGUN_KEY, NOW)
    assert written is not None and written.quests[A].extra[BEGUN_KEY] == NOW
    assert path.read_text() == dumps(marked(three(), A))
    assert store.writes == 1
    assert active.set_quest_extra(store, "src/pkg/m.py::gone", BEGUN_KEY, NOW) is None
    path.write_text(dumps(three()))  # another process wrote meanwhile
    assert active.set_quest_extra(store, B, BEGUN_KEY, NOW) is None
    assert path.read_text() == dumps(three())
