"""engine/seeds.py and engine/clean_search.py: the judge's own witness search, in a clean process.

The seeds (the tests' calls) come from the judged process: they read back as
data, types only.  The clean search imports the quest's file on the judge's
path, builds each mutant from the judge's plan, and replaces whatever the
mutation child said about a survivor it found no witness for.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.mutants import plan_mutants
from pytest_quest.engine.clean_search import judged, module_names, search_cleanly
from pytest_quest.engine.seeds import decode, encode

PROJECT = """\
from subprocess import Popen


class Cart:
    def __init__(self, items):
        self.items = list(items)

    def total(self):
        return sum(self.items)


def bulk_price(price, quantity):
    if quantity >= 10:
        return price - price * 10 // 100
    return price


def refuse(value):
    value = value + 1
    raise ValueError("never")
"""


@pytest.fixture
def project(tmp_path: Path) -> Any:
    (tmp_path / "src").mkdir()
    path = tmp_path / "src" / "seedproject.py"
    path.write_text(PROJECT)
    spec = importlib.util.spec_from_file_location("seedproject", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["seedproject"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["seedproject"]


def test_a_method_s_object_reads_back_when_its_class_is_defined_in_the_code_under_test(
    project: Any,
) -> None:
    cart = project.Cart([1, 2])
    (call,) = decode(encode([{"self": cart}]), lambda module: module == "seedproject")
    assert type(call["self"]) is project.Cart and call["self"].items == [1, 2]
    # Not a module of the code under test: the call is dropped.
    assert decode(encode([{"self": cart}]), lambda module: False) == []


class _Runs:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {self.marker}",))


def test_a_seed_that_would_call_a_function_or_a_class_imported_from_elsewhere_is_dropped(
    project: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    everything = lambda module: True  # noqa: E731
    assert decode(encode([{"x": _Runs(marker)}]), everything) == []
    # `seedproject.Popen` is a class, but subprocess's: never looked up through the project.
    stream = b"cseedproject\nPopen\n((S'touch'\nS'" + str(marker).encode() + b"'\nltR."
    assert decode([__import__("base64").b64encode(stream).decode()], everything) == []
    assert not marker.exists()
    # What does not read back as a dict of calls is no seed either.
    assert decode([encode([{"x": 1}])[0][:10], 5], everything) == []
    assert decode(encode([{"x": [1, 2.5, "a", None]}]), everything) == [{"x": [1, 2.5, "a", None]}]
    assert pickle.loads(__import__("base64").b64decode(encode([{"x": 1}])[0])) == {"x": 1}


def _survivor(
    source: str, start: int, line: int, search: dict[str, Any], operator: str = "", **more: Any
) -> dict[str, Any]:
    found = plan_mutants(source, start)
    (mutant,) = [m for m in found if m.line == line and operator in ("", m.operator)][:1]
    return {
        "status": "survived",
        "id": mutant.id,
        "line": mutant.line,
        "original": mutant.original,
        "mutated": mutant.mutated,
        "search": search,
        **more,
    }


CLEAN = {"calls": 5, "escapes": "", "problem": ""}


def test_the_child_s_no_difference_is_replaced_by_the_clean_search_s_witness(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    file = tmp_path / "src" / "seedproject.py"
    file.write_text(PROJECT)
    start = PROJECT.splitlines().index("def bulk_price(price, quantity):") + 1
    function = judged(file, start, None)
    assert function is not None
    # Seeds on which every call raises, and a child that says it found nothing.
    entry = _survivor(
        PROJECT, start, start + 2, dict(CLEAN),
        seeds=encode([{"price": "a", "quantity": 20}]), module="seedproject",
    )  # fmt: skip
    witness = {"call": "x", "mutant": "returns 1", "original": "returns 2"}
    witnessed = {"calls": 1, "escapes": "", "problem": "", "witness": witness}
    kept = _survivor(PROJECT, start, start + 1, witnessed)
    path = [str(tmp_path / "src"), str(tmp_path)]
    roots = [str(tmp_path / "src")]
    seconds = search_cleanly(
        [(function, [entry, kept])], path=path, roots=roots, cwd=tmp_path, timeout=60
    )
    assert seconds > 0
    assert "witness" in entry["search"], entry["search"]
    assert "seeds" not in entry and "module" not in entry
    assert kept["search"] is witnessed  # a witness the child found stays


def test_a_function_that_raises_on_every_call_holds_its_survivor(tmp_path: Path) -> None:
    file = tmp_path / "seedproject.py"
    file.write_text(PROJECT)
    start = PROJECT.splitlines().index("def refuse(value):") + 1
    function = judged(file, start, None)
    # `value + 2`: the same ValueError on every call, whatever the value.
    entry = _survivor(PROJECT, start, start + 1, dict(CLEAN), "constant.number")
    here = [str(tmp_path)]
    search_cleanly([(function, [entry])], path=here, roots=here, cwd=tmp_path, timeout=60)
    assert "witness" not in entry["search"]
    assert "raised on every call" in entry["search"]["problem"], entry["search"]
    assert "could not be read back" not in entry["search"]["problem"], entry["search"]
    # Calls of the tests that could not be sent here (an open object): the problem says so.
    entry = _survivor(PROJECT, start, start + 1, dict(CLEAN), "constant.number", seeds_seen=2)
    search_cleanly([(function, [entry])], path=here, roots=here, cwd=tmp_path, timeout=60)
    assert "2 calls of the tests could not be read back here" in entry["search"]["problem"]
    assert "seeds_seen" not in entry


def test_a_file_changed_after_the_judge_read_it_holds_its_survivors(tmp_path: Path) -> None:
    file = tmp_path / "seedproject.py"
    file.write_text(PROJECT)
    start = PROJECT.splitlines().index("def bulk_price(price, quantity):") + 1
    function = judged(file, start, None)
    entry = _survivor(PROJECT, start, start + 2, dict(CLEAN))
    file.write_text(PROJECT.replace("return price\n", "return 0\n"))
    here = [str(tmp_path)]
    search_cleanly([(function, [entry])], path=here, roots=here, cwd=tmp_path, timeout=60)
    assert entry["search"]["problem"] == "the file changed since the judge read it"


def test_module_names_come_from_the_judge_s_path_only(tmp_path: Path) -> None:
    file = tmp_path / "src" / "shop" / "pricing.py"
    names = module_names(str(file), [str(tmp_path), str(tmp_path / "src")])
    assert names == ["shop.pricing", "src.shop.pricing"]
    assert module_names(str(file), [str(tmp_path / "other")]) == []


def test_a_method_is_searched_on_the_object_a_test_gave_and_held_without_one(
    project: Any, tmp_path: Path
) -> None:
    file = tmp_path / "src" / "seedproject.py"
    start = PROJECT.splitlines().index("    def total(self):") + 1
    function = judged(file, start, None)
    given = _survivor(
        PROJECT, start, start + 1, dict(CLEAN), "body.return_none",
        seeds=encode([{"self": project.Cart([1, 2])}]), module="seedproject",
    )  # fmt: skip
    # No object to call the method on: nothing the search may invent.
    bare = _survivor(PROJECT, start, start + 1, dict(CLEAN), "return.changed", module="seedproject")
    src = [str(tmp_path / "src")]
    search_cleanly([(function, [given, bare])], path=src, roots=src, cwd=tmp_path, timeout=60)
    assert "witness" in given["search"], given["search"]
    assert given["search"]["witness"]["call"] == "Cart.total() on {'items': [1, 2]}"
    assert "witness" not in bare["search"] and bare["search"]["problem"], bare["search"]


SUPER = """
class Base:
    def __init__(self):
        self.ready = True


class Gauge(Base):
    def __init__(self, limit):
        super().__init__()
        if limit > 10:
            self.limit = 10
        else:
            self.limit = limit
"""


def test_a_method_calling_super_is_searched_on_its_own(tmp_path: Path) -> None:
    # Its code has a `__class__` free variable (the cell `super()` reads): it was refused
    # as a nested function, and every survivor of such a method was held without a search.
    file = tmp_path / "src" / "gauge.py"
    file.parent.mkdir()
    file.write_text(SUPER)
    start = SUPER.splitlines().index("    def __init__(self, limit):") + 1
    function = judged(file, start, None)
    assert function is not None
    spec = importlib.util.spec_from_file_location("gauge", file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gauge"] = module
    try:
        spec.loader.exec_module(module)
        seeds = encode([{"self": module.Gauge(3), "limit": 3}])
    finally:
        del sys.modules["gauge"]
    entry = _survivor(
        SUPER, start, start + 2, dict(CLEAN), "condition.true", seeds=seeds, module="gauge"
    )
    src = [str(tmp_path / "src")]
    search_cleanly([(function, [entry])], path=src, roots=src, cwd=tmp_path, timeout=60)
    assert "witness" in entry["search"], entry["search"]


def test_an_iterator_over_allowed_values_reads_back_at_its_position() -> None:
    # A lazy reader's `_it` (a list or text iterator, a deque cache): without it no seed of
    # the reader's methods read back, and an equivalent mutant was held for want of a call.
    from collections import deque

    items = iter([1, 2, 3])
    next(items)
    (call,) = decode(
        encode([{"it": items, "text": iter("ab"), "cache": deque([0])}]), lambda m: False
    )
    assert list(call["it"]) == [2, 3] and list(call["text"]) == ["a", "b"]
    assert call["cache"] == deque([0])
