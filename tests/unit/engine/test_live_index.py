"""One walk of the heap for the live functions of every function a mutation child checks."""

from __future__ import annotations

import builtins
import gc
import importlib.util
import sys
import types
from pathlib import Path

from pytest_quest.core.mutants import mutated_tree
from pytest_quest.engine.swap import CodeSwap, LiveIndex

SOURCE = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x * 2\n"


def load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_walk_serves_every_function_until_a_module_is_imported(tmp_path: Path) -> None:
    path = tmp_path / "live_index_mod.py"
    path.write_text(SOURCE)
    module = load(path, "live_index_mod")
    index = LiveIndex([str(path)])
    swaps = [CodeSwap(str(path), SOURCE, 1), CodeSwap(str(path), SOURCE, 5)]
    for swap in swaps:
        swap.prepare(index)
    assert index.walks == 1  # before: one walk of the heap per function
    builtins.pytest_quest_changed = lambda value: None  # type: ignore[attr-defined]
    builtins.pytest_quest_reached = lambda value: value  # type: ignore[attr-defined]
    try:
        assert swaps[0].apply(mutated_tree(SOURCE, 1, 0)) == 1  # mutant 0: its result changed
        assert module.f(1) != 2
        swaps[0].restore()
        assert module.f(1) == 2
        # A module imported since holds functions the walk could not see: walked again.
        other = load(path, "live_index_mod_again")
        sys.modules["live_index_mod_again"] = other
        try:
            again = CodeSwap(str(path), SOURCE, 1)
            again.prepare(index)
            assert index.walks == 2
            assert again.apply(mutated_tree(SOURCE, 1, 0)) == 2  # both copies of f
            assert other.f(1) != 2 and module.f(1) != 2
            again.restore()
            assert other.f(1) == 2 and module.f(1) == 2
        finally:
            del sys.modules["live_index_mod_again"]
    finally:
        del builtins.pytest_quest_changed  # type: ignore[attr-defined]
        del builtins.pytest_quest_reached  # type: ignore[attr-defined]


def test_the_index_holds_no_function_alive(tmp_path: Path) -> None:
    path = tmp_path / "live_index_gone.py"
    path.write_text(SOURCE)
    module = load(path, "live_index_gone")
    index = LiveIndex([str(path)])
    assert len(index.functions(str(path), [("f", 1), ("g", 5)])) == 2
    del module
    gc.collect()
    assert index.functions(str(path), [("f", 1), ("g", 5)]) == []


CACHED = (
    "import functools\n\n\n@functools.lru_cache(maxsize=None)\ndef f(x):\n    return x + 1\n\n\n"
    "@functools.cache\ndef g(x):\n    return x * 2\n\n\ndef h(x):\n    return x\n"
)


def test_the_cache_wrappers_are_those_one_walk_per_function_found(tmp_path: Path) -> None:
    path = tmp_path / "live_index_cached.py"
    path.write_text(CACHED)
    module = load(path, "live_index_cached")
    index = LiveIndex([str(path)])
    found = {}
    for start in (5, 10, 14):
        with_index = CodeSwap(str(path), CACHED, start).prepare(index)
        alone = CodeSwap(str(path), CACHED, start).prepare()
        assert [id(w) for w in with_index] == [id(w) for w in alone]
        found[start] = with_index
    assert found[5] == [module.f] and found[10] == [module.g] and found[14] == []
    assert index.walks == 1


NESTED = "def outer(x):\n    def inner(y):\n        return y + 1\n\n    return inner(x)\n"


def test_a_nested_function_is_swapped_through_its_outer_function_from_the_index(
    tmp_path: Path,
) -> None:
    # A nested function's code lives in its outer function's constants: the index finds the
    # outer function, whose code is what `apply` swaps, as a walk of its own does.
    path = tmp_path / "live_index_nested.py"
    path.write_text(NESTED)
    module = load(path, "live_index_nested")
    index = LiveIndex([str(path)])
    swap = CodeSwap(str(path), NESTED, 2)
    assert swap.prepare(index) == CodeSwap(str(path), NESTED, 2).prepare() == []
    assert swap.outer_codes == [module.outer.__code__]
    builtins.pytest_quest_changed = lambda value: None  # type: ignore[attr-defined]
    builtins.pytest_quest_reached = lambda value: value  # type: ignore[attr-defined]
    try:
        assert module.outer(1) == 2
        assert swap.apply(mutated_tree(NESTED, 2, 0)) == 1
        assert module.outer(1) != 2
        swap.restore()
        assert module.outer(1) == 2
    finally:
        del builtins.pytest_quest_changed  # type: ignore[attr-defined]
        del builtins.pytest_quest_reached  # type: ignore[attr-defined]
