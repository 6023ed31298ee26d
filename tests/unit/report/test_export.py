"""Writing an export: atomically, and the version the SARIF report names."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from pytest_quest.engine.outputs import write
from pytest_quest.report.export import _version


def test_write_replaces_the_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "quests.md"
    target.write_text("old", encoding="utf-8")
    write(target, "line one\r\nline two\n")
    assert target.read_bytes() == b"line one\r\nline two\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["quests.md"]


def test_a_write_that_cannot_replace_removes_its_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "report"
    target.mkdir()
    (target / "inside").write_text("kept", encoding="utf-8")
    with pytest.raises(OSError):
        write(target, "text")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report"]
    assert (target / "inside").read_text(encoding="utf-8") == "kept"


def test_the_version_is_the_installed_distributions() -> None:
    assert _version() == importlib.metadata.version("pytest-quest")


def test_the_version_is_0_when_the_distribution_cannot_be_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert _version() == "0"
