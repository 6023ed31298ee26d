"""Planning the mutants of one function: which small changes, where, and the mutated AST.

Pure and deterministic (stdlib only); docs/gate.md (step 4) says why these mutants.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

# Above this many mutants per function the check costs more than it tells.
MAX_MUTANTS = 16

# The name mutated code calls to change a returned value (put in builtins in
# the child only, so the mutated code object finds it from any module).
CHANGED = "pytest_quest_changed"

# Mutated code calls this where the change is, to tell whether a test ran it.
REACHED = "pytest_quest_reached"

_FunctionNode = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Mutant:
    """One planned change of a function: where, what, and into what."""

    index: int
    operator: str
    line: int
    original: str
    mutated: str


def changed_value(value: Any) -> Any:
    """Another value of the same kind as `value`, never equal to it.

    Used by ``return.changed`` mutants at run time (the type of a returned
    value is only known then).
    """
    if isinstance(value, bool):
        return not value
    # Numbers move by at least their own size: `pytest.approx` (relative
    # tolerance) cannot take the changed value for the original.
    if isinstance(value, int):
        return value + max(1, abs(value))
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return 0.0
        return value + max(1.0, abs(value))
    if isinstance(value, complex):
        return value + 1
    if isinstance(value, str):
        return "" if value else "pytest-quest-mutant"
    if isinstance(value, bytes):
        return b"" if value else b"pytest-quest-mutant"
    if isinstance(value, list):
        return value[:-1] if value else [None]
    if isinstance(value, tuple):
        return value[:-1] if value else (None,)
    if isinstance(value, dict):
        if not value:
            return {None: None}
        keys = list(value)[:-1]
        return {key: value[key] for key in keys}
    if isinstance(value, (set, frozenset)):
        if not value:
            return type(value)([None])
        return type(value)(list(value)[:-1])
    return object()


def find_function(tree: ast.Module, start: int) -> tuple[list[ast.AST], ast.AST] | None:
    """The function defined on line `start` and its enclosing functions (outermost first)."""

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


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `function`'s own body in source order, not entering nested scopes."""

    def walk(node: ast.AST) -> Iterator[ast.AST]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (*_FunctionNode, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(
                child, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
            ):  # their conditions are a filter, not a branch of ours
                continue
            yield child
            yield from walk(child)

    for statement in function.body:  # type: ignore[attr-defined]
        if isinstance(statement, (*_FunctionNode, ast.ClassDef)):
            continue
        yield statement
        yield from walk(statement)


def _exits(body: list[ast.stmt]) -> bool:
    """Whether `body` can leave its block early (return, raise, break, continue)."""
    block = ast.Module(body=body, type_ignores=[])
    fake = ast.FunctionDef(
        name="_",
        args=ast.arguments([], [], None, [], [], None, []),
        body=block.body,
        decorator_list=[],
    )
    return any(
        isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue))
        for node in _own_nodes(fake)
    )


def _is_none(node: ast.AST | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def _is_generator(function: ast.AST) -> bool:
    return any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in _own_nodes(function))


def _body_start(function: ast.AST) -> int:
    """Index of the first statement after the docstring."""
    body = function.body  # type: ignore[attr-defined]
    first = body[0]
    if (
        len(body) > 1
        and isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return 1
    return 0


def _line_text(lines: list[str], line: int) -> str:
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _candidates(
    function: ast.AST, lines: list[str]
) -> Iterator[tuple[str, ast.AST, int, str, str]]:
    """(operator, node, line, original, mutated) for every mutant of `function`, in order."""
    body = function.body  # type: ignore[attr-defined]
    rest = body[_body_start(function) :]
    generator = _is_generator(function)
    returns_value = any(
        isinstance(node, ast.Return) and not _is_none(node.value) for node in _own_nodes(function)
    )
    trivial = len(rest) == 1 and (
        isinstance(rest[0], ast.Pass)
        or (isinstance(rest[0], ast.Return) and _is_none(rest[0].value))
    )
    if rest and not trivial:
        first = rest[0]
        operator = "body.return_none" if returns_value and not generator else "body.skip"
        yield operator, first, first.lineno, _line_text(lines, first.lineno), "return None"
    for node in _own_nodes(function):
        if isinstance(node, ast.Return) and not generator and not _is_none(node.value):
            value = ast.unparse(node.value)  # type: ignore[arg-type]
            yield (
                "return.changed",
                node,
                node.lineno,
                _line_text(lines, node.lineno),
                f"return {CHANGED}({value})",
            )
        elif isinstance(node, (ast.If, ast.IfExp)):
            if isinstance(node.test, ast.Constant):
                continue
            if isinstance(node, ast.If):
                original = _line_text(lines, node.lineno)
                keyword = "elif" if original.startswith("elif") else "if"
                adjustment = not node.orelse and not _exits(node.body)
                if not adjustment:
                    yield "condition.true", node, node.lineno, original, f"{keyword} True:"
                fast_path = (
                    not node.orelse
                    and len(node.body) == 1
                    and isinstance(node.body[0], (ast.Return, ast.Raise))
                )
                if not fast_path:
                    yield "condition.false", node, node.lineno, original, f"{keyword} False:"
            else:
                original = ast.unparse(node)
                for forced in (True, False):
                    mutated = ast.unparse(
                        ast.IfExp(test=ast.Constant(forced), body=node.body, orelse=node.orelse)
                    )
                    yield f"condition.{str(forced).lower()}", node, node.lineno, original, mutated


def plan_mutants(source: str, start: int) -> list[Mutant]:
    """The mutants of the function defined on line `start` of `source`, in a fixed order.

    Deterministic: the same source gives the same list.  At most `MAX_MUTANTS`.
    """
    tree = ast.parse(source)
    found = find_function(tree, start)
    if found is None:
        return []
    lines = source.splitlines()
    mutants = []
    for index, (operator, _, line, original, mutated) in enumerate(_candidates(found[1], lines)):
        if index >= MAX_MUTANTS:
            break
        mutants.append(Mutant(index, operator, line, original, mutated))
    return mutants


def mutated_tree(source: str, start: int, index: int) -> ast.Module:
    """The module `source` with mutant number `index` of the function on line `start` applied."""
    tree = ast.parse(source)
    found = find_function(tree, start)
    assert found is not None
    function = found[1]
    lines = source.splitlines()
    operator, node, *_ = list(_candidates(function, lines))[index]
    if operator.startswith("body."):
        body = function.body  # type: ignore[attr-defined]
        skip = ast.Return(value=_reached(ast.Constant(None)))
        ast.copy_location(skip, node)
        # Inserted, not replacing: the body's names stay, so the code object
        # keeps its free and cell variables and can be swapped in.
        body.insert(body.index(node), skip)
    elif operator == "return.changed":
        assert isinstance(node, ast.Return) and node.value is not None
        call = ast.Call(func=ast.Name(id=CHANGED, ctx=ast.Load()), args=[node.value], keywords=[])
        node.value = ast.copy_location(call, node.value)
    else:
        assert isinstance(node, (ast.If, ast.IfExp))
        forced = _reached(ast.Constant(operator == "condition.true"))
        node.test = ast.copy_location(forced, node.test)
    return ast.fix_missing_locations(tree)


def probe_tree(source: str, start: int) -> ast.Module:
    """The module `source` with the function on line `start` unchanged but for a reach mark.

    The mark (a call of `REACHED`) is its first statement after the
    docstring: swapped in, it tells which tests run the original function.
    """
    tree = ast.parse(source)
    found = find_function(tree, start)
    assert found is not None
    function = found[1]
    body = function.body  # type: ignore[attr-defined]
    index = _body_start(function)
    mark = ast.Expr(value=_reached(ast.Constant(None)))
    ast.copy_location(mark, body[index])
    body.insert(index, mark)
    return ast.fix_missing_locations(tree)


def _reached(value: ast.expr) -> ast.expr:
    return ast.Call(func=ast.Name(id=REACHED, ctx=ast.Load()), args=[value], keywords=[])


__all__ = [
    "CHANGED",
    "MAX_MUTANTS",
    "REACHED",
    "Mutant",
    "changed_value",
    "find_function",
    "mutated_tree",
    "plan_mutants",
    "probe_tree",
]
