"""app/policy.py: --quest-since read as an ISO time or a git ref's commit date."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pytest_quest.app import policy
from pytest_quest.app.policy import passed_since, since_time
from pytest_quest.core.errors import QuestUsageError


def test_since_time_of_a_date_is_midnight_utc(tmp_path: Path) -> None:
    assert since_time("2026-12-01", tmp_path) == datetime(2026, 12, 1, tzinfo=timezone.utc)


def test_since_time_of_a_z_time(tmp_path: Path) -> None:
    assert since_time("2026-12-01T10:30:00Z", tmp_path) == datetime(
        2026, 12, 1, 10, 30, tzinfo=timezone.utc
    )


def test_since_time_keeps_its_offset(tmp_path: Path) -> None:
    found = since_time("2026-12-01T10:30:00+02:00", tmp_path)
    assert found.utcoffset() == timedelta(hours=2)
    assert found == datetime(2026, 12, 1, 8, 30, tzinfo=timezone.utc)


def test_since_time_of_a_git_ref(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked: list[tuple[str, Path]] = []

    def commit_date(ref: str, cwd: Path) -> str:
        asked.append((ref, cwd))
        return "2026-11-30T09:00:00+01:00"

    monkeypatch.setattr(policy, "commit_date", commit_date)
    found = since_time("main", tmp_path)
    assert found == datetime(2026, 11, 30, 8, 0, tzinfo=timezone.utc)
    assert found.utcoffset() == timedelta(hours=1)
    assert asked == [("main", tmp_path)]


def test_since_time_of_a_git_ref_whose_date_has_no_zone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(policy, "commit_date", lambda ref, cwd: "2026-11-30T09:00:00")
    found = since_time("v1", tmp_path)
    assert found == datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
    assert found.tzinfo is timezone.utc


def test_since_time_of_an_unknown_ref(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(policy, "commit_date", lambda ref, cwd: None)
    with pytest.raises(QuestUsageError) as caught:
        since_time("nope", tmp_path)
    assert str(caught.value) == (
        "--quest-since 'nope': neither an ISO date (2026-12-01) nor a git ref with a commit date"
    )
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__ is True


def test_since_time_refuses_a_ref_that_reads_as_an_option(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    asked: list[str] = []
    monkeypatch.setattr(policy, "commit_date", lambda ref, cwd: asked.append(ref))
    with pytest.raises(QuestUsageError) as caught:
        since_time("--output=x", tmp_path)
    assert str(caught.value) == "--quest-since --output=x: a git ref does not start with '-'"
    assert asked == []


def test_passed_since() -> None:
    since = datetime(2026, 12, 1, tzinfo=timezone.utc)
    assert passed_since("2026-12-01T00:00:00Z", since) is True
    assert passed_since("2026-11-30T23:59:59Z", since) is False
    assert passed_since("2026-12-01T00:00:00", since) is True
    assert passed_since("2026-11-30T23:00:00", since) is False
    assert passed_since("not a time", since) is True
