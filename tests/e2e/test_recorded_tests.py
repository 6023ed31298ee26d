"""What a submit runs of what the scan recorded: its covering tests, its test folders."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.projects import (
    CALC,
    SIGN,
    TEST_DOUBLE,
    TEST_SIGN,
    Project,
    scanned_template,
)

# Covers `sign`'s negative branch only; its parametrize id is the folder it lies in,
# an absolute path: another checkout of the project collects it under another id.
SIGN_HERE = """\
from pathlib import Path

import pytest

from pkg.calc import sign


@pytest.mark.parametrize("where", [str(Path(__file__).parent)])
def test_sign_negative(where):
    assert sign(-5) == -1
"""


def _path_ids(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_sign_here", SIGN_HERE)


@pytest.fixture(scope="module")
def path_ids_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, Any]]:
    return scanned_template(tmp_path_factory, _path_ids)


def test_a_covering_test_that_no_longer_collects_is_left_out_not_a_crash(
    project: Project, path_ids_template: tuple[Project, dict[str, Any]]
) -> None:
    # The scan recorded `test_sign_negative[<the template's folder>]`; in this copy
    # the test collects under another id. The judge runs the tests that exist.
    project.fill_from(path_ids_template[0])
    project.test("test_sign", TEST_SIGN)
    result = project.run("--quest", "submit", "--quest-id", SIGN)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 0, out
    assert "is now PASS" in out, out
    assert "test_sign_negative[" in out and "no longer collects: judged without it" in out, out


# A vendored project's tests under the configured testpaths: they need what is not here
# (and name a `sign` of their own, so a submit of `sign` runs them first).
VENDORED = """\
from not_installed_anywhere import sign


def test_sign():
    assert sign(1) == 1
"""


def _unit_and_vendored(project: Project) -> None:
    project.source("calc", CALC)
    for folder in ("unit", "vendored"):
        (project.path / "tests" / folder).mkdir()
    project.test("unit/test_double", TEST_DOUBLE)
    project.test("vendored/test_theirs", VENDORED)


def test_a_bare_submit_judges_the_folders_the_scan_was_given(project: Project) -> None:
    # Scanned over tests/unit; `testpaths` is tests/, vendored project included.
    _unit_and_vendored(project)
    result = project.run("--quest", "scan", "tests/unit")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert json.loads((project.path / "quest.json").read_text())["test_paths"] == ["tests/unit"]
    project.test("unit/test_sign", TEST_SIGN)
    _, data = project.run_json("--quest", "submit", "--quest-id", SIGN)
    assert data["verdict"] == "PASS", data


def test_a_path_given_to_submit_wins_over_the_recorded_ones(project: Project) -> None:
    _unit_and_vendored(project)
    assert project.run("--quest", "scan", "tests/unit").ret == 0
    project.test("unit/test_sign", TEST_SIGN)
    result, data = project.run_json("--quest", "submit", "--quest-id", SIGN, "tests")
    assert data.get("verdict") != "PASS", data  # its collection error refused
    assert "not_installed_anywhere" in str(data), data


def test_a_bare_check_runs_the_folders_the_scan_was_given(project: Project) -> None:
    _unit_and_vendored(project)
    assert project.run("--quest", "scan", "tests/unit").ret == 0
    result = project.run("--quest", "check")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 0, out
    assert "not_installed_anywhere" not in out, out
