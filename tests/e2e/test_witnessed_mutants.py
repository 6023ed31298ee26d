"""Gate step 4 holds a surviving mutant against the tests only with a witness call.

An honest suite whose one survivor no input tells apart (a type dispatch whose
two branches give the same text) PASSes, the survivor listed as unwitnessed by
status (JSON and text); the same submission under ``mutants=strict`` FAILs as
the strict rule says.  A test that mocks the helper the function calls shows
no difference on its own calls; the witness search calls the function as its
source stands and the FAIL names the call.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.support.runner import run_pytest, run_quest

CELLS = '''\
def cell(value):
    """A table cell: the value's text, right-aligned in 6 characters."""
    if isinstance(value, str):
        text = value
    else:
        text = str(value)
    return text.rjust(6)


def discounted(price, percent):
    return price - price * percent // 100


def bulk_price(price, quantity):
    if quantity >= 10:
        return discounted(price, 10)
    return price
'''

HONEST = """\
from cells import cell


def test_cell():
    assert cell("ab") == "    ab"
    assert cell(42) == "    42"
"""

MOCKED = """\
import cells


def test_bulk(monkeypatch):
    monkeypatch.setattr(cells, "discounted", lambda price, percent: 7)
    assert cells.bulk_price(100, 20) == 7
    assert cells.bulk_price(100, 1) == 100
"""

CELL = "src/cells.py::cell"
BULK = "src/cells.py::bulk_price"


@pytest.fixture
def cells(tmp_path: Path) -> Path:
    root = tmp_path / "cells"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src" / "cells.py").write_text(CELLS)
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n'
        'quest_source = ["src"]\n\n[tool.coverage.run]\nbranch = true\n'
    )
    code, _, stderr = run_quest(root, "--quest", "scan")
    assert code == 0, stderr
    return root


def test_an_equivalent_mutant_no_longer_fails_an_honest_quest(cells: Path) -> None:
    (cells / "tests" / "test_cells.py").write_text(HONEST)
    said = run_pytest(cells, "--quest", "submit", "--quest-id", CELL)
    out = said.stdout.str()
    assert (said.ret, out.splitlines()[0].split(":")[0]) == (0, "PASS"), out
    # The PASS says what the gate did not hold against the tests, and where to see it.
    assert "1 surviving mutant no call told apart (unwitnessed" in out, out
    _, status, _ = run_quest(cells, "--quest-status")
    shown = {q["id"]: q.get("unwitnessed") for q in status["quests"]}
    (unwitnessed,) = shown[CELL]
    assert unwitnessed["operator"] == "condition.false" and unwitnessed["line"] == 3
    assert unwitnessed["mutated"] == "if False:"
    text = run_pytest(cells, "--quest-status").stdout.str()
    assert "(unwitnessed):" in text, text
    assert (
        f"src/cells.py:3: `if isinstance(value, str):` -> `if False:` (operator "
        f"condition.false, mutant {unwitnessed['id']})"
    ) in text


def test_strict_holds_the_equivalent_mutant_against_the_tests(cells: Path) -> None:
    (cells / "tests" / "test_cells.py").write_text(HONEST)
    code, data, _ = run_quest(
        cells, "--quest", "submit", "--quest-id", CELL, "--quest-mutants", "strict"
    )
    assert (code, data["verdict"], data["step"]) == (1, "FAIL", "4-mutants")
    (fact,) = data["quest"]["facts"]
    assert fact["check"] == "mutation.condition.false"
    assert "mutants=strict" in fact["message"] and "--quest-dispute" in fact["message"]
    assert not data["quest"].get("unwitnessed")


def test_a_test_that_mocks_the_helper_fails_with_the_real_call_as_witness(cells: Path) -> None:
    (cells / "tests" / "test_bulk.py").write_text(textwrap.dedent(MOCKED))
    code, data, stderr = run_quest(cells, "--quest", "submit", "--quest-id", BULK)
    assert (code, data["verdict"], data["step"]) == (1, "FAIL", "4-mutants"), stderr
    messages = [f["message"] for f in data["quest"]["facts"]]
    # Under the mock the function returns 7 with the mutant too; the real call does not.
    assert any(
        "with `bulk_price(100, 20)` the mutant returns `89` where the function returns `90`"
        in message
        for message in messages
    ), messages
    witnessed = [m for m in messages if "it is not equivalent" in m]
    assert witnessed and all("--quest-dispute" not in m for m in witnessed)
