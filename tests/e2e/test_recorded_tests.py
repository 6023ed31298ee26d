"""What a submit runs of what the scan recorded: its covering tests, its test folders."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.projects import CALC, SIGN, TEST_SIGN, Project, scanned_template

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
