"""`status` and `export` in-process: they read the ratchet file and change nothing in it."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from app_calc import CLAMP, DOUBLE, SIGN, CalcProject, settled

from pytest_quest.app.export import export
from pytest_quest.app.status import status
from pytest_quest.core.errors import QuestUsageError

SPARE = "src/pkg/calc.py::spare"


def test_status_text_and_json(tmp_path: Path) -> None:
    project = CalcProject(tmp_path)
    settled(project)
    quest_file = tmp_path / "quest.json"
    before = quest_file.read_bytes()
    output = status(project.context("status", format="text"))
    assert output.exitcode == 0
    assert output.lines[0] == "4 quests: 1 TODO, 1 PASS, 1 REVIEW, 1 DONE; 1 remaining"
    text = "\n".join(output.lines)
    assert "3/4 settled (75%)" in text
    [row] = [line for line in output.lines if line.startswith("src/pkg/calc.py")]
    # TODO, PASS, REVIEW, DONE, EXCLUDED, all
    assert re.findall(r"\d+", row) == ["1", "1", "1", "1", "0", "4"]
    assert "waiting for a person (REVIEW):" in output.lines
    assert f"  {SIGN}  (src/pkg/calc.py:5-8, tries 0/3)" in output.lines
    assert "closed after max tries (DONE):" in output.lines
    assert f"  {CLAMP}  (src/pkg/calc.py:11-16, tries 1/3)" in output.lines
    assert "    src/pkg/calc.py:12: line 12 not covered" in output.lines
    assert "\x1b[" not in text
    data = status(project.context("status")).data
    assert data["counts"] == {"TODO": 1, "PASS": 1, "REVIEW": 1, "DONE": 1, "EXCLUDED": 0}
    assert data["remaining"] == 1
    assert [quest["id"] for quest in data["quests"]] == [DOUBLE, SIGN, CLAMP, SPARE]
    assert all("source" not in quest and "example" not in quest for quest in data["quests"])
    assert quest_file.read_bytes() == before


def test_export_every_format(calc: CalcProject) -> None:
    quest_file = calc.root / "quest.json"
    before = quest_file.read_bytes()
    for name in ("report.json", "report.csv", "report.md", "report.sarif"):
        output = export(calc.context("export", export_to=name))
        assert output.exitcode == 0
        assert output.data["export"] == str(calc.root / name)
        assert output.data["format"] == name.rsplit(".", 1)[1]
    assert quest_file.read_bytes() == before
    report = json.loads((calc.root / "report.json").read_text())
    assert report["schema"] == "pytest-quest/1" and report["kind"] == "export"
    assert report["regressions"] is None
    assert [(q["id"], q["state"]) for q in report["quests"]] == [
        (DOUBLE, "PASS"),
        (SIGN, "TODO"),
        (CLAMP, "TODO"),
    ]
    rows = list(csv.DictReader((calc.root / "report.csv").read_text().splitlines()))
    assert (rows[1]["id"], rows[1]["missing_lines"], rows[1]["missing_branches"]) == (
        SIGN,
        "6 7 8",
        "6->7 6->8",
    )
    assert (calc.root / "report.md").read_text().startswith("# pytest-quest report\n")
    assert json.loads((calc.root / "report.sarif").read_text())["version"] == "2.1.0"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"export_to": "old.md"}, "the file exists; pass --quest-export-force"),
        ({"export_to": "quest.json", "export_force": True}, "that is the ratchet file"),
        (
            {"export_to": "src/pkg/report.json", "export_force": True},
            "inside the code under test",
        ),
        ({"export_to": "missing/report.json"}, "the folder"),
        ({"export_to": "report.xml"}, "unknown suffix '.xml'"),
        ({}, "--quest export needs --quest-export-to PATH"),
    ],
)
def test_export_refusals_write_nothing(
    calc: CalcProject, changes: dict[str, Any], message: str
) -> None:
    (calc.root / "old.md").write_text("keep me\n")
    before = (calc.root / "quest.json").read_bytes()
    source = calc.root / "src" / "pkg" / "calc.py"
    source_before = source.read_bytes()
    with pytest.raises(QuestUsageError, match=message.replace("(", r"\(")):
        export(calc.context("export", **changes))
    assert (calc.root / "old.md").read_text() == "keep me\n"
    assert (calc.root / "quest.json").read_bytes() == before
    assert source.read_bytes() == source_before
    assert not (calc.root / "missing").exists()
    assert not (calc.root / "src" / "pkg" / "report.json").exists()
    assert not (calc.root / "report.xml").exists()


def test_export_force_replaces_a_report(calc: CalcProject) -> None:
    (calc.root / "old.md").write_text("keep me\n")
    export(calc.context("export", export_to="old.md", export_force=True))
    assert (calc.root / "old.md").read_text().startswith("# pytest-quest report\n")
