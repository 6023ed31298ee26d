"""No judged code decides that a surviving mutant is unwitnessed.

Gate step 4 lets a survivor through only when the witness search ran clean
(no witness, no escaping effect, calls tried).  Each attack below is a
submission with no real assertion on the mutated line that made the search
report "no difference": by patching the mutation child's functions through
frame globals or `sys.modules`, by leaving a global of the code under test
patched, or by handing the search only seeds on which every call raises.
Each must end FAIL with a witness: the search runs in a clean process that
loads no test code, imports the code under test on the judge's path, and
draws values of its own besides the tests' seeds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_witnessed_mutants import BULK, CELL, HONEST, cells  # noqa: F401
from tests.support.runner import run_quest

pytestmark = pytest.mark.slow

FRAME_GLOBALS = """\
from cells import bulk_price, discounted


def _up():
    try:
        raise KeyError
    except KeyError as e:
        fr = e.__traceback__.tb_frame
    while fr is not None:
        g = getattr(fr, "f_" + "globals")
        if "searched" in g and "observed" in g:
            g["observed"] = lambda *a, **k: None
            g["searched"] = lambda *a, **k: {"calls": 5, "escapes": "", "problem": ""}
        fr = getattr(fr, "f_" + "back")


def test_bulk():
    _up()
    bulk_price(100, 20)
    bulk_price(100, 1)
    discounted(100, 10)
"""

# The child's search silenced, and the seeds it hands the judge replaced by a pickle
# that runs a command when unpickled: the clean search reads seeds as data only.
HOSTILE_SEEDS = """\
import base64
import pickle

from cells import bulk_price


class _Runs:
    def __reduce__(self):
        return (getattr(__import__("o" + "s"), "sys" + "tem"), ("touch MARKER",))


def _up():
    seeds = [base64.b64encode(pickle.dumps({"price": _Runs(), "quantity": 1})).decode()]
    try:
        raise KeyError
    except KeyError as e:
        fr = e.__traceback__.tb_frame
    while fr is not None:
        g = getattr(fr, "f_" + "globals")
        if "searched" in g and "observed" in g:
            g["observed"] = lambda *a, **k: None
            g["searched"] = lambda *a, **k: {"calls": 5, "escapes": "", "problem": ""}
            g["encode"] = lambda *a, **k: seeds
        fr = getattr(fr, "f_" + "back")


def test_bulk():
    _up()
    bulk_price(100, 20)
    bulk_price(100, 1)
"""

# A test that mocks the helper (its own calls show no difference), and the
# search reached through the module table, replaced by one that finds nothing.
SEARCH_REPLACED = """\
import cells


def _replace():
    table = dict(getattr(__import__("s" + "ys"), "mod" + "ules"))
    by_end = {name.rpartition(".")[2]: module for name, module in table.items()}
    found = by_end["witness" + "_search"]
    child = by_end["observe" + "_child"]
    child.search = lambda *a, **k: found.Search(calls=5)
    found.search = child.search


def test_bulk(monkeypatch):
    _replace()
    monkeypatch.setattr(cells, "discounted", lambda price, percent: 7)
    assert cells.bulk_price(100, 20) == 7
    assert cells.bulk_price(100, 1) == 100
"""

# The function's helper left patched for the rest of the process: every call the
# search makes there returns the helper's constant, original and mutant alike.
LEFT_PATCHED = """\
import cells

cells.discounted = lambda price, percent: 7


def test_bulk():
    assert cells.bulk_price(100, 20) == 7
    assert cells.bulk_price(100, 1) == 100
"""

# The first test that reaches the discount line hands the search only text prices:
# the original and every mutant of that line raise the same TypeError on each call.
RAISING_SEEDS = """\
import pytest

from cells import bulk_price


def test_a_text_price():
    with pytest.raises(TypeError):
        bulk_price("a", 20)


def test_b_numbers():
    assert bulk_price(100, 1) == 100
    assert bulk_price(100, 9) == 100
    assert 0 < bulk_price(100, 10) < 100
"""


@pytest.mark.parametrize(
    "tests",
    [FRAME_GLOBALS, SEARCH_REPLACED, LEFT_PATCHED, RAISING_SEEDS, HOSTILE_SEEDS],
    ids=["frame-globals", "search-replaced", "left-patched", "raising-seeds", "hostile-seeds"],
)
def test_a_search_the_tests_can_reach_cannot_make_a_survivor_unwitnessed(
    cells: Path,  # noqa: F811
    tests: str,
) -> None:
    marker = cells.parent / "ran-from-a-seed"
    (cells / "tests" / "test_bulk.py").write_text(tests.replace("MARKER", str(marker)))
    code, data, stderr = run_quest(cells, "--quest", "submit", "--quest-id", BULK)
    assert not marker.exists()
    assert (code, data["verdict"], data["step"]) == (1, "FAIL", "4-mutants"), (
        data["quest"].get("facts"),
        stderr,
    )
    messages = [f["message"] for f in data["quest"]["facts"]]
    assert any("where the function returns" in m for m in messages), messages
    assert not data["quest"].get("unwitnessed")


def test_the_equivalent_mutant_stays_unwitnessed_in_the_clean_search(
    cells: Path,  # noqa: F811
) -> None:
    (cells / "tests" / "test_cells.py").write_text(HONEST)
    code, data, stderr = run_quest(cells, "--quest", "submit", "--quest-id", CELL)
    assert (code, data["verdict"]) == (0, "PASS"), (data["quest"]["facts"], stderr)
    (unwitnessed,) = data["quest"]["unwitnessed"]
    assert unwitnessed["mutated"] == "if False:"
