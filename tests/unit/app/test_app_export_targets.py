"""Exports stay where they belong, in-process on app.export: every refused target.

Two of them also run through a whole pytest (tests/e2e/test_hostile.py), for the
exit status and the one ``ERROR:`` line.
"""

from __future__ import annotations

import os

import pytest
from app_calc import CalcProject

from pytest_quest.app.export import export
from pytest_quest.core.errors import QuestUsageError

REFUSED = [
    ("quest.json.lock.json", "that name belongs to the ratchet file"),
    ("quest.json.judging.lock.md", "that name belongs to the ratchet file"),
    (".quest/quest.json.lock.json", "that name belongs to the ratchet file"),
    (".quest-tmp-quest.json-abcd.json", "that name belongs to the ratchet file"),
    ("quest.json", "that is the ratchet file"),
    ("tests/report.md", "it is inside the tests"),
    ("src/pkg/report.json", "it is inside the code under test"),
    ("folder.json", "it is a folder; name a file in it"),
    ("fifo.json", "it is not a regular file"),
]


@pytest.mark.parametrize(("name", "problem"), REFUSED)
def test_an_export_refuses_what_it_must_not_write(
    calc: CalcProject, name: str, problem: str
) -> None:
    root = calc.root
    (root / "folder.json").mkdir()
    os.mkfifo(root / "fifo.json")
    (root / "tests" / "report.md").write_text("kept\n")
    path = root / "quest.json"
    before = path.read_bytes()
    listing = sorted(p.name for p in root.iterdir())
    with pytest.raises(QuestUsageError) as caught:
        export(calc.context("export", export_to=name, export_force=True))
    error = str(caught.value)
    assert problem in error, error
    assert error.startswith(f"argument --quest-export-to {name}: ") or name in error
    assert path.read_bytes() == before
    assert sorted(p.name for p in root.iterdir()) == listing
    assert (root / "tests" / "report.md").read_text() == "kept\n"
