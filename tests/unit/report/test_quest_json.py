"""A quest's JSON: what an agent reads of one quest (`next`, `submit`) and what lists keep."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.core.model import Quest, Ratchet
from pytest_quest.report.json import COVERING_SHOWN, quest_json


def test_the_covering_tests_of_one_quest_are_capped_with_their_count(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    tests = [f"tests/test_m.py::test_{i:03}" for i in range(123)]
    quest = Quest(
        id="m.py::f", file="m.py", qualname="f", first=1, last=2, fingerprint="x",
        covering_tests=tests,
    )  # fmt: skip
    ratchet = Ratchet(quests={quest.id: quest})
    shown = quest_json(quest, ratchet, max_tries=3, rootdir=tmp_path)
    assert shown["covering_tests"] == tests[:COVERING_SHOWN] and COVERING_SHOWN == 10
    assert shown["covering_tests_total"] == 123
    # `status` and `export` (not full) keep every name.
    listed = quest_json(quest, ratchet, max_tries=3, rootdir=tmp_path, full=False)
    assert listed["covering_tests"] == tests and listed["covering_tests_total"] == 123


def test_recorded_facts_shown_by_submit_say_which_command_measures_them_again() -> None:
    from pytest_quest.core.model import Fact
    from pytest_quest.report.json import facts_from

    quest = Quest(id="m.py::f", file="m.py", qualname="f", first=1, last=2, fingerprint="x")
    quest.facts = [Fact("coverage.line", "m.py:2", "executed", "never executed")]
    ratchet = Ratchet(quests={quest.id: quest}, scanned_at="2026-01-01T00:00:00Z")
    assert facts_from(quest, ratchet)["note"] == (
        "from the scan of 2026-01-01T00:00:00Z: tests written since then are not counted "
        "here (`pytest --quest next` measures them)"
    )
