"""What a submit runs: the changed test files naming the function first, every changed file
when those alone do not PASS (docs/gate.md, "What a submit runs")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import Project, qid, scanned_template

SOURCE = """
def double(x):
    return x * 2


def sign(x):
    if x > 0:
        return "positive"
    if x < 0:
        return "negative"
    return "zero"


def describe(x):
    return "number " + sign(x)
"""

TEST_DOUBLE = """
from pkg.calc import double


def test_double():
    assert double(2) == 4
    assert double(-3) == -6
"""

TEST_SIGN = """
from pkg.calc import sign


def test_sign():
    assert sign(5) == "positive"
    assert sign(-5) == "negative"
    assert sign(0) == "zero"
"""

# Reaches every line of `sign` through `describe`, and never names it.
TEST_DESCRIBE = """
from pkg.calc import describe


def test_describe():
    assert describe(5) == "number positive"
    assert describe(-5) == "number negative"
    assert describe(0) == "number zero"
"""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project, _ = scanned_template(tmp_path_factory, lambda p: p.source("calc", SOURCE))
    return project


@pytest.fixture
def project(template: Project, tmp_path: Path) -> Project:
    return Project(tmp_path / "p").fill_from(template)


def submit(project: Project, name: str) -> tuple[str, str]:
    """The verdict of a submit of calc's `name`, and its text output."""
    text = project.run("--quest", "submit", "--quest-id", qid("calc", name))
    out = text.stdout.str()
    verdict = out.strip().splitlines()[0].split(":")[0] if out.strip() else ""
    return verdict, out


def test_a_changed_file_not_naming_the_function_is_left_out_of_a_pass(project: Project) -> None:
    project.test("test_double", TEST_DOUBLE)
    project.test("test_sign", TEST_SIGN)
    verdict, out = submit(project, "sign")
    assert verdict == "PASS", out
    assert "left out: 1 changed test file not naming sign left out" in out, out


def test_a_file_reaching_the_function_without_naming_it_still_counts(project: Project) -> None:
    project.test("test_describe", TEST_DESCRIBE)
    verdict, out = submit(project, "sign")
    # Judged first on no changed file (none names it): not a PASS, so judged
    # again with every changed file, where describe's test covers and checks it.
    assert verdict == "PASS", out
    assert "left out:" not in out, out
