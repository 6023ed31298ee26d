"""app/next.py's parts: quests issued for code that changed since, the lines saying so, and
the answer when nothing remains."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_quest.app.next import Issued, _changed_line, _nothing_left
from pytest_quest.core.model import Quest, State
from pytest_quest.engine.source import read_source, source_functions

REOPEN = 'pytest --quest-reopen ID --quest-reason "..."'


def test_changed_line_of_the_quest_shown() -> None:
    assert _changed_line(["src/m.py::f", "src/m.py::g"], shown=True) == (
        "note: src/m.py::f was issued for code that changed since: any submit of it is "
        f"REVIEW (identity.changed) until a person re-issues it ({REOPEN})"
    )


def test_changed_line_of_quests_passed_over() -> None:
    assert _changed_line(["src/m.py::f", "src/m.py::g"], shown=False) == (
        "passed over 2 quests issued for code that changed since "
        "(any submit of one is REVIEW, identity.changed); a person re-issues each "
        f"({REOPEN}): src/m.py::f, src/m.py::g"
    )
    assert _changed_line(["src/m.py::f"], shown=False).startswith("passed over 1 quest issued")


HEAD = ["head line"]


def test_nothing_left_when_quests_wait_for_a_person_after_a_change() -> None:
    data = {"changed_since_issue": ["src/m.py::f"]}
    out = _nothing_left(data, HEAD, {"REVIEW": 2})
    assert out.data is data
    assert out.lines == [
        "head line",
        "nothing remains for an agent: what is left waits for a person",
    ]
    assert out.exitcode == 0


def test_nothing_left_with_review_and_done_quests() -> None:
    out = _nothing_left({"changed_since_issue": []}, HEAD, {"REVIEW": 2, "DONE": 1, "PASS": 5})
    assert out.lines == [
        "head line",
        "nothing remains: every quest is settled; 2 REVIEW and 1 DONE wait for a person "
        "(`pytest --quest-status` lists them): nothing for an agent to do",
    ]
    out = _nothing_left({"changed_since_issue": []}, HEAD, {"DONE": 3, "REVIEW": 0})
    assert out.lines[-1].startswith("nothing remains: every quest is settled; 3 DONE wait")


def test_nothing_left_when_every_quest_is_settled() -> None:
    out = _nothing_left({"changed_since_issue": []}, HEAD, {"PASS": 5})
    assert out.lines == ["head line", "nothing remains: every quest is settled"]


SOURCE = "def f(a):\n    return a + 1\n\n\ndef g(b):\n    return b\n"


def _quest(name: str, fingerprint: str, state: State = State.TODO, file: str = "m.py") -> Quest:
    return Quest(
        id=f"{file}::{name}",
        file=file,
        qualname=name,
        first=1,
        last=2,
        fingerprint=fingerprint,
        state=state,
    )


def _prints(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "m.py").write_text(SOURCE)
    functions = source_functions("m.py", read_source(tmp_path / "m.py"))
    return {f.quest_id: f.fingerprint for f in functions}


def test_issued_changed_of_a_todo_quest(tmp_path: Path) -> None:
    prints = _prints(tmp_path)
    issued = Issued(tmp_path)
    assert issued.changed(_quest("f", prints["m.py::f"])) is False
    assert issued.changed(_quest("g", "sha256:other")) is True
    assert issued.stale == {"m.py::g"}
    assert issued.prints == {"m.py": prints}


def test_issued_changed_reads_each_file_once(tmp_path: Path) -> None:
    prints = _prints(tmp_path)
    issued = Issued(tmp_path)
    assert issued.changed(_quest("f", prints["m.py::f"])) is False
    (tmp_path / "m.py").write_text("def f():\n    pass\n")
    assert issued.changed(_quest("f", prints["m.py::f"])) is False
    assert issued.stale == set()


def test_issued_changed_only_for_todo_quests(tmp_path: Path) -> None:
    _prints(tmp_path)
    issued = Issued(tmp_path)
    for state in (State.PASS, State.REVIEW, State.DONE, State.EXCLUDED):
        assert issued.changed(_quest("g", "sha256:other", state)) is False
    assert issued.prints == {}
    assert issued.stale == set()


def test_issued_changed_of_an_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def (:\n")
    issued = Issued(tmp_path)
    assert issued.changed(_quest("f", "sha256:x", file="gone.py")) is False
    assert issued.changed(_quest("f", "sha256:x", file="bad.py")) is False
    assert issued.prints == {"gone.py": {}, "bad.py": {}}
    assert issued.stale == set()


def test_issued_touched_only_parses_only_files_modified_since_the_issue(tmp_path: Path) -> None:
    _prints(tmp_path)
    os.utime(tmp_path / "m.py", (1_700_000_000, 1_700_000_000))  # 2023-11-14T22:13:20Z
    quest = _quest("g", "sha256:other")
    quest.issued_at = "2024-01-01T00:00:00Z"
    issued = Issued(tmp_path, touched_only=True)
    assert issued.changed(quest) is False  # not modified since: the issued code
    assert issued.prints == {}
    quest.issued_at = "2023-01-01T00:00:00Z"
    assert issued.changed(quest) is True
    quest.issued_at = "not a time"
    assert Issued(tmp_path, touched_only=True).changed(quest) is True
