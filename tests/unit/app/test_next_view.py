"""`next` from the view kept beside the ratchet file: one file's quests read, the same answer.

With a view kept for the file's bytes (engine/view_cache.py), `next` reads the
quests of the file of the quest it shows, and takes the counts, the queue and
the tests the scan recorded from the view.  Each case runs in two copies of one
project: one with the view, one without (the whole file read); both must say
the same, and write the same file.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.app import next as next_module
from pytest_quest.app.next import next_quest
from pytest_quest.app.status import status
from pytest_quest.core.errors import QuestUsageError, RatchetFileError
from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State
from pytest_quest.engine import view_cache
from pytest_quest.report.json import Output
from tests.support.contexts import app_context

A, B, C = "src/pkg/a.py", "src/pkg/b.py", "src/pkg/c.py"
ODD = "src/pkg/a.py::b.py"  # a file whose name begins as another file's quest ids do


def quest(file: str, qualname: str, first: int, state: State = State.TODO, **changes: Any) -> Quest:
    values: dict[str, Any] = {
        "id": f"{file}::{qualname}",
        "file": file,
        "qualname": qualname,
        "first": first,
        "last": first + 3,
        "fingerprint": f"sha256:{first:032d}",
        "state": state,
        "statements": 3,
        "issued_at": "2026-01-01T00:00:00Z",
    }
    if state is State.PASS:
        values.update(passed_at="2026-01-02T00:00:00Z", baseline=True)
        values["covering_tests"] = [f"tests/test_{qualname}.py::test_{qualname}"]
    else:
        values.update(missing_lines=[first + 1], missing_branches=[(first, first + 1)])
        values["covering_tests"] = [f"tests/test_{qualname}.py::test_near"]
    if state in (State.REVIEW, State.DONE):
        values["facts"] = [Fact("identity.changed", f"{file}:{first}", "a", "b")]
        values["history"] = [Event(at="2026-01-02T00:00:00Z", action="submit", verdict=state.value)]
    values.update(changes)
    return Quest(**values)


QUESTS = [
    quest(A, "f", 10),
    quest(A, "g", 20, State.PASS),
    quest(A, "h", 30, State.REVIEW),
    quest(ODD, "k", 5),
    quest(B, "m", 40),
    quest(B, "m", 50, id=f"{B}::m@2", fingerprint="sha256:" + "9" * 32),
    quest(B, "n", 60, State.DONE, tries=3),
    quest(C, "p", 70, State.PASS),
]


def build(root: Path, active: str | None) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tests" / "test_g.py").write_text(
        "from pkg.a import g\n\n\ndef test_g():\n    assert g() is None\n"
    )

    def fill(ratchet: Ratchet) -> None:
        ratchet.quests = {q.id: q for q in QUESTS}
        ratchet.active = active
        ratchet.scanned_at = "2026-01-01T00:00:00Z"
        ratchet.test_files = {"tests/test_g.py": "sha256:" + "0" * 64}  # changed since the scan

    app_context(root, "next").store.update(fill)  # the write keeps the view


def twins(tmp_path: Path, active: str | None) -> tuple[Path, Path]:
    """One project with its view kept, and a copy of it whose view is not (another path)."""
    kept, whole = tmp_path / "kept", tmp_path / "whole"
    kept.mkdir()
    build(kept, active)
    shutil.copytree(kept, whole)
    return kept, whole


def outcome(command: Callable[[], Output]) -> tuple[str, Any]:
    try:
        output = command()
    except (QuestUsageError, RatchetFileError) as exc:
        return ("error", str(exc))
    return ("output", (output.lines, output.data))


def run_next(root: Path, monkeypatch: pytest.MonkeyPatch, *, view: bool, **options: Any) -> Any:
    with monkeypatch.context() as patch:
        if view:

            def refused(*args: Any, **kwargs: Any) -> Ratchet:
                raise AssertionError("the whole ratchet file was decoded")

            patch.setattr(next_module, "load_ratchet", refused)
        else:
            patch.setattr(view_cache, "load_next", lambda *args: None)
            patch.setattr(view_cache, "save", lambda *args: None)
        return outcome(lambda: next_quest(app_context(root, "next", format="text", **options)))


@pytest.mark.parametrize(
    ("active", "quest_id"),
    [
        (None, None),  # the first TODO
        (f"{B}::m@2", None),  # the active quest, in another file, a twin
        (f"{A}::f", None),
        (None, f"{ODD}::k"),  # --quest-id, in the file whose name starts like a.py's ids
        (None, f"{B}::m"),
        (f"{A}::f", f"{B}::m@2"),
    ],
)
def test_next_from_the_view_says_and_writes_what_the_whole_read_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, active: str | None, quest_id: str | None
) -> None:
    kept, whole = twins(tmp_path, active)
    from_view = run_next(kept, monkeypatch, view=True, quest_id=quest_id)
    from_whole = run_next(whole, monkeypatch, view=False, quest_id=quest_id)
    assert from_view[0] == "output"
    assert from_view == from_whole
    assert (kept / "quest.json").read_bytes() == (whole / "quest.json").read_bytes()


@pytest.mark.parametrize("quest_id", [f"{A}::g", f"{B}::n", f"{A}::nowhere", f"{C}::p"])
def test_a_quest_that_cannot_be_worked_on_is_refused_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quest_id: str
) -> None:
    kept, whole = twins(tmp_path, None)
    with monkeypatch.context() as patch:
        patch.setattr(view_cache, "save", lambda *args: None)
        from_view = outcome(
            lambda: next_quest(app_context(kept, "next", format="text", quest_id=quest_id))
        )
    from_whole = run_next(whole, monkeypatch, view=False, quest_id=quest_id)
    assert from_view[0] == "error"
    assert from_view == from_whole


@pytest.mark.parametrize("kept_by", ["a write", "a status that read the file"])
def test_the_example_comes_from_a_test_the_scan_recorded_in_another_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept_by: str
) -> None:
    # tests/test_g.py changed since the scan: its test counts as seen only because a
    # quest of another file recorded it (g's PASS is a baseline: recorded).
    kept, whole = twins(tmp_path, None)
    if kept_by != "a write":
        context = app_context(kept, "status", format="text")
        view_cache.path_for(context.store.journal_path).unlink()
        status(context)  # reads the file whole, keeps a view without the recorded tests
        saved = view_cache.load_next(
            context.store.journal_path, (kept / "quest.json").read_bytes(), str(None)
        )
        assert saved is not None and saved[1].recorded is None
    from_view = run_next(kept, monkeypatch, view=True)
    assert from_view == run_next(whole, monkeypatch, view=False)
    lines, data = from_view[1]
    assert data["quest"]["id"] == f"{A}::f"
    assert data["quest"]["example"]["test"] == "tests/test_g.py::test_g"


def test_a_hand_edit_elsewhere_in_the_file_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept, whole = twins(tmp_path, None)
    for root in (kept, whole):
        path = root / "quest.json"
        path.write_bytes(path.read_bytes().replace(b'"tries": 3', b'"tries": -3', 1))
    with monkeypatch.context() as patch:
        patch.setattr(view_cache, "save", lambda *args: None)
        from_view = outcome(lambda: next_quest(app_context(kept, "next", format="text")))
    assert from_view[0] == "error" and "tries" in from_view[1]
    from_whole = run_next(whole, monkeypatch, view=False)
    assert from_view[1].replace(str(kept), "ROOT") == from_whole[1].replace(str(whole), "ROOT")


def test_one_file_holds_that_files_quests_and_reads_as_the_whole() -> None:
    from pytest_quest.engine import codec

    ratchet = Ratchet(quests={q.id: q for q in QUESTS}, active=f"{A}::f")
    data = codec.dump_bytes(ratchet)
    start = view_cache.quests_start(data)
    for target, file in ((f"{A}::f", A), (f"{B}::m@2", B), (f"{ODD}::k", ODD), (f"{C}::p", C)):
        part = view_cache.one_file(data, target, start)
        assert part is not None
        read = codec.view(part[0], "quest.json", table=part[1])
        assert read is not None and read.active is None
        expected = {q.id for q in QUESTS if q.id.startswith(file + "::")}
        assert set(read.quests) == expected
        whole = codec.loads(data)
        for qid in expected:
            assert read.quests[qid].covering_tests == whole.quests[qid].covering_tests
            assert read.quests[qid].facts == whole.quests[qid].facts
    assert view_cache.one_file(data, f"{A}::nowhere", start) is None


def test_the_queue_and_recorded_tests_are_the_same_from_a_lazy_read_and_a_whole_one() -> None:
    from pytest_quest.engine import codec

    data = codec.dump_bytes(Ratchet(quests={q.id: q for q in QUESTS}))
    lazy, whole = codec.view(data, "quest.json"), codec.loads(data)
    assert lazy is not None
    from_raw = view_cache.next_view(lazy, data, recorded=True)
    from_names = view_cache.next_view(whole, data, recorded=True)
    assert from_raw is not None and from_raw == from_names
    assert from_raw.recorded is not None
    table = whole.test_table
    # g is a baseline PASS (recorded); c.py's p too; every TODO, REVIEW and DONE quest's tests.
    assert {table[i] for i in from_raw.recorded} == {
        name for q in QUESTS for name in q.covering_tests
    }
    assert from_raw.queue == [f"{A}::f", f"{ODD}::k", f"{B}::m", f"{B}::m@2"]
