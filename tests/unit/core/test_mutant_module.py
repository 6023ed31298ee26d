"""core/mutant_module.py and find_function: the small module a mutant compiles from is the whole one's twin."""

from __future__ import annotations

import ast
import marshal
import textwrap
import types
from pathlib import Path

import pytest

from pytest_quest.core import mutant_module
from pytest_quest.core.mutant_module import FunctionTrees
from pytest_quest.core.mutants import (
    _FunctionNode,
    find_function,
    mutated_tree,
    plan_mutants,
    probe_tree,
)

PACKAGE = Path(__file__).resolve().parents[3] / "pytest_quest"

TRICKY = textwrap.dedent(
    '''
    """A module docstring."""
    from __future__ import annotations

    import functools

    LIMIT = 3


    class Outer:
        """Private names, super(), nested classes and closures."""

        __secret = 1

        def method(self, x: int) -> int:
            return self.__secret + super().__hash__() % 7 + x

        class Inner:
            @staticmethod
            @functools.lru_cache(maxsize=None)
            def deep(y: int) -> int:
                def helper(z: list[int]) -> int:
                    return z[0] + y
                return helper([y, LIMIT])

        if LIMIT > 2:
            def conditional(self) -> str:
                return "big" if LIMIT else "small"
        else:
            def conditional(self) -> str:
                return "small"


    def closure(a):
        total = 0

        def inner(b):
            nonlocal total
            total += a * b
            return total

        class Local:
            def m(self):
                return a + 1

        return inner, Local


    try:
        import json

        def guarded(text):
            return json.loads(text) or {}
    except ImportError:
        def guarded(text):
            return {}


    async def coro(n):
        for i in range(n):
            if i % 2:
                yield i
    '''
)


def _old_find_function(tree: ast.Module, start: int) -> tuple[list[ast.AST], ast.AST] | None:
    """find_function as it was: every node of the module visited."""

    def visit(node: ast.AST, chain: list[ast.AST]) -> tuple[list[ast.AST], ast.AST] | None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _FunctionNode):
                if child.lineno == start:
                    return chain, child
                found = visit(child, [*chain, child])
            else:
                found = visit(child, chain)
            if found is not None:
                return found
        return None

    return visit(tree, [])


def _sources() -> list[tuple[str, str]]:
    files = sorted(PACKAGE.rglob("*.py"))
    return [("tricky.py", TRICKY)] + [(str(f), f.read_text(encoding="utf-8")) for f in files]


def _defs(source: str) -> list[int]:
    return sorted(
        {node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, _FunctionNode)}
    )


def test_find_function_finds_what_the_whole_walk_found_in_every_module() -> None:
    checked = 0
    for _, source in _sources():
        tree = ast.parse(source)
        for line in [*_defs(source), 1, 2]:
            new, old = find_function(tree, line), _old_find_function(tree, line)
            if old is None:
                assert new is None
            else:
                assert new is not None
                assert [id(n) for n in new[0]] == [id(n) for n in old[0]]
                assert new[1] is old[1]
                checked += 1
    assert checked > 500


def _code(tree: ast.Module, filename: str, node: ast.AST) -> types.CodeType:
    decorators = getattr(node, "decorator_list", [])
    key = (node.name, min([node.lineno, *(d.lineno for d in decorators)]))  # type: ignore[attr-defined]
    found = mutant_module._code_named(compile(tree, filename, "exec", dont_inherit=True), key)
    assert found is not None
    return found


def _sample() -> list[tuple[str, str]]:
    chosen = ("engine/swap.py", "plugin/mutation_child.py")
    return [(n, s) for n, s in _sources() if n == "tricky.py" or n.endswith(chosen)]


@pytest.mark.parametrize("name, source", _sample())
def test_every_mutant_and_probe_compiles_to_the_whole_modules_code(name: str, source: str) -> None:
    whole = ast.parse(source)
    for line in _defs(source):
        trees = FunctionTrees(source, line, name)
        assert trees.reduced, f"{name}:{line} fell back to the whole module"
        node = find_function(whole, line)
        assert node is not None
        pairs = [(trees.probe(), probe_tree(source, line))]
        for mutant in plan_mutants(source, line, operators=None)[:4]:
            pairs.append((trees.mutant(mutant.index), mutated_tree(source, line, mutant.index)))
        for small, full in pairs:
            try:
                b = _code(full, name, node[1])
            except SyntaxError:  # a mutant the planner should not make: the same either way
                with pytest.raises(SyntaxError):
                    _code(small, name, node[1])
                continue
            a = _code(small, name, node[1])
            assert marshal.dumps(a, 2) == marshal.dumps(b, 2), f"{name}:{line}"


def test_a_function_that_compiles_otherwise_falls_back_to_the_whole_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    line = _defs(TRICKY)[0]
    # As if the small module's code differed: never relied on.
    monkeypatch.setattr(mutant_module, "_code_named", lambda code, key: code)
    trees = FunctionTrees(TRICKY, line, "tricky.py")
    assert not trees.reduced
    assert ast.dump(trees.probe()) == ast.dump(probe_tree(TRICKY, line))
    mutant = plan_mutants(TRICKY, line)[0]
    assert ast.dump(trees.mutant(mutant.index)) == ast.dump(
        mutated_tree(TRICKY, line, mutant.index)
    )


def test_a_source_that_does_not_compile_falls_back_too() -> None:
    source = "def f(x):\n    return x\n\ndef g():\n    nonlocal y\n"
    assert not FunctionTrees(source, 1, "bad.py").reduced


def test_a_swap_finds_its_live_functions_and_their_caches_in_one_walk(tmp_path: Path) -> None:
    import importlib.util

    from pytest_quest.engine.swap import CodeSwap, cache_wrappers_of

    source = textwrap.dedent(
        """
        import functools

        @functools.lru_cache(maxsize=None)
        def cached(x):
            return x + 1

        def plain(x):
            return x * 2
        """
    )
    path = tmp_path / "swapped_module.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("swapped_module", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for line in (5, 8):
        swap = CodeSwap(str(path), source, line)
        assert swap.prepare() == cache_wrappers_of([(str(path), source, line)])
        assert len(swap.outer_codes or []) == 1
        trees = FunctionTrees(source, line, str(path))
        assert swap.apply(trees.mutant(plan_mutants(source, line)[0].index)) == 1
        swap.restore()
    assert cache_wrappers_of([(str(path), source, 5)]) == [module.cached]
    assert module.plain(2) == 4


PATHS = """\
import os


class Outer:
    class Inner:
        @staticmethod
        def method():
            def nested():
                return 1
            return nested


if os.name:
    def branch():
        pass
else:
    def branch():
        pass
"""


def test_path_runs_from_the_module_down_to_the_function_on_the_line() -> None:
    tree = ast.parse(PATHS)
    path = mutant_module._path(tree, 8)
    assert path is not None
    assert [getattr(node, "name", type(node).__name__) for node in path] == [
        "Outer",
        "Inner",
        "method",
        "nested",
    ]
    method = mutant_module._path(tree, 7)
    assert method is not None
    assert [getattr(node, "name", "") for node in method] == ["Outer", "Inner", "method"]
    first = mutant_module._path(tree, 14)
    assert first is not None
    assert [type(node).__name__ for node in first] == ["If", "FunctionDef"]
    other = mutant_module._path(tree, 17)
    assert other is not None and other[-1].lineno == 17  # type: ignore[attr-defined]


def test_path_is_none_where_no_function_is_defined() -> None:
    tree = ast.parse(PATHS)
    assert mutant_module._path(tree, 1) is None
    assert mutant_module._path(tree, 9) is None  # inside a function, not a def
    assert mutant_module._path(tree, 4) is None  # a class line
    assert mutant_module._path(tree, 6) is None  # a decorator's line is not the def's
    assert mutant_module._path(tree, 100) is None


MATCHED = """\
match value:
    case 1:
        pass
    case 2:
        def chosen():
            pass
"""


def test_path_goes_on_past_a_statement_that_does_not_hold_the_function() -> None:
    # A match case carries no line numbers: each is looked into, the first in vain.
    path = mutant_module._path(ast.parse(MATCHED), 5)
    assert path is not None
    assert [type(node).__name__ for node in path] == ["Match", "match_case", "FunctionDef"]
    assert getattr(path[-1], "name", "") == "chosen"
