"""Which quest option values pytest would also read as test paths (plugin/rootdir.py)."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.plugin.rootdir import VALUE_FLAGS, values_read_as_paths


def test_only_value_options_whose_value_names_an_existing_path(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("")
    args = [
        "--quest-export-to",
        "report.md",  # exists: pytest reads it as a path
        "--quest-id",
        "report.md::f",  # a node id's file part exists
        "--quest-reason",
        "missing.txt",  # no such path: pytest ignores it
        "--quest-export-to=report.md",  # one argument: never a path
        "--quest-status",
        "report.md",  # a flag takes no value: a real test path
    ]
    assert values_read_as_paths(args, tmp_path) == [
        ("--quest-export-to", "report.md"),
        ("--quest-id", "report.md::f"),
    ]


def test_a_value_no_path_can_be_is_not_one(tmp_path: Path) -> None:
    assert (
        values_read_as_paths(["--quest-reason", "x\0y", "--quest-id", "a" * 5000], tmp_path) == []
    )


def test_flags_take_no_value() -> None:
    assert "--quest-export-to" in VALUE_FLAGS
    assert "--quest-status" not in VALUE_FLAGS
