"""Which base check re-judges against: a file, a ref, the pull request's base, or none."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest
from app_calc import CalcProject

from pytest_quest.app.rejudge import load_base
from pytest_quest.core.errors import QuestUsageError


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_no_base_when_none_is_given_outside_a_pull_request(calc: CalcProject) -> None:
    assert load_base(calc.context("check")) is None


def test_a_base_file_relative_to_where_pytest_was_started(calc: CalcProject) -> None:
    (calc.root / "old").mkdir()
    (calc.root / "old" / "quest.json").write_bytes((calc.root / "quest.json").read_bytes())
    ctx = dataclasses.replace(
        calc.context("check", base_file="quest.json"), invocation_dir=calc.root / "old"
    )
    base = load_base(ctx)
    assert base is not None
    assert (base.source, base.found) == (str(calc.root / "old" / "quest.json"), True)
    assert sorted(base.ratchet.quests) == [
        "src/pkg/calc.py::clamp",
        "src/pkg/calc.py::double",
        "src/pkg/calc.py::sign",
    ]


def test_an_absolute_base_file_and_one_that_cannot_be_read(calc: CalcProject) -> None:
    absolute = calc.root / "quest.json"
    base = load_base(calc.context("check", base_file=str(absolute)))
    assert base is not None and base.source == str(absolute)
    missing = calc.root / "nope.json"
    with pytest.raises(QuestUsageError) as caught:
        load_base(calc.context("check", base_file=str(missing)))
    assert (
        str(caught.value)
        == f"--quest-base-file {missing}: cannot read it (No such file or directory)"
    )


def test_a_base_ref_given_or_the_pull_requests(calc: CalcProject) -> None:
    _git(calc.root, "init", "-q", "-b", "work")
    _git(calc.root, "add", "quest.json")
    _git(calc.root, "commit", "-q", "-m", "ratchet")
    _git(calc.root, "update-ref", "refs/remotes/origin/main", "HEAD")
    given = load_base(calc.context("check", base_ref="HEAD"))
    assert given is not None and (given.source, given.found) == ("HEAD:quest.json", True)
    assert sorted(given.ratchet.quests) == [
        "src/pkg/calc.py::clamp",
        "src/pkg/calc.py::double",
        "src/pkg/calc.py::sign",
    ]
    on_pr = dataclasses.replace(
        calc.context("check"), environ={"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "main"}
    )
    pulled = load_base(on_pr)
    assert pulled is not None and pulled.source == "origin/main:quest.json"
    elsewhere = dataclasses.replace(
        calc.context("check"), environ={"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "gone"}
    )
    assert load_base(elsewhere) is None
