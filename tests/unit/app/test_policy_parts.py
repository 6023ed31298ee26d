"""When a quest passed against --quest-since, the sources a command remembers, who a person is."""

from __future__ import annotations

import getpass
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pytest_quest.app import person
from pytest_quest.app.options import QuestOptions
from pytest_quest.app.policy import passed_since, remembered_sources
from pytest_quest.core.model import Ratchet
from pytest_quest.core.policy import GatePolicy

SINCE = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def test_passed_since_compares_times_in_utc() -> None:
    assert passed_since("2026-12-01T12:00:00Z", SINCE) is True
    assert passed_since("2026-12-01T11:59:59Z", SINCE) is False
    assert passed_since("2026-12-01T12:00:01+00:00", SINCE) is True
    assert passed_since("2026-12-01T13:30:00+02:00", SINCE) is False  # 11:30 UTC
    assert passed_since("2026-12-01T12:00:00", SINCE) is True  # no zone: read as UTC
    assert passed_since("2026-12-01T11:00:00", SINCE) is False
    assert passed_since("2026-12-02", SINCE) is True


def test_passed_since_of_an_unreadable_time_is_true() -> None:
    assert passed_since("", SINCE) is True
    assert passed_since("yesterday", SINCE) is True
    assert passed_since("", SINCE + timedelta(days=999)) is True


def _options(sources: list[Path]) -> QuestOptions:
    return QuestOptions(
        command="check",
        sources=sources,
        quest_file=Path("quest.json"),
        max_tries=3,
        format="text",
        quest_id=None,
        timeout=60.0,
        lock_timeout=5.0,
        strict=False,
        reopen=None,
        accept=None,
        export_to=None,
        export_force=False,
        mutants=True,
        verify="off",
        measure_out=None,
    )


def test_remembered_sources_fill_in_only_when_none_was_given(tmp_path: Path) -> None:
    recorded = Ratchet(policy=GatePolicy(sources=("src/pkg", "lib")))
    given = _options([tmp_path / "other"])
    assert remembered_sources(given, recorded, tmp_path) is given
    none = _options([])
    filled = remembered_sources(none, recorded, tmp_path)
    assert filled.sources == [tmp_path / "src/pkg", tmp_path / "lib"]
    assert none.sources == []
    assert remembered_sources(none, Ratchet(), tmp_path) is none
    assert remembered_sources(none, Ratchet(policy=GatePolicy(sources=())), tmp_path) is none


def test_who_is_gits_user_name(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def run(argv: list[str], **options: object) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, "  Ada Lovelace \n", "")

    monkeypatch.setattr(subprocess, "run", run)
    assert person.who() == "Ada Lovelace"
    assert calls == [["git", "config", "user.name"]]


@pytest.mark.parametrize("failure", [OSError("no git"), subprocess.TimeoutExpired("git", 5)])
def test_who_without_git_is_the_os_user(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    def run(argv: list[str], **options: object) -> subprocess.CompletedProcess[str]:
        raise failure

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(getpass, "getuser", lambda: "ada")
    assert person.who() == "ada"


def test_who_without_a_git_name_nor_an_os_user_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    def run(argv: list[str], **options: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 1, "", "")

    def nobody() -> str:
        raise KeyError("getpwuid(): uid not found: 1234")

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(getpass, "getuser", nobody)
    assert person.who() == "unknown"
