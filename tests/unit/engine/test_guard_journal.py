"""The ratchet file's journal: the chain a guard checks (core/journal.py) and the store's writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_quest.core.journal import (
    ABSENT,
    Entry,
    Now,
    Snapshot,
    chain_breaks,
    content_hash,
    parse,
    since,
    trimmed,
    unaccounted,
)
from pytest_quest.core.model import Quest, Ratchet, State
from pytest_quest.engine import store as store_module
from pytest_quest.engine import witness
from pytest_quest.engine.guard import VerdictGuard, changed_entries, undo
from pytest_quest.engine.store import RatchetStore


def entry(read: str, wrote: str, inode: int = 7) -> Entry:
    return Entry(read, wrote, inode, 123, 1.0)


def lines(*entries: Entry) -> list[str]:
    return [e.line() for e in entries]


# -- pure chain -------------------------------------------------------------------------


def test_an_entry_round_trips_and_junk_is_not_an_entry() -> None:
    e = entry("a", "b")
    assert parse(e.line()) == e
    for junk in ("", "{", "[]", '{"read": 1}', json.dumps({**json.loads(e.line()), "inode": "7"})):
        assert parse(junk) is None


def test_the_chain_must_lead_from_the_snapshot_to_the_file() -> None:
    assert chain_breaks("a", [], "a") == []
    assert chain_breaks("a", [entry("a", "b"), entry("b", "c")], "c") == []
    assert len(chain_breaks("a", [], "b")) == 1  # a write nobody journaled
    assert len(chain_breaks("a", [entry("a", "b")], "c")) == 1  # written after the last entry
    assert len(chain_breaks("a", [entry("x", "b")], "b")) == 1  # written before the entry
    assert len(chain_breaks("a", [entry("a", "b"), entry("c", "d")], "d")) == 1  # in between


def test_since_takes_the_lines_after_the_mark_or_none_when_it_is_gone() -> None:
    journal = lines(entry("a", "b"), entry("b", "c"), entry("c", "d"))
    assert since(journal, None) == journal
    assert since(journal, journal[0]) == journal[1:]
    assert since(journal, journal[-1]) == []
    assert since(journal[1:], journal[0]) is None


def test_trimmed_keeps_the_tail() -> None:
    assert trimmed(["1", "2", "3"], 2) == ["2", "3"]
    assert trimmed(["1"], 0) == []


def snap(hash_: str = "a", inode: int = 7, links: int = 1) -> Snapshot:
    return Snapshot(hash_, inode, links, None)


def test_an_accounted_file() -> None:
    assert unaccounted(snap(), Now("a", 7, 1, True), []) == []
    assert (
        unaccounted(snap(), Now("c", 9, 1, True), lines(entry("a", "b", 8), entry("b", "c", 9)))
        == []
    )


def test_every_unaccounted_change_is_named() -> None:
    assert unaccounted(snap(), Now("b", 7, 1, True), [])  # written in place, no entry
    assert unaccounted(snap(), Now("a", 8, 1, True), [])  # same bytes, replaced
    assert unaccounted(snap(), Now("a", 7, 2, True), [])  # a hard link appeared
    assert unaccounted(snap(), Now(ABSENT, None, 0, False), [])  # deleted
    assert unaccounted(snap(), Now("a", 7, 1, True), None)  # the journal was rewritten
    assert unaccounted(snap(), Now("a", 7, 1, True), ["forged line\n"])
    # A link the person had before the run is not the run's doing.
    assert unaccounted(snap(links=2), Now("a", 7, 2, True), []) == []
    # A chain that ends at the right content but on another inode: a write
    # after the last entry that kept the bytes (hard link, copy over).
    assert unaccounted(snap(), Now("b", 9, 1, True), lines(entry("a", "b", 8)))


def test_content_hash() -> None:
    assert content_hash(None) == ABSENT
    assert content_hash(b"x") != content_hash(b"y")


# -- the store journals its writes ---------------------------------------------------------


def quest(qid: str, state: State = State.TODO) -> Quest:
    return Quest(
        id=qid,
        file="src/m.py",
        qualname=qid.split("::")[1],
        first=1,
        last=2,
        fingerprint="sha256:x",
        issued_at="2026-01-01T00:00:00Z",
        state=state,
    )


def store_with(tmp_path: Path, *ids: str) -> RatchetStore:
    store = RatchetStore(tmp_path / "quest.json")
    store.update(lambda r: r.quests.update({qid: quest(qid) for qid in ids}))
    return store


def test_every_write_is_journaled_and_chains(tmp_path: Path) -> None:
    store = store_with(tmp_path, "src/m.py::a")
    store.update(lambda r: setattr(r, "active", "src/m.py::a"))
    journal = [parse(line) for line in store.journal_lines()]
    first, last = journal[0], journal[-1]
    assert first is not None and last is not None
    assert [e.read for e in journal if e] == [ABSENT, first.wrote]
    assert last.wrote == content_hash(store.path.read_bytes())
    assert last.inode == os.stat(store.path).st_ino
    assert last.pid == os.getpid()


def test_the_journal_stays_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "JOURNAL_MAX_BYTES", 2000)
    monkeypatch.setattr(store_module, "JOURNAL_KEEP", 3)
    store = store_with(tmp_path, "src/m.py::a")
    for n in range(30):

        def stamp(ratchet: Ratchet, n: int = n) -> None:
            ratchet.scanned_at = str(n)

        store.update(stamp)
    assert store.journal_path.stat().st_size <= 2000 + 300
    assert len(store.journal_lines()) <= 12


# -- the guard ----------------------------------------------------------------------------


def forge(store: RatchetStore, qid: str) -> None:
    """What a judged test does: a PASS written in place, no journal line."""
    data = json.loads(store.path.read_text())
    tests = data.setdefault("tests", [])  # version 2: covering tests by index
    tests.append("forged")
    data["quests"][qid].update(
        state="PASS",
        passed_at="2026-01-02T00:00:00Z",
        covering_tests=[len(tests) - 1],
        missing_lines=[],
        missing_branches=[],
    )
    with open(store.path, "r+") as handle:
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(data))


def test_a_legit_write_in_the_window_is_accepted(tmp_path: Path) -> None:
    store = store_with(tmp_path, "src/m.py::a", "src/m.py::b")
    guard = VerdictGuard(store.path, "src/m.py::a", store)
    store.update(lambda r: setattr(r.quests["src/m.py::b"], "state", State.REVIEW))
    assert guard.inspect() == []


def test_a_forged_entry_of_another_quest_is_named_and_undone(tmp_path: Path) -> None:
    store = store_with(tmp_path, "src/m.py::a", "src/m.py::b")
    guard = VerdictGuard(store.path, "src/m.py::a", store)
    forge(store, "src/m.py::b")
    facts = guard.inspect()
    assert [f.check for f in facts] == ["guard.ratchet_written"]
    assert "src/m.py::b" in facts[0].actual
    store.update(guard.repair, vet=guard.vet)
    assert store.load().quests["src/m.py::b"].state is State.TODO


def test_a_forged_journal_line_does_not_vouch_for_a_forgery_it_does_not_chain(
    tmp_path: Path,
) -> None:
    store = store_with(tmp_path, "src/m.py::a", "src/m.py::b")
    guard = VerdictGuard(store.path, "src/m.py::a", store)
    with open(store.journal_path, "a") as handle:
        handle.write(entry("junk", "junk").line())
    forge(store, "src/m.py::b")
    assert [f.check for f in guard.inspect()] == ["guard.ratchet_written"]


def test_a_truncated_journal_is_a_tamper_sign(tmp_path: Path) -> None:
    store = store_with(tmp_path, "src/m.py::a")
    guard = VerdictGuard(store.path, "src/m.py::a", store)
    store.journal_path.write_text("")
    assert "the journal was cut or rewritten" in guard.inspect()[0].actual


def test_a_hard_link_is_a_tamper_sign(tmp_path: Path) -> None:
    store = store_with(tmp_path, "src/m.py::a")
    guard = VerdictGuard(store.path, "src/m.py::a", store)
    os.link(store.path, tmp_path / "other.json")
    assert "hard links" in guard.inspect()[0].actual


def test_undo_keeps_added_todo_quests_and_drops_added_verdicts() -> None:
    before = Ratchet(quests={"a": quest("src/m.py::a")}, test_files={"t.py": "x"})
    fresh = Ratchet(
        quests={
            "a": quest("src/m.py::a", State.PASS),
            "new": quest("src/m.py::new"),
            "forged": quest("src/m.py::forged", State.PASS),
        },
        test_files={"t.py": "y"},
        active="forged",
    )
    assert changed_entries(before, fresh) == ["a", "forged", "new", "test_files"]
    undo(before, fresh)
    assert sorted(fresh.quests) == ["a", "new"]
    assert fresh.quests["a"].state is State.TODO
    assert fresh.test_files == {"t.py": "x"}
    assert fresh.active is None


# -- the witness: who wrote a journal line --------------------------------------------------


def test_a_line_must_be_vouched_for_when_a_witness_listens() -> None:
    chain = lines(entry("a", "b", 8))
    assert unaccounted(snap(), Now("b", 8, 1, True), chain, vouched=set(chain)) == []
    assert unaccounted(snap(), Now("b", 8, 1, True), chain, vouched=set())


@pytest.mark.skipif(not witness.available(), reason="Linux only")
def test_a_write_by_a_process_the_judge_started_is_not_vouched_for(tmp_path: Path) -> None:
    import subprocess
    import sys

    store = store_with(tmp_path, "src/m.py::a", "src/m.py::b")
    guard = VerdictGuard(store.path, "src/m.py::a", store)
    try:
        # The judge's child writes through pytest-quest's own store: journaled,
        # chained, announced, but by a descendant of the judge.
        script = (
            "import sys; from pytest_quest.engine.store import RatchetStore;"
            "from pytest_quest.core.model import State;"
            "RatchetStore(sys.argv[1]).update("
            "lambda r: setattr(r.quests['src/m.py::b'], 'state', State.REVIEW))"
        )
        subprocess.run([sys.executable, "-c", script, str(store.path)], check=True)
        facts = guard.inspect()
        assert [f.check for f in facts] == ["guard.ratchet_written"]
        assert "not announced by a pytest-quest process outside" in facts[0].actual
        assert "src/m.py::b" in facts[0].actual
    finally:
        guard.close()


@pytest.mark.skipif(not witness.available(), reason="Linux only")
def test_ancestry() -> None:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        assert witness.descends_from(child.pid, os.getpid())
        assert not witness.descends_from(os.getpid(), child.pid)
        assert not witness.descends_from(os.getpid(), os.getpid())
    finally:
        child.kill()
        child.wait()


def test_a_forgery_is_undone_even_when_no_verdict_is_recorded(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from pytest_quest.app.submit import undo_forgery

    store = store_with(tmp_path, "src/m.py::a", "src/m.py::b")
    guard = VerdictGuard(store.path, "src/m.py::a", store)
    try:
        forge(store, "src/m.py::b")
        undo_forgery(SimpleNamespace(store=store), guard)  # type: ignore[arg-type]
        assert store.load().quests["src/m.py::b"].state is State.TODO
        before = store.path.read_bytes()
        undo_forgery(SimpleNamespace(store=store), guard)  # type: ignore[arg-type]  # nothing more to undo: no write
        assert store.path.read_bytes() == before
    finally:
        guard.close()


@pytest.mark.skipif(not witness.available(), reason="Linux only")
def test_closing_the_witness_does_not_wait_for_its_listener_to_time_out(tmp_path: Path) -> None:
    import time

    listening = witness.Witness(tmp_path / "quest.json")
    time.sleep(0.02)  # its listener is in accept(), which times out every 0.2 s
    began = time.monotonic()
    listening.close()
    assert time.monotonic() - began < 0.12
    assert not listening._thread.is_alive()
