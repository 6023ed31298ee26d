"""A quest that is not PASS, moved or renamed and rescanned, is the same quest (core and app)."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.app.scan import returning_quests
from pytest_quest.core.model import Ratchet, State
from pytest_quest.core.ratchet import merge_scan
from pytest_quest.core.seal import seal_facts
from pytest_quest.engine.source import fingerprint_as, source_functions
from tests.unit.core.test_model import CONFIG, LATER, NOW, facts, scanned


def test_a_moved_quest_keeps_its_state_tries_and_exclusions_and_is_sealed_again() -> None:
    ratchet = scanned(facts("a", 1, missing_lines=[2]), facts("b", 10, missing_lines=[11]))
    review = ratchet.quests["src/pkg/m.py::b"]
    review.state, review.tries, review.excluded_lines = State.REVIEW, 2, [12]
    todo = ratchet.quests["src/pkg/m.py::a"]
    todo.tries = 1
    moved_b = facts("b", 30, file="src/pkg/n.py", fingerprint="sha256:b")
    moved_a = facts("a", 5, file="src/pkg/n.py", missing_lines=[7])
    report = merge_scan(
        ratchet,
        [moved_a, moved_b],
        [],
        CONFIG,
        {},
        LATER,
        {"src/pkg/n.py::b": "src/pkg/m.py::b", "src/pkg/n.py::a": "src/pkg/m.py::a"},
    )
    assert sorted(report.added) == ["src/pkg/n.py::a", "src/pkg/n.py::b"]
    assert report.added_pass == []
    b = ratchet.quests["src/pkg/n.py::b"]
    assert (b.state, b.tries, b.excluded_lines, b.first) == (State.REVIEW, 2, [32], 30)
    a = ratchet.quests["src/pkg/n.py::a"]
    assert (a.state, a.tries, a.missing_lines) == (State.TODO, 1, [7])
    assert seal_facts(a) == seal_facts(b) == []
    notes = {r["id"]: r for r in ratchet.removed}
    assert notes["src/pkg/m.py::b"]["note"] == "moved or renamed to src/pkg/n.py::b"
    assert notes["src/pkg/m.py::b"]["fingerprint"] == "sha256:b"
    assert notes["src/pkg/m.py::b"]["tries"] == "2"


def test_a_quest_back_from_removed_is_never_a_baseline_and_keeps_a_terminal_state() -> None:
    ratchet = scanned(facts("a", 1, missing_lines=[2]), facts("p", 20))
    ratchet.quests["src/pkg/m.py::a"].state = State.DONE
    ratchet.quests["src/pkg/m.py::a"].tries = 3
    merge_scan(ratchet, [], [], CONFIG, {}, LATER)  # both gone
    assert "fingerprint" not in ratchet.removed[-1]  # a PASS one needs no match
    back = facts("a", 40, file="src/pkg/n.py")  # fully covered now
    report = merge_scan(ratchet, [back], [], CONFIG, {}, LATER, {back.quest_id: "src/pkg/m.py::a"})
    assert (report.added, report.added_pass) == (["src/pkg/n.py::a"], [])
    quest = ratchet.quests["src/pkg/n.py::a"]
    assert (quest.state, quest.tries, quest.baseline, quest.passed_at) == (State.DONE, 3, False, "")
    ratchet.removed.append({"id": "src/pkg/m.py::z", "state": "PASS", "at": NOW, "note": ""})
    other = facts("z", 60, file="src/pkg/n.py", statements=0)
    again = merge_scan(ratchet, [other], [], CONFIG, {}, LATER, {other.quest_id: "src/pkg/m.py::z"})
    assert again.added == []  # no statements: no quest, as for a new function


def test_a_quest_back_from_a_removed_pass_record_is_todo() -> None:
    ratchet = Ratchet()
    ratchet.removed.append({"id": "src/pkg/m.py::q", "state": "PASS", "at": NOW, "note": ""})
    back = facts("q", 1)
    merge_scan(ratchet, [back], [], CONFIG, {}, LATER, {back.quest_id: "src/pkg/m.py::q"})
    assert ratchet.quests[back.quest_id].state is State.TODO


SOURCE = "def signum(x):\n    return x\n\n\ndef other(y):\n    return y + 1\n"


def test_moves_and_renames_are_matched_by_fingerprint(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "n.py").write_text(SOURCE)
    infos = {i.qualname: i for i in source_functions("src/n.py", SOURCE)}
    old = fingerprint_as(tmp_path / "src" / "n.py", 1, "sign")
    assert old and old != infos["signum"].fingerprint
    assert fingerprint_as(tmp_path / "src" / "n.py", 3, "sign") == ""
    assert fingerprint_as(tmp_path / "nowhere.py", 1, "sign") == ""
    ratchet = scanned(
        facts("sign", 1, missing_lines=[2], fingerprint=old),
        facts("other", 10, missing_lines=[11], fingerprint=infos["other"].fingerprint),
        facts("kept", 20, missing_lines=[21]),
        facts("passed", 30, fingerprint=infos["other"].fingerprint),
    )
    ratchet.removed.append(
        {"id": "src/pkg/m.py::gone@2", "state": "TODO", "at": NOW, "note": "", "fingerprint": "x"}
    )
    now = [
        facts("kept", 20, missing_lines=[21]),
        facts("signum", 1, file="src/n.py", fingerprint=infos["signum"].fingerprint),
        facts("other", 5, file="src/n.py", fingerprint=infos["other"].fingerprint),
        facts("fresh", 9, file="src/n.py", fingerprint="sha256:fresh"),
        facts("empty", 12, file="src/n.py", statements=0),
    ]
    assert returning_quests(ratchet, now, [], tmp_path) == {
        "src/n.py::signum": "src/pkg/m.py::sign",
        "src/n.py::other": "src/pkg/m.py::other",
    }
    assert returning_quests(ratchet, now, ["src/pkg/m.py::sign"], tmp_path) == {
        "src/n.py::other": "src/pkg/m.py::other",
    }
