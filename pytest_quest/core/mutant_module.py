"""What a mutant is compiled from in the mutation child: the function in as little of its module as needed.

Compiling the whole module for each mutant cost more than many a test run.
A function's code depends only on its body, its enclosing scopes and the
module's imports, so a module of the imports, the enclosing classes and the
outermost enclosing function compiles it to the same code.  That is checked
once per function (same marshalled code both ways); where it fails, every
mutant is compiled from the whole module.
"""

from __future__ import annotations

import ast
import copy
import functools
import marshal
import pickle
import types

from pytest_quest.core.mutant_ast import parsed
from pytest_quest.core.mutants import (
    _FunctionNode,
    _statements,
    add_probe_mark,
    find_function,
    mutated_tree,
)
from pytest_quest.core.mutants import probe_tree as whole_probe_tree
from pytest_quest.core.operators import candidates


def _path(tree: ast.Module, start: int) -> list[ast.AST] | None:
    """The statements from the module down to the function defined on line `start` (it last)."""

    def visit(node: ast.AST, path: list[ast.AST]) -> list[ast.AST] | None:
        for child in _statements(node, start):
            if isinstance(child, _FunctionNode) and child.lineno == start:
                return [*path, child]
            found = visit(child, [*path, child])
            if found is not None:
                return found
        return None

    return visit(tree, [])


def _code_named(code: types.CodeType, key: tuple[str, int]) -> types.CodeType | None:
    """The code object in `code`'s constants (at any depth) named and placed as `key`."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if (const.co_name, const.co_firstlineno) == key:
                return const
            found = _code_named(const, key)
            if found is not None:
                return found
    return None


def _is_future(node: ast.AST) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _module_imports(tree: ast.Module) -> list[ast.AST]:
    """The import statements of the module's own scope (in ``if``/``try`` blocks too).

    CPython compiles ``name.attr(...)`` otherwise where `name` was imported
    at module level (3.11: no method call for a module's function).
    """
    found: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop(0)
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, name, None) or ():
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    found.append(child)
                elif isinstance(child, ast.AST) and not isinstance(
                    child, (*_FunctionNode, ast.ClassDef, ast.Lambda)
                ):
                    todo.append(child)
    return found


class FunctionTrees:
    """The modules to compile a function's mutants and probes from (source parsed once)."""

    def __init__(self, source: str, start: int, filename: str = "<mutant>") -> None:
        self.source, self.start = source, start
        self.lines = source.splitlines()
        self.tree = parsed(source)  # read only: `_module` copies what it keeps
        self._copied: bytes | None = None
        self.path = _path(self.tree, start)
        self.reduced = self.path is not None and self._compiles_the_same(filename)

    def mutant(self, index: int, *, mark: bool = True) -> ast.Module:
        """The module with mutant number `index` applied (`mark`: with the reach mark)."""
        if not self.reduced:
            return mutated_tree(self.source, self.start, index, mark=mark)
        module, function = self._module()
        list(candidates(function, self.lines))[index].apply(mark)
        return ast.fix_missing_locations(module)

    def probe(self) -> ast.Module:
        """The module with the function unchanged but for the reach mark (core.mutants.probe_tree)."""
        if not self.reduced:
            return whole_probe_tree(self.source, self.start)
        module, function = self._module()
        add_probe_mark(function)
        return ast.fix_missing_locations(module)

    def _module(self) -> tuple[ast.Module, ast.AST]:
        """A fresh small module holding the function, and the function in it."""
        assert self.path is not None
        outer = next(i for i, node in enumerate(self.path) if isinstance(node, _FunctionNode))
        if self._copied is None:
            imports = sorted(_module_imports(self.tree), key=lambda node: not _is_future(node))
            # Fresh copies from bytes: a fifth of `copy.deepcopy`'s time, the same trees.
            self._copied = pickle.dumps((imports, self.path[outer]), pickle.HIGHEST_PROTOCOL)
        imports, kept = pickle.loads(self._copied)  # stable sort above: the futures first
        found = find_function(ast.Module(body=[kept], type_ignores=[]), self.start)
        assert found is not None
        for node in reversed(self.path[:outer]):
            if isinstance(node, ast.ClassDef):
                holder = copy.copy(node)
                holder.body = [kept]
                kept = holder
        return ast.Module(body=[*imports, kept], type_ignores=[]), found[1]

    def _compiles_the_same(self, filename: str) -> bool:
        assert self.path is not None
        function = self.path[-1]
        decorators = getattr(function, "decorator_list", [])
        key = (function.name, min([function.lineno, *(d.lineno for d in decorators)]))  # type: ignore[attr-defined]
        try:
            whole = _whole(self.source, filename)
            module, _ = self._module()
            small = compile(ast.fix_missing_locations(module), filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return False
        a, b = _code_named(whole, key), _code_named(small, key)
        return a is not None and b is not None and marshal.dumps(a, 2) == marshal.dumps(b, 2)


@functools.lru_cache(maxsize=4)
def _whole(source: str, filename: str) -> types.CodeType:
    """The whole module compiled, once for all its functions."""
    return compile(parsed(source), filename, "exec", dont_inherit=True)
