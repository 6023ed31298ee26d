"""A module-level cache the tests fill does not hide a mutant that a fresh process would see.

The mutation child runs every mutant in one process after the baseline runs:
a dict the module fills on first use (translations, parsed settings) holds
the original's results, so a mutant of the code that fills it is never run
and "survives", while each test, run alone in a fresh process, kills it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.projects import Project, scanned_template

LOAD = "src/pkg/lazy.py::load"

LAZY = """\
_LOADED = {}


def load(name):
    if name not in _LOADED:
        _LOADED[name] = name.upper() + "!"
    return _LOADED[name]
"""

# Honest: the exact result, the first call and a cached one.
GOOD = """\
from pkg.lazy import load


def test_load_once():
    assert load("tea") == "TEA!"


def test_load_twice():
    assert load("tea") == "TEA!"
    assert load("tea") == "TEA!"
"""

# Loose: runs every line, checks nothing of the value.
LOOSE = """\
from pkg.lazy import load


def test_load_runs():
    assert load("tea")
    assert load("tea")
"""

# A session fixture that registers into the module's dict: the tests depend on it.
REGISTERED = """\
import pytest

from pkg import lazy
from pkg.lazy import load


@pytest.fixture(scope="session", autouse=True)
def preloaded():
    lazy._LOADED["house"] = "HOME!"
    yield


def test_load_preloaded():
    assert load("house") == "HOME!"
    assert load("tea") == "TEA!"
"""


@pytest.fixture(scope="module")
def lazy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, Any]]:
    return scanned_template(tmp_path_factory, lambda project: project.source("lazy", LAZY))


def _submit(project: Project, template: Project, test: str) -> dict[str, Any]:
    project.fill_from(template)
    project.test("test_lazy", test)
    _, data = project.run_json("--quest", "submit", "--quest-id", LOAD)
    return data


def _checks(data: dict[str, Any]) -> list[str]:
    return [fact["check"] for fact in data["quest"]["facts"]]


def test_a_cache_filled_by_the_baseline_hides_no_mutant(
    project: Project, lazy: tuple[Project, dict[str, Any]]
) -> None:
    data = _submit(project, lazy[0], GOOD)
    assert (data["verdict"], _checks(data)) == ("PASS", []), data["quest"]["facts"]


def test_a_loose_test_of_a_cached_function_still_fails(
    project: Project, lazy: tuple[Project, dict[str, Any]]
) -> None:
    data = _submit(project, lazy[0], LOOSE)
    assert data["verdict"] == "FAIL", data["quest"]["facts"]
    assert "mutation.constant.string" in _checks(data), data["quest"]["facts"]


def test_what_a_session_fixture_put_in_the_cache_stays(
    project: Project, lazy: tuple[Project, dict[str, Any]]
) -> None:
    # Put back as collection left it, the dict would lose "house" and the
    # test would fail against the original: the mutant runs go on from the
    # state the baseline left instead (never a probe failing: detects_run).
    # There `if False` survives on the cached "tea", a limit docs/gate.md names.
    data = _submit(project, lazy[0], REGISTERED)
    assert data["verdict"] == "FAIL", data["quest"]["facts"]
    assert _checks(data) == ["mutation.condition.false"], data["quest"]["facts"]
