"""What each command reads and checks before its tests run (app/preflight.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_calc import CalcProject

from pytest_quest.app.context import Inputs
from pytest_quest.app.preflight import audit_inputs, check_inputs, preflight, scan_inputs
from pytest_quest.core.errors import QuestUsageError, RatchetFileError


def test_a_shard_job_reads_nothing_and_makes_its_folder(calc: CalcProject) -> None:
    (calc.root / "quest.json").write_text("damaged", encoding="utf-8")  # never read
    folder = calc.root / "shards" / "1"
    assert preflight(calc.context("scan", shard_out=folder)) == Inputs()
    assert folder.is_dir()


def test_a_scan_reads_an_existing_file_and_keeps_nothing(calc: CalcProject) -> None:
    assert preflight(calc.context("scan")) == Inputs()
    (calc.root / "quest.json").write_text("{", encoding="utf-8")
    with pytest.raises(RatchetFileError):
        preflight(calc.context("scan"))


def test_a_first_scan_needs_no_file(tmp_path: Path) -> None:
    project = CalcProject(tmp_path)
    scan_inputs(project.context("scan"))
    assert not (tmp_path / "quest.json").exists()


def test_check_and_audit_keep_the_ratchet_they_read(calc: CalcProject) -> None:
    checked = preflight(calc.context("check"))
    assert checked.ratchet is not None and checked.base is None and checked.changes is None
    assert sorted(checked.ratchet.quests) == [
        "src/pkg/calc.py::clamp",
        "src/pkg/calc.py::double",
        "src/pkg/calc.py::sign",
    ]
    audited = preflight(calc.context("audit"))
    assert audited.ratchet is not None and (audited.base, audited.changes) == (None, None)
    assert sorted(audited.ratchet.quests) == sorted(checked.ratchet.quests)


def test_other_commands_read_nothing_ahead(calc: CalcProject) -> None:
    (calc.root / "quest.json").write_text("{", encoding="utf-8")
    assert preflight(calc.context("next")) == Inputs()
    assert preflight(calc.context("submit")) == Inputs()


def test_an_audit_without_mutants_is_a_usage_error(calc: CalcProject) -> None:
    with pytest.raises(QuestUsageError) as caught:
        audit_inputs(calc.context("audit", mutants=False))
    assert str(caught.value) == (
        "audit is the mutation check, and --quest-mutants is off: drop "
        "--quest-mutants off (or the quest_mutants ini option) to audit"
    )


def test_an_audit_reads_its_since_date_first(calc: CalcProject) -> None:
    assert audit_inputs(calc.context("audit", since="2026-01-01")).ratchet is not None
    with pytest.raises(QuestUsageError) as caught:
        audit_inputs(calc.context("audit", since="--output=x"))
    assert str(caught.value) == "--quest-since --output=x: a git ref does not start with '-'"


def test_a_check_refuses_its_export_target_before_the_tests_run(calc: CalcProject) -> None:
    assert check_inputs(calc.context("check", export_to="out.sarif")).ratchet is not None
    assert not (calc.root / "out.sarif").exists()
    with pytest.raises(QuestUsageError) as caught:
        check_inputs(calc.context("check", export_to="quest.json"))
    assert str(caught.value) == (
        f"--quest-export-to quest.json: that is the ratchet file {calc.root / 'quest.json'}; "
        "an export never writes over it (choose another path)"
    )
