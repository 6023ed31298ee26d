"""app/deep_checks.py `clean_search_path`: where the clean witness search imports from,
computed by the judge from its own settings (never from what a gate child reports)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app_calc import CalcProject

from pytest_quest.app.deep_checks import clean_search_path


def test_the_ini_pythonpath_the_rootdir_and_the_sources_parents_in_that_order(
    calc: CalcProject, tmp_path: Path
) -> None:
    ctx = calc.context("submit")
    ctx.options.sources = [calc.root / "src" / "pkg"]
    ctx.child = dataclasses.replace(ctx.child, pythonpath=(str(calc.root / "src"),))
    found = clean_search_path(ctx)
    root = str(calc.root.resolve())
    assert found.path == (str(Path(root) / "src"), root)  # the source's parent is already there
    assert found.roots == (str(Path(root) / "src" / "pkg"),)


def test_with_no_source_folder_the_rootdir_is_the_code_under_test(calc: CalcProject) -> None:
    ctx = calc.context("submit")
    ctx.options.sources = []
    found = clean_search_path(ctx)
    root = str(calc.root.resolve())
    assert found.path == (root,) and found.roots == (root,)
