"""``pytest --quest export``: JSON, CSV, Markdown and SARIF 2.1.0 reports, and what it refuses."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.app.export import export as export_case
from pytest_quest.app.next import next_quest
from pytest_quest.app.status import status
from pytest_quest.core.model import Ratchet
from pytest_quest.report.json import envelope
from tests.support.contexts import app_context
from tests.support.paths import DOCS
from tests.support.projects import CALC, TEST_DOUBLE, Project, scanned_template


def calc_project(project: Project) -> None:
    project.source("calc", "\n" + CALC)
    project.test("test_double", TEST_DOUBLE)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    template, data = scanned_template(tmp_path_factory, calc_project)
    assert data["counts"]["PASS"] == 1 and data["counts"]["TODO"] == 1
    return template


@pytest.fixture
def scanned(template: Project, project: Project) -> Project:
    return project.fill_from(template)


def export(project: Project, name: str, *extra: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    return project.run_json("--quest", "export", "--quest-export-to", name, *extra)


def test_every_format(scanned: Project) -> None:
    project = scanned
    before = (project.path / "quest.json").read_bytes()
    result, data = export(project, "report.json")  # one through a whole pytest
    assert result.ret == 0, data
    formats = {"report.json": data}
    for name in ("report.csv", "report.md", "report.sarif"):  # runs no test: in-process
        exported = export_case(app_context(project.path, "export", export_to=name))
        formats[name] = envelope("export", exported.data)
    for name, data in formats.items():
        assert data["command"] == "export"
        assert data["export"] == str(project.path / name)
    assert (project.path / "quest.json").read_bytes() == before

    report = json.loads((project.path / "report.json").read_text())
    assert report["schema"] == "pytest-quest/1" and report["kind"] == "export"
    assert report["regressions"] is None  # export runs no test: no check, no regression
    assert [(q["id"], q["state"]) for q in report["quests"]] == [
        ("src/pkg/calc.py::double", "PASS"),
        ("src/pkg/calc.py::sign", "TODO"),
    ]
    assert report["quests"][1]["missing_lines"] == [7, 8, 9]

    rows = list(csv.DictReader((project.path / "report.csv").read_text().splitlines()))
    assert [(r["id"], r["state"], r["missing_lines"]) for r in rows] == [
        ("src/pkg/calc.py::double", "PASS", ""),
        ("src/pkg/calc.py::sign", "TODO", "7 8 9"),
    ]
    assert rows[1]["missing_branches"] == "7->8 7->9"

    markdown = (project.path / "report.md").read_text()
    assert markdown.startswith("# pytest-quest report\n")
    assert "| TODO | 1 |" in markdown and "| PASS | 1 |" in markdown
    assert "| `src/pkg/calc.py::sign` | 6-9 | 0 | 7, 8, 9, 7->8, 7->9 |" in markdown

    sarif = json.loads((project.path / "report.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert sarif["$schema"].endswith("sarif-2.1.0.json")
    run = sarif["runs"][0]
    assert run["tool"]["driver"]["name"] == "pytest-quest"
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == [
        "quest/open",
        "quest/regression",
    ]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.path.resolve().as_uri() + "/"
    # One result per open quest, located at the function.
    (result,) = run["results"]
    assert result["ruleId"] == "quest/open" and result["level"] == "warning"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/pkg/calc.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 6, "endLine": 9}
    assert [r["physicalLocation"]["region"]["startLine"] for r in result["relatedLocations"]] == [
        7,
        8,
        9,
        7,
        7,
    ]


def test_check_export_carries_regressions(scanned: Project) -> None:
    project = scanned
    (project.path / "tests" / "test_double.py").write_text("def test_nothing():\n    pass\n")
    result, data = project.run_json("--quest", "check", "--quest-export-to", "check.sarif")
    assert result.ret == 1
    assert data["export"] == str(project.path / "check.sarif")
    run = json.loads((project.path / "check.sarif").read_text())["runs"][0]
    rules = [r["ruleId"] for r in run["results"]]
    assert rules == ["quest/open", "quest/regression"]
    regression = run["results"][1]
    assert regression["level"] == "error"
    assert "src/pkg/calc.py::double regressed" in regression["message"]["text"]
    assert regression["locations"][0]["physicalLocation"]["region"] == {"startLine": 3}
    assert regression["partialFingerprints"] == {"questId/v1": "src/pkg/calc.py::double"}
    result, data = project.run_json("--quest", "check", "--quest-export-to", "check.json")
    report = json.loads((project.path / "check.json").read_text())
    assert [r["id"] for r in report["regressions"]] == ["src/pkg/calc.py::double"]
    assert report["regressions"] == data["regressions"]


def test_refusals_exit_4_and_write_nothing(scanned: Project) -> None:
    project = scanned
    ratchet = project.path / "quest.json"
    before = ratchet.read_bytes()
    existing = project.path / "old.md"
    existing.write_text("keep me\n")
    source = project.path / "src" / "pkg" / "calc.py"
    source_before = source.read_bytes()
    # Two of the refusals through a whole pytest: a usage error, exit 4. Every refusal's
    # message, and that it writes nothing, is tested in-process on app.export
    # (tests/unit/app/test_app_status_export.py::test_export_refusals_write_nothing).
    cases = [
        (("--quest-export-to", "old.md"), "the file exists; pass --quest-export-force"),
        (
            ("--quest-export-to", "src/pkg/report.json", "--quest-export-force"),
            "inside the code under test",
        ),
    ]
    for args, message in cases:
        result = project.run("--quest", "export", *args)
        assert result.ret == 4, args
        assert message in result.stdout.str() + result.stderr.str(), args
    assert existing.read_text() == "keep me\n"
    assert ratchet.read_bytes() == before
    assert source.read_bytes() == source_before
    assert not (project.path / "src" / "pkg" / "report.json").exists()
    # A check with a bad export target fails the same way and writes nothing.
    result = project.run("--quest", "check", "--quest-export-to", "old.md")
    assert result.ret == 4
    assert existing.read_text() == "keep me\n"
    # With --quest-export-force an existing report is replaced.
    result, _data = export(project, "old.md", "--quest-export-force")
    assert result.ret == 0
    assert existing.read_text().startswith("# pytest-quest report\n")


# -- docs/json-schema.md is the contract: every key printed is documented --------

SCHEMA_DOC = DOCS / "json-schema.md"
COMMON = {"schema", "command", "counts", "remaining", "error"}


def documented_keys() -> dict[str, set[str]]:
    """Section title -> the backticked names in the first column of its tables."""
    sections: dict[str, set[str]] = {}
    title = ""
    for line in SCHEMA_DOC.read_text().splitlines():
        if line.startswith("## "):
            title = line[3:].split()[0].rstrip(",")
            sections[title] = set()
        elif line.startswith("| `") and title:
            first_cell = line.split("|")[1]
            sections[title].update(re.findall(r"`([a-z_]+)`", first_cell))
    return sections


def test_json_keys_are_documented(project: Project) -> None:
    project.source("calc", "\n" + CALC)
    project.test("test_double", TEST_DOUBLE)
    docs = documented_keys()
    quest_keys = docs["Rules"]
    outputs = {}
    _result, outputs["scan"] = project.run_json("--quest", "scan")
    # The commands that run no test, in-process: the plugin prints envelope(command, data)
    # (plugin/session.py, plugin/sessionless.py).
    root = project.path
    outputs["next"] = envelope("next", next_quest(app_context(root, "next")).data)
    outputs["status"] = envelope("status", status(app_context(root, "status")).data)
    exported = export_case(app_context(root, "export", export_to=str(root / "report.json")))
    outputs["export"] = envelope("export", exported.data)
    _result, outputs["check"] = project.run_json("--quest", "check")
    for command, data in outputs.items():
        assert data["command"] == command
        assert set(data) - COMMON <= docs[command], command
    assert set(outputs["next"]["quest"]) <= quest_keys
    for quest in outputs["status"]["quests"]:
        assert set(quest) <= quest_keys


# -- unit tests of export.py (no pytest run) -------------------------------------


def _ratchet() -> Ratchet:
    from pytest_quest.core.model import Fact, Quest, Ratchet, State

    todo = Quest(
        id="src/a.py::f",
        file="src/a.py",
        qualname="f",
        first=3,
        last=6,
        fingerprint="x",
        missing_lines=[4],
        missing_branches=[(3, -1)],
        facts=[Fact("coverage.line", "src/a.py:4", "run", "never", "line 4 not covered")],
    )
    review = Quest(
        id="src/a.py::g",
        file="src/a.py",
        qualname="g",
        first=8,
        last=9,
        fingerprint="y",
        state=State.REVIEW,
        facts=[Fact("identity.changed", "src/a.py:8", "same", "changed", "g changed")],
    )
    done = Quest(
        id="src/b.py::h",
        file="src/b.py",
        qualname="h",
        first=1,
        last=2,
        fingerprint="z",
        state=State.DONE,
        tries=3,
    )
    passed = Quest(
        id="src/b.py::k",
        file="src/b.py",
        qualname="k",
        first=4,
        last=5,
        fingerprint="w",
        state=State.PASS,
        passed_at="T",
    )
    return Ratchet(quests={q.id: q for q in (todo, review, done, passed)})


REGRESSION = {
    "id": "src/b.py::k",
    "file": "src/b.py",
    "qualname": "k",
    "lines": [4, 5],
    "passed_at": "T",
    "baseline": True,
    "changed": False,
    "facts": [
        {
            "check": "coverage.line",
            "field": "src/b.py:5",
            "expected": "run",
            "actual": "never",
            "message": "line 5 not covered [src/b.py::k, PASS since T]",
        }
    ],
}


def test_sarif_levels_locations_and_regressions(tmp_path: Path) -> None:
    from pytest_quest.report import export as export_module

    sarif = json.loads(export_module.render_sarif(_ratchet(), [REGRESSION], tmp_path, "9.9"))
    run = sarif["runs"][0]
    assert run["tool"]["driver"]["version"] == "9.9"
    results = run["results"]
    assert [(r["ruleId"], r["ruleIndex"], r["level"]) for r in results] == [
        ("quest/open", 0, "warning"),  # TODO
        ("quest/open", 0, "note"),  # REVIEW
        ("quest/open", 0, "warning"),  # DONE
        ("quest/regression", 1, "error"),
    ]
    assert (
        results[1]["message"]["text"]
        == "REVIEW quest src/a.py::g; waiting for a person: src/a.py:8: g changed"
    )
    assert "relatedLocations" not in results[2]  # no fact with a line
    assert results[3]["locations"][0]["physicalLocation"]["region"] == {"startLine": 5}
    assert results[3]["relatedLocations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "src/b.py", "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": 5},
            },
            "message": {"text": "line 5 not covered [src/b.py::k, PASS since T]"},
            "id": 0,
        }
    ]


def test_csv_and_markdown_renderers() -> None:
    from pytest_quest.report import export as export_module

    rows = list(csv.DictReader(export_module.render_csv(_ratchet(), [REGRESSION]).splitlines()))
    assert [(r["id"], r["state"], r["missing_branches"], r["regression_facts"]) for r in rows] == [
        ("src/a.py::f", "TODO", "3->exit", "0"),
        ("src/a.py::g", "REVIEW", "", "0"),
        ("src/b.py::h", "DONE", "", "0"),
        ("src/b.py::k", "PASS", "", "1"),
    ]
    markdown = export_module.render_markdown(_ratchet(), [REGRESSION], "NOW")
    assert "### `src/b.py::k` (PASS since T)" in markdown
    assert "| `src/a.py::f` | 3-6 | 0 | 4, 3->exit |" in markdown
    assert export_module.render_markdown(_ratchet(), [], "NOW").count("None: every PASS") == 1
    assert "## Regressions" not in export_module.render_markdown(_ratchet(), None, "NOW")


def test_target_refusals(tmp_path: Path) -> None:
    from pytest_quest.core.errors import QuestUsageError
    from pytest_quest.engine import outputs

    source = tmp_path / "src"
    source.mkdir()
    ratchet_file = tmp_path / "quest.json"
    ratchet_file.write_text("{}")
    (tmp_path / "folder.json").mkdir()

    def target(name: str, force: bool = False) -> tuple[Path, str]:
        return outputs.target(name, tmp_path, force, [ratchet_file], [source])

    assert target("r.SARIF") == (tmp_path / "r.SARIF", "sarif")
    assert target(str(tmp_path / "r.csv")) == (tmp_path / "r.csv", "csv")
    for name, force, message in [
        ("r.txt", True, "unknown suffix '.txt'"),
        ("noext", True, "unknown suffix '(none)'"),
        ("nope/r.json", True, "does not exist"),
        ("quest.json", True, "that is the ratchet file"),
        ("src/r.md", True, "inside the code under test"),
        ("folder.json", True, "it is a folder"),
    ]:
        with pytest.raises(QuestUsageError, match=re.escape(message)):
            target(name, force)
    (tmp_path / "old.md").write_text("x")
    with pytest.raises(QuestUsageError, match="--quest-export-force"):
        target("old.md")
    assert target("old.md", force=True)[1] == "md"
    outputs.write(tmp_path / "old.md", "new\n")
    assert (tmp_path / "old.md").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "folder.json",
        "old.md",
        "quest.json",
        "src",
    ]
