"""The building blocks of the mutation operators (core/operators.py): walking, showing, applying.

Pure (stdlib only).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

# Mutated code calls this where the change is, to tell whether a test ran it.
REACHED = "pytest_quest_reached"

# The name mutated code calls to change a returned value (put in builtins in
# the child only, so the mutated code object finds it from any module).
CHANGED = "pytest_quest_changed"

_FunctionNode = (ast.FunctionDef, ast.AsyncFunctionDef)


def mark_names(suffix: str) -> tuple[str, str]:
    """The names of the reach mark and the changed-value function, ending in `suffix` if any."""
    if not suffix:
        return REACHED, CHANGED
    return f"{REACHED}_{suffix}", f"{CHANGED}_{suffix}"


def marks_renamed(tree: ast.Module, suffix: str) -> ast.Module:
    """`tree` (changed in place) calling the marks under `mark_names(suffix)`.

    The mutation child puts its marks in builtins under names of its own:
    code run by the tests that sets or removes the public names (the runner's
    own code, when the project is the runner, or its tests) cannot take them
    from the child that judges it.
    """
    if suffix:
        names = dict(zip((REACHED, CHANGED), mark_names(suffix)))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in names:
                node.id = names[node.id]
    return tree


def change_text(original: str, mutated: str) -> str:
    """A mutant's change as a person reads it: the original code, an arrow, the mutated code.

    A ``return.changed`` mutant's code calls the child's own function; it is
    shown as what it does instead (its recorded text, part of its id, stays).
    """
    head = f"return {CHANGED}("
    if mutated.startswith(head) and mutated.endswith(")"):
        value = mutated[len(head) : -1]
        return f"`{original}` -> another value of its kind returned in place of `{value}`"
    return f"`{original}` -> `{mutated}`"


_Scope = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_Comprehension = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@functools.lru_cache(maxsize=8)
def parsed(source: str) -> ast.Module:
    """`ast.parse(source)`, one tree per source shared by its readers: never change it.

    The mutation child reads one module for each of its functions, several
    times (planning, the swap, the small module, the reaching lines): a tenth
    of an audit of boltons went to parsing the same modules again.  Whoever
    changes a tree parses its own (`mutated_tree`) or copies (`copy.deepcopy`).
    """
    return ast.parse(source)


@dataclass
class Candidate:
    """One change an operator can make: where, shown how, and how to apply it in place."""

    operator: str
    line: int
    original: str
    mutated: str
    apply: Callable[[bool], None]


def reached(value: ast.expr) -> ast.expr:
    """`value` wrapped in the reach mark (a call that returns its argument)."""
    call = ast.Call(func=ast.Name(id=REACHED, ctx=ast.Load()), args=[value], keywords=[])
    return ast.copy_location(call, value) if hasattr(value, "lineno") else call


def marked(value: ast.expr, mark: bool) -> ast.expr:
    """`value`, with the reach mark called *before* it is evaluated (``reached(None) or value``).

    Before: a mutated expression that raises (`"a" - "!"`) still marks its test.
    """
    if not mark:
        return value
    first = ast.BoolOp(op=ast.Or(), values=[reached(ast.Constant(None)), value])
    return ast.copy_location(first, value) if hasattr(value, "lineno") else first


def line_text(lines: list[str], line: int) -> str:
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def spliced(lines: list[str], node: ast.AST, replacement: str) -> tuple[str, str]:
    """(original, mutated) text: the line with `node` replaced, or the node alone if it spans lines."""
    line = node.lineno  # type: ignore[attr-defined]
    end = getattr(node, "end_lineno", None)
    start_col, end_col = node.col_offset, getattr(node, "end_col_offset", None)  # type: ignore[attr-defined]
    if end != line or end_col is None or not 0 < line <= len(lines):
        return ast.unparse(node), replacement
    raw = lines[line - 1].encode("utf-8")  # offsets are in UTF-8 bytes
    before = raw[:start_col].decode("utf-8", "replace")
    after = raw[end_col:].decode("utf-8", "replace")
    return lines[line - 1].strip(), (before + replacement + after).strip()


def exits(body: list[ast.stmt]) -> bool:
    """Whether `body` can leave its block early (return, raise, break, continue)."""
    return any(
        isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue))
        for statement in body
        for node in walk_scope(statement, skip_comprehensions=True)
    )


def walk_scope(node: ast.AST, *, skip_comprehensions: bool) -> Iterator[ast.AST]:
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _Scope):
            continue
        if skip_comprehensions and isinstance(child, _Comprehension):
            continue
        yield from walk_scope(child, skip_comprehensions=skip_comprehensions)


def own_nodes(function: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(node, parent) for `function`'s own body in source order, not entering nested scopes.

    Comprehensions are not entered either: their conditions are a filter,
    not a branch of ours, and their expressions run once per element.
    """

    def walk(node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (*_Scope, *_Comprehension)):
                continue
            yield child, node
            yield from walk(child)

    for statement in function.body:  # type: ignore[attr-defined]
        if isinstance(statement, (*_FunctionNode, ast.ClassDef)):
            continue
        yield statement, function
        yield from walk(statement)


def is_none(node: ast.AST | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def body_start(function: ast.AST) -> int:
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


def same_ast(a: list[ast.stmt] | ast.AST, b: list[ast.stmt] | ast.AST) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_ast(x, y) for x, y in zip(a, b))
    if isinstance(a, list) or isinstance(b, list):
        return False
    return ast.dump(a) == ast.dump(b)


def only_guards(body: list[ast.stmt]) -> bool:
    """A block made only of `if`s without `else`: forcing the outer guard is seldom observable."""
    return all(isinstance(s, ast.If) and not s.orelse for s in body)


def returns_falsy_constant(function: ast.AST) -> bool:
    """The body (after its docstring) is one `return` of a falsy constant (`False`, `0`, `''`)."""
    body = function.body[body_start(function) :]  # type: ignore[attr-defined]
    return (
        len(body) == 1
        and isinstance(body[0], ast.Return)
        and isinstance(body[0].value, ast.Constant)
        and not body[0].value.value
    )


def lazy_init(node: ast.If) -> bool:
    """`if obj.attr is None:` without `else`, whose block assigns `obj.attr` (kept across calls).

    Not a local name (`if items is None: items = []`): defaulted on every
    call, forcing it False is seen on every call.
    """
    test = node.test
    if node.orelse or not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and is_none(test.comparators[0])
        and isinstance(test.left, ast.Attribute)
    ):
        return False
    wanted = ast.unparse(test.left)
    return any(
        isinstance(statement, ast.Assign)
        and any(ast.unparse(t) == wanted for t in statement.targets)
        for statement in node.body
    )


def statement_lines(function: ast.AST, line: int) -> range:
    """The lines a test runs when it reaches a change on `line` of `function`'s own code.

    The innermost statement holding `line`: all of a simple one, the header
    of a compound one (`if`/`for`/`while`/`with`/`try` up to its block).
    An empty range when `line` is not in the function's own statements.
    """
    found: ast.stmt | None = None
    for node in walk_scope(function, skip_comprehensions=False):
        if node is function or not isinstance(node, ast.stmt):
            continue
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            if found is None or node.lineno >= found.lineno:
                found = node
    if found is None:
        return range(0)
    end = found.end_lineno or found.lineno
    body = getattr(found, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        end = max(found.lineno, min(end, body[0].lineno - 1))
    return range(found.lineno, end + 1)


def walk_ids(*roots: ast.AST) -> Iterator[tuple[int, ast.AST]]:
    """Every node under `roots`, with its id (a tree's nodes are told apart by identity)."""
    return ((id(n), n) for root in roots for n in ast.walk(root))


def inside(*roots: ast.AST) -> set[int]:
    """The ids of every node under `roots`."""
    return {i for i, _ in walk_ids(*roots)}


def call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def replace_in(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    """Put `new` where `old` is among `parent`'s fields (a field or an item of a list field)."""
    for name, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, name, new)
            return
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is old:
                    value[i] = new
                    return
    raise ValueError("node not found in its parent")


def unread_maxlen(node: ast.AST) -> list[ast.Constant]:
    """The literal maxlen of a deque that is thrown away or read only at its last items (or none).

    `deque(it, maxlen=0)` as a statement consumes `it` whatever the maxlen;
    `deque(it, maxlen=k)[-j]` with ``1 <= j <= k`` is the j-th item from the
    end for any maxlen of at least j.  A larger maxlen changes only which
    items stay in memory a while (more-itertools' `consume` and `last`).
    """
    reach = 0
    if isinstance(node, ast.Expr):
        call = node.value
    elif isinstance(node, ast.Subscript):
        call, index = node.value, node.slice
        if not (
            isinstance(index, ast.UnaryOp)
            and isinstance(index.op, ast.USub)
            and isinstance(index.operand, ast.Constant)
            and type(index.operand.value) is int
            and index.operand.value >= 1
        ):
            return []
        reach = index.operand.value
    else:
        return []
    if not (isinstance(call, ast.Call) and call_name(call) == "deque"):
        return []
    given = [k.value for k in call.keywords if k.arg == "maxlen"] + call.args[1:2]
    for maxlen in given:
        if isinstance(maxlen, ast.Constant) and type(maxlen.value) is int and maxlen.value >= reach:
            return [maxlen]
    return []
