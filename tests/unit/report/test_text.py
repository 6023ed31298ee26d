"""Text renderings of status: forged PASS entries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_quest.core.model import Quest
from pytest_quest.report.text import forged_lines, source_with_marks


def test_forged_passes_are_counted_then_listed_one_a_line() -> None:
    assert forged_lines({"m.py::f": "no seal", "m.py::g": "seal of other content"}) == [
        "2 PASS not written by pytest-quest's gate, a scan or a person (forged):",
        "  FORGED m.py::f: no seal",
        "  FORGED m.py::g: seal of other content",
    ]
    assert forged_lines({}) == []


def _quest(**changes: object) -> Quest:
    values: dict[str, Any] = {
        "id": "m.py::f",
        "file": "m.py",
        "qualname": "f",
        "first": 9,
        "last": 12,
        "fingerprint": "x",
    }
    values.update(changes)
    return Quest(**values)


def test_source_with_marks_marks_missing_lines_and_partial_branches(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "\n".join(f"line {n}" for n in range(1, 14)) + "\n", encoding="utf-8"
    )
    quest = _quest(missing_lines=[10], missing_branches=[(10, 11), (11, 12), (11, 13)])
    assert source_with_marks(quest, tmp_path) == (
        "   9 | line 9\n> 10 | line 10\n~ 11 | line 11\n  12 | line 12"
    )


def test_source_with_marks_stops_at_the_files_end(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a\nb\nc\n", encoding="utf-8")
    assert source_with_marks(_quest(first=2, last=8), tmp_path) == "  2 | b\n  3 | c"
    assert source_with_marks(_quest(first=5, last=8), tmp_path) == ""


def test_source_with_marks_of_a_file_that_cannot_be_read(tmp_path: Path) -> None:
    assert source_with_marks(_quest(), tmp_path) == ""
