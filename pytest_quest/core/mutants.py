"""Planning the mutants of one function: which small changes, where, and the mutated AST.

Pure and deterministic (stdlib only); the operators are in core/operators.py,
docs/gate.md (step 4) says why these; their false alarms are measured in
benchmarks/research/2026-12-gate-research.md.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import math
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pytest_quest.core.mutant_ast import Candidate, body_start, parsed, reached
from pytest_quest.core.operators import ALL_OPERATORS, EXTREME, candidates

# Above this many mutants per function the check costs more than it tells.
MAX_MUTANTS = 24

#: The operators a new gate policy records (measured: docs/gate.md, step 4);
#: the others of `ALL_OPERATORS` are opt-in (``--quest-policy operators=...``).
DEFAULT_OPERATORS = (
    *EXTREME,
    "arith.replace",
    "boolop.swap",
    "call.remove",
    "compare.negate",
    "constant.number",
    "constant.string",
    "raise.type",
    "slice.bounds",
)

_FunctionNode = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Mutant:
    """One planned change of a function: where, what, and into what.

    `index` is its position among all the function's candidates (how the
    child applies it again); `id` is stable for the same function text
    wherever the function sits in its file (the dispute names it).
    """

    index: int
    operator: str
    line: int
    original: str
    mutated: str
    id: str = ""


def changed_value(value: Any) -> Any:
    """Another value of the same kind as `value`, never equal to it.

    Used by ``return.changed`` mutants at run time (the type of a returned
    value is only known then).
    """
    if isinstance(value, bool):
        return not value
    # Numbers move by at least their own size: `pytest.approx` (relative
    # tolerance) cannot take the changed value for the original.  An int
    # goes to the other side of zero, in reverse order (`-v - 1`): a sort
    # key or a priority changed in the same order (`2 * v`) sorts the same
    # (boltons' FilePerms `sort_key` was an equivalent mutant so).
    if isinstance(value, int):
        return -value - 1
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


# The fields that hold statements (a ``def`` is a statement: never inside an expression).
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(node: ast.AST, start: int) -> Iterator[ast.AST]:
    """The statements (and handlers, match cases) right under `node` whose lines hold `start`."""
    if isinstance(node, (ast.Lambda, ast.IfExp)):
        return  # an expression's ``body``: no statement in there
    for name in _BODIES:
        for child in getattr(node, name, None) or ():
            if not isinstance(child, ast.AST):
                continue
            first = getattr(child, "lineno", None)
            if first is not None:
                decorators = getattr(child, "decorator_list", None) or ()
                first = min([first, *(d.lineno for d in decorators)])
                last = getattr(child, "end_lineno", None) or first
                if not first <= start <= last:
                    continue
            yield child


def find_function(tree: ast.Module, start: int) -> tuple[list[ast.AST], ast.AST] | None:
    """The function defined on line `start` and its enclosing functions (outermost first).

    Only the statements whose lines hold `start` are looked into.
    """

    def visit(node: ast.AST, chain: list[ast.AST]) -> tuple[list[ast.AST], ast.AST] | None:
        for child in _statements(node, start):
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


def mutant_id(operator: str, offset: int, original: str, mutated: str, occurrence: int) -> str:
    """A short id from what the mutant is and where in its function (not the file)."""
    text = "\0".join((operator, str(offset), original, mutated, str(occurrence)))
    return "m" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _ids(found: list[Candidate], first: int) -> list[str]:
    seen: dict[tuple[str, int, str, str], int] = {}
    ids = []
    for c in found:
        key = (c.operator, c.line - first, c.original, c.mutated)
        seen[key] = seen.get(key, -1) + 1
        ids.append(mutant_id(*key, seen[key]))
    return ids


def _standalone(function: ast.AST) -> types.CodeType | None:
    """`function` compiled on its own (free names become globals: the same for a mutant)."""
    node = copy.copy(function)
    node.decorator_list = []  # type: ignore[attr-defined]
    module = ast.fix_missing_locations(ast.Module(body=[node], type_ignores=[]))  # type: ignore[list-item]
    try:
        code = compile(module, "<mutant>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None  # `nonlocal` outside its scope, say: not compared
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            return const
    return None


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Same bytecode, names and constants, nested code objects compared the same way."""
    if (a.co_code, a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars) != (
        b.co_code,
        b.co_names,
        b.co_varnames,
        b.co_freevars,
        b.co_cellvars,
    ) or getattr(a, "co_exceptiontable", b"") != getattr(b, "co_exceptiontable", b""):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not _same_code(x, y):
                return False
        elif type(x) is not type(y) or repr(x) != repr(y):
            return False
    return True


def _equivalent(function: ast.AST, lines: list[str], index: int, original: types.CodeType) -> bool:
    """Whether candidate `index` compiles to the same code as the function (provably the same)."""
    twin = copy.deepcopy(function)
    list(candidates(twin, lines))[index].apply(False)
    mutated = _standalone(twin)
    return mutated is not None and _same_code(mutated, original)


# In `__hash__`, mutants that keep it a deterministic function of what it
# reads (another number, operator, constant, branch) keep Python's one
# requirement, equal objects hash equal: sets and dicts behave the same.
# Only body.* (None is no hash) and removed calls and raises are tried.
_HASH_KEEPS = ("body.return_none", "body.skip", "call.remove", "raise.type", "raise.message")


def plan_mutants(
    source: str, start: int, operators: tuple[str, ...] | list[str] | None = None
) -> list[Mutant]:
    """The mutants of the function defined on line `start` of `source`, in source order.

    Deterministic: the same source gives the same list.  Only `operators`
    (default `DEFAULT_OPERATORS`); at most `MAX_MUTANTS`, taken in turns
    from each operator so that every operator is represented; a candidate
    that compiles to the function's own code is left out (equivalent).
    """
    found = find_function(parsed(source), start)  # read only: candidates change twins
    if found is None:
        return []
    function = found[1]
    lines = source.splitlines()
    every = list(candidates(function, lines))
    ids = _ids(every, function.lineno)  # type: ignore[attr-defined]
    allowed = set(DEFAULT_OPERATORS if operators is None else operators)
    queues = {
        name: [i for i, c in enumerate(every) if c.operator == name]
        for name in ALL_OPERATORS
        if name in allowed
    }
    original = _standalone(function)
    chosen: list[int] = []
    while len(chosen) < MAX_MUTANTS and any(queues.values()):
        for queue in queues.values():
            if not queue or len(chosen) >= MAX_MUTANTS:
                continue
            index = queue.pop(0)
            if function.name == "__hash__" and every[index].operator not in _HASH_KEEPS:  # type: ignore[attr-defined]
                continue
            if (
                every[index].operator in EXTREME
                or original is None
                or not _equivalent(function, lines, index, original)
            ):
                chosen.append(index)
    return [
        Mutant(i, every[i].operator, every[i].line, every[i].original, every[i].mutated, ids[i])
        for i in sorted(chosen)
    ]


def mutated_tree(source: str, start: int, index: int, *, mark: bool = True) -> ast.Module:
    """The module `source` with mutant number `index` of the function on line `start` applied.

    With `mark`, the changed code calls `REACHED` (a test that runs it is known).
    """
    tree = ast.parse(source)
    found = find_function(tree, start)
    assert found is not None
    list(candidates(found[1], source.splitlines()))[index].apply(mark)
    return ast.fix_missing_locations(tree)


def probe_tree(source: str, start: int) -> ast.Module:
    """The module `source` with the function on line `start` unchanged but for a reach mark.

    The mark (a call of `REACHED`) is its first statement after the
    docstring: swapped in, it tells which tests run the original function.
    """
    tree = ast.parse(source)
    found = find_function(tree, start)
    assert found is not None
    add_probe_mark(found[1])
    return ast.fix_missing_locations(tree)


def add_probe_mark(function: ast.AST) -> None:
    """The reach mark as `function`'s first statement after its docstring."""
    body = function.body  # type: ignore[attr-defined]
    index = body_start(function)
    mark = ast.Expr(value=reached(ast.Constant(None)))
    ast.copy_location(mark, body[index])
    body.insert(index, mark)
