"""A mutant that writes its module's globals leaves nothing for later runs to trip on.

A package's module ``__getattr__`` caches what it computes in ``globals()``
(toolz does this for ``__version__``).  Its mutant ``if True:`` then caches a
value under every name it is asked for, and ``hasattr``/``getattr`` with a
default read those names.  The audit checks every function in one child
process, so without the module's namespace put back after each mutant run,
the honest tests of the functions checked after it fail against their
unchanged code (``mutation.detects_run``) and reach none of their mutants
(``mutation.unreached``): every function REVIEW.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import Project, qid
from tests.support.runner import run_quest

pytestmark = pytest.mark.slow

PACKAGE = """\
def __getattr__(name):
    if name == "version":
        globals()[name] = "1.0"
        return "1.0"
    raise AttributeError(name)
"""

SETTINGS = """\
import pkg


def option(name, default):
    return getattr(pkg, name, default)
"""

TESTS = """\
import pkg
from pkg.settings import option


def test_version():
    assert pkg.version == "1.0"


def test_missing():
    assert not hasattr(pkg, "colour")


def test_option():
    assert option("colour", "red") == "red"
    assert option("shade", "dark") == "dark"
"""


def test_a_mutant_s_module_globals_do_not_outlive_its_run(tmp_path: Path) -> None:
    project = Project(tmp_path / "project")
    project.source("__init__", PACKAGE)
    project.source("settings", SETTINGS)
    project.test("test_settings", TESTS)
    code, data, stderr = run_quest(project.path, "--quest", "scan")
    assert code == 0, stderr
    option = qid("settings", "option")
    assert option in data["added_pass"]
    code, data, stderr = run_quest(project.path, "--quest", "audit")
    assert code == 0, stderr
    assert qid("__init__", "__getattr__") in data["audited"]
    assert option in data["audited"]
    found = {finding["id"]: finding["facts"] for finding in data["findings"]}
    # The honest test of `option` passes against its unchanged code and reaches its mutants.
    assert option not in found, found.get(option)
    # `__getattr__`'s own check: test_missing passes against the original in the probe runs.
    detects = [
        f
        for f in found.get(qid("__init__", "__getattr__"), [])
        if f["check"] == "mutation.detects_run"
    ]
    assert detects == []
