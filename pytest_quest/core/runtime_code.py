"""Code the quests do not see: functions made outside a ``def`` at module or class level.

Lambdas bound at module or class level, ``exec``/``eval``/``compile``/
``types.FunctionType`` calls and ``functools.partial``: `runtime_lines` finds
them for the changed-lines rule (app/since.py).  Pure: source in, lines out.
"""

from __future__ import annotations

import ast

#: What a line holds: a lambda outside any def, code built at run time, a bound partial.
LAMBDA = "lambda"
BUILT = "built"
PARTIAL = "partial"

_BUILDERS = frozenset({"exec", "eval", "compile", "FunctionType", "LambdaType", "MethodType"})
_PARTIALS = frozenset({"partial", "partialmethod"})


def _called_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def runtime_lines(source: str) -> dict[int, tuple[str, str]]:
    """Line -> (kind, what) for every line of code a quest does not cover (see the module).

    A lambda inside a ``def`` belongs to that def's quest and is left out; code
    built at run time is named wherever it is (a def that calls ``exec`` does
    not measure what ``exec`` runs).  A source that does not parse has none.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[int, tuple[str, str]] = {}

    def mark(node: ast.AST, kind: str, what: str) -> None:
        first = getattr(node, "lineno", 0)
        last = getattr(node, "end_lineno", None) or first
        for line in range(first, last + 1):
            if line not in found or found[line][0] == PARTIAL:
                found[line] = (kind, what)

    def visit(node: ast.AST, in_def: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_def or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Lambda) and not in_def:
                mark(child, LAMBDA, "a lambda bound outside any def")
            elif isinstance(child, ast.Call):
                name = _called_name(child)
                if name in _BUILDERS:
                    mark(child, BUILT, f"code built at run time ({name})")
                elif name in _PARTIALS and not in_def:
                    mark(child, PARTIAL, f"a callable bound at run time ({name})")
            visit(child, inside)

    visit(tree, False)
    return found


def statement_lines(source: str) -> frozenset[int]:
    """The lines a statement starts on (docstrings too); none for a source that does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset(node.lineno for node in ast.walk(tree) if isinstance(node, ast.stmt))
