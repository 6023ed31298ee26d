"""The mutation operators: where each applies in a function, and the change it makes.

Pure (stdlib only).  `candidates` yields every change in a function's own
body in source order; the planner (core/mutants.py) re-finds a candidate in a
fresh tree by its position and `apply`s it.  The list follows mutmut's and
MutPy's: docs/gate.md, "The operators".
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from pytest_quest.core.mutant_ast import (
    CHANGED,
    Candidate,
    body_start,
    call_name,
    exits,
    inside,
    is_none,
    lazy_init,
    line_text,
    marked,
    only_guards,
    own_nodes,
    replace_in,
    returns_falsy_constant,
    same_ast,
    spliced,
    unread_maxlen,
    walk_ids,
)

#: The extreme mutants (Descartes for PIT, Meta's ACH): the original set.
EXTREME = ("body.return_none", "body.skip", "condition.false", "condition.true", "return.changed")

#: Every operator the planner knows, in the order the plan picks them.
ALL_OPERATORS = (
    *EXTREME,
    "arith.replace",
    "boolop.swap",
    "call.remove",
    "compare.boundary",
    "compare.negate",
    "constant.number",
    "constant.string",
    "raise.message",
    "raise.type",
    "slice.bounds",
)


# Calls whose removal or changed text no test is expected to notice: logging
# and warnings (an honest suite rarely captures them; docs/gate.md).
_QUIET_CALLS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "print"}
)

# Waits for other threads or processes (`queue.join()`, `thread.join()`):
# removed, the code that follows races them, so a test tells the mutant
# apart only when the race goes one way (more-itertools' `callback_iter`
# joins a queue whose every item was marked done: equivalent there).
_WAIT_CALLS = frozenset({"join"})

# Builtins whose number arguments are precision or defaults (`round(x, 11)`,
# `getattr(dt, "fold", 0)`): measured equivalent on dateutil.
_LIBRARY_CALLS = frozenset({"round", "getattr"})

_ARITH: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    # Not `*` <-> `/`: both keep the value wherever the other operand is 1
    # or -1 (a sign `s`, a unit factor), measured equivalent on dateutil
    # (`divmod(x * s, 60)`); `+` and `-` change it for every unit factor.
    ast.Mult: ast.Add,
    ast.Div: ast.Sub,
    # Not `//` -> `/`: 6 // 2 == 6 / 2 == 3.0 compare equal, an equivalent
    # mutant on every exact division.
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitAnd,
}

_BOUNDARY: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
}

_NEGATE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.LtE: ast.Gt,
    ast.Gt: ast.LtE,
    ast.GtE: ast.Lt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}


def _extreme(function: ast.AST, lines: list[str], generator: bool) -> Iterator[Candidate]:
    body = function.body  # type: ignore[attr-defined]
    rest = body[body_start(function) :]
    nodes = [node for node, _ in own_nodes(function)]
    returns_value = any(isinstance(n, ast.Return) and not is_none(n.value) for n in nodes)
    trivial = len(rest) == 1 and (
        isinstance(rest[0], ast.Pass)
        or (isinstance(rest[0], ast.Return) and is_none(rest[0].value))
    )
    # `return False` (0, ''): `return.changed` makes it truthy already; None
    # instead differs in identity only (boltons' `sep_func`,
    # dateutil's `tzutc.is_ambiguous`, their results only tested for truth).
    trivial = trivial or returns_falsy_constant(function)
    if rest and not trivial:
        first = rest[0]

        def skip(mark: bool, first: ast.stmt = first) -> None:
            value = marked(ast.Constant(None), mark)
            if generator and isinstance(function, ast.AsyncFunctionDef):
                # `return` with a value is a SyntaxError in an async generator: the mark
                # as a statement of its own, then a bare `return` (the same end).
                statements: list[ast.stmt] = [ast.Return(value=None)]
                if mark:
                    statements.insert(0, ast.Expr(value=value))
            else:
                statements = [ast.Return(value=value)]
            # Inserted, not replacing: the body's names stay, so the code object
            # keeps its free and cell variables and can be swapped in.
            at = body.index(first)
            body[at:at] = [ast.copy_location(statement, first) for statement in statements]

        operator = "body.return_none" if returns_value and not generator else "body.skip"
        yield Candidate(operator, first.lineno, line_text(lines, first.lineno), "return None", skip)


def _returns(node: ast.Return, lines: list[str]) -> Candidate:
    def change(mark: bool, node: ast.Return = node) -> None:
        assert node.value is not None
        call = ast.Call(func=ast.Name(id=CHANGED, ctx=ast.Load()), args=[node.value], keywords=[])
        node.value = ast.copy_location(call, node.value)

    value = ast.unparse(node.value)  # type: ignore[arg-type]
    return Candidate(
        "return.changed",
        node.lineno,
        line_text(lines, node.lineno),
        f"return {CHANGED}({value})",
        change,
    )


def _conditions(node: ast.If | ast.IfExp, lines: list[str]) -> Iterator[Candidate]:
    if isinstance(node.test, ast.Constant):
        return
    if isinstance(node, ast.IfExp) and same_ast(node.body, node.orelse):
        return  # both branches the same value: forcing either is the same program
    if isinstance(node, ast.If) and node.orelse and same_ast(node.body, node.orelse):
        return

    def force(value: bool) -> Callable[[bool], None]:
        def apply(mark: bool) -> None:
            node.test = ast.copy_location(marked(ast.Constant(value), mark), node.test)

        return apply

    if isinstance(node, ast.If):
        original = line_text(lines, node.lineno)
        keyword = "elif" if original.startswith("elif") else "if"
        # A guarded adjustment (`if len(p) > 3: p = p[:3]`) is a no-op where
        # the guard is false; a block of nested guards seldom does anything
        # the inner guards do not already exclude.
        adjustment = not node.orelse and (not exits(node.body) or only_guards(node.body))
        if not adjustment:
            yield Candidate(
                "condition.true", node.lineno, original, f"{keyword} True:", force(True)
            )
        # Fast paths and caches (`if not items: return 0`) and validation
        # guards raising what the next line would raise anyway; a lazy
        # initialisation (`if self._x is None: self._x = make()`), observable
        # only on the very first call (dateutil's `_TzSingleton`, made at import).
        fast_path = (
            not node.orelse
            and len(node.body) == 1
            and isinstance(node.body[0], (ast.Return, ast.Raise))
        ) or lazy_init(node)
        if not fast_path:
            yield Candidate(
                "condition.false", node.lineno, original, f"{keyword} False:", force(False)
            )
        return
    original = ast.unparse(node)
    for forced in (True, False):
        shown = ast.unparse(
            ast.IfExp(test=ast.Constant(forced), body=node.body, orelse=node.orelse)
        )
        yield Candidate(
            f"condition.{str(forced).lower()}", node.lineno, original, shown, force(forced)
        )


def _expression(
    operator: str, node: ast.expr, parent: ast.AST, lines: list[str], build: Callable[[], ast.expr]
) -> Candidate:
    """A candidate that replaces expression `node` (in `parent`) by what `build` makes."""
    original, mutated = spliced(lines, node, ast.unparse(build()))

    def apply(mark: bool) -> None:
        new = ast.copy_location(build(), node)
        replace_in(parent, node, marked(new, mark))

    return Candidate(operator, node.lineno, original, mutated, apply)


def _identity(op: ast.operator, left: ast.expr | None, right: ast.expr) -> bool:
    """`x + 0`, `x - 0`, `0 + x`: swapping the operator gives the same value."""

    def const(node: ast.expr | None, value: int) -> bool:
        return (
            isinstance(node, ast.Constant)
            and not isinstance(node.value, bool)
            and node.value == value
        )

    if isinstance(op, (ast.Add, ast.Sub)):
        return const(right, 0) or (isinstance(op, ast.Add) and const(left, 0))
    return False


def _binop(node: ast.BinOp, parent: ast.AST, lines: list[str]) -> Iterator[Candidate]:
    new_op = _ARITH.get(type(node.op))
    if new_op is None or _identity(node.op, node.left, node.right):
        return
    if isinstance(node.op, ast.Mod) and isinstance(node.left, (ast.Constant, ast.JoinedStr)):
        if isinstance(getattr(node.left, "value", None), str):
            return  # "%s" % x is string formatting, not arithmetic
    yield _expression(
        "arith.replace", node, parent, lines, lambda: ast.BinOp(node.left, new_op(), node.right)
    )


def _augassign(node: ast.AugAssign, lines: list[str]) -> Iterator[Candidate]:
    new_op = _ARITH.get(type(node.op))
    if new_op is None or _identity(node.op, None, node.value):
        return
    shown = ast.unparse(ast.AugAssign(node.target, new_op(), node.value))
    old_value = node.value

    def apply(mark: bool) -> None:
        node.op = new_op()
        node.value = marked(old_value, mark)

    yield Candidate("arith.replace", node.lineno, line_text(lines, node.lineno), shown, apply)


def _compare(node: ast.Compare, parent: ast.AST, lines: list[str]) -> Iterator[Candidate]:
    whole_test = isinstance(parent, (ast.If, ast.IfExp)) and parent.test is node
    for position, op in enumerate(node.ops):
        for name, table in (("compare.boundary", _BOUNDARY), ("compare.negate", _NEGATE)):
            new_op = table.get(type(op))
            if new_op is None:
                continue
            if name == "compare.negate" and whole_test:
                continue  # the condition.* mutants force the whole test already

            def build(position: int = position, new_op: type[ast.cmpop] = new_op) -> ast.expr:
                ops = list(node.ops)
                ops[position] = new_op()
                return ast.Compare(node.left, ops, node.comparators)

            yield _expression(name, node, parent, lines, build)


def _boolop(node: ast.BoolOp, parent: ast.AST, lines: list[str]) -> Iterator[Candidate]:
    other = ast.Or if isinstance(node.op, ast.And) else ast.And
    yield _expression("boolop.swap", node, parent, lines, lambda: ast.BoolOp(other(), node.values))


def _not(node: ast.UnaryOp, parent: ast.AST, lines: list[str]) -> Iterator[Candidate]:
    if isinstance(node.op, ast.Not):
        if isinstance(parent, (ast.If, ast.IfExp)) and parent.test is node:
            return
        yield _expression("compare.negate", node, parent, lines, lambda: node.operand)
    elif isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
        yield _expression("arith.replace", node, parent, lines, lambda: node.operand)


def _constant(
    node: ast.Constant,
    parent: ast.AST,
    lines: list[str],
    in_raise: bool,
    initial: bool,
    method_argument: bool = False,
    quiet: bool = False,
) -> Iterator[Candidate]:
    value = node.value
    if isinstance(parent, ast.Return) or initial or (method_argument and not in_raise):
        # return.changed changes it already; a variable starting from zero
        # or empty at the top of the body (`count = 0`, `a, b = '', 0`) is
        # most often overwritten or internal bookkeeping: measured
        # equivalent too often (docs/gate.md).
        return
    if isinstance(value, bool) or value is None or value is Ellipsis:
        return
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(parent, ast.Compare) and any(type(op) in _BOUNDARY for op in parent.ops):
            # `x < 0` -> `x < 1` is a boundary move (equivalent where the
            # boundary is not observable): compare.boundary's business.
            return
        new_number = value + 1
        yield _expression("constant.number", node, parent, lines, lambda: ast.Constant(new_number))
    elif isinstance(value, (str, bytes)):
        if quiet:
            return  # a message of logging or warnings, whole or in part
        marker: str | bytes = "XX" if isinstance(value, str) else b"XX"
        new_text = marker + value + marker  # type: ignore[operator]
        name = "raise.message" if in_raise else "constant.string"
        yield _expression(name, node, parent, lines, lambda: ast.Constant(new_text))


def _slice(node: ast.Slice, lines: list[str]) -> Iterator[Candidate]:
    field = "lower" if node.lower is not None else "upper" if node.upper is not None else ""
    if not field:
        return
    bound = getattr(node, field)
    if field == "lower" and isinstance(bound, ast.Constant) and bound.value == 0:
        return  # `s[0:n]` is `s[:n]`
    original, mutated = spliced(lines, bound, "None")

    def apply(mark: bool) -> None:
        setattr(node, field, ast.copy_location(marked(ast.Constant(None), mark), bound))

    yield Candidate("slice.bounds", bound.lineno, original, mutated, apply)


def _call_statement(node: ast.Expr, parent: ast.AST, lines: list[str]) -> Iterator[Candidate]:
    call = node.value
    assert isinstance(call, ast.Call)
    if _super_init(call):
        return  # a parent's __init__: mostly trivial (measured equivalent)
    if call_name(call) in _QUIET_CALLS | _WAIT_CALLS or (
        isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "warnings"
    ):
        return
    text = line_text(lines, node.lineno)

    def apply(mark: bool) -> None:
        # Kept but never run: its names stay, so the closure is unchanged.
        guard = ast.If(test=marked(ast.Constant(False), mark), body=[node], orelse=[])
        replace_in(parent, node, ast.copy_location(guard, node))

    yield Candidate("call.remove", node.lineno, text, "pass  # call removed", apply)


def _super_init(call: ast.Call) -> bool:
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and isinstance(func.value, ast.Call)
        and call_name(func.value) == "super"
    )


def _raise(node: ast.Raise, lines: list[str]) -> Iterator[Candidate]:
    exc = node.exc
    target = exc.func if isinstance(exc, ast.Call) else exc
    if not isinstance(target, (ast.Name, ast.Attribute)):
        return
    if isinstance(target, ast.Name) and target.id in ("Exception", "BaseException"):
        return
    holder: ast.AST = exc if isinstance(exc, ast.Call) else node
    yield _expression(
        "raise.type", target, holder, lines, lambda: ast.Name(id="Exception", ctx=ast.Load())
    )


def _skip_constants(parent: ast.AST) -> bool:
    """Places where a constant cannot become a call (f-string parts, match patterns)."""
    return isinstance(
        parent, (ast.JoinedStr, ast.FormattedValue, ast.MatchValue, ast.MatchSingleton)
    )


@dataclass
class _Marks:
    """Ids of nodes whose changes mean something else than elsewhere in the body."""

    raising: set[int] = field(default_factory=set)  # inside a `raise`
    initial: set[int] = field(default_factory=set)  # constants a variable starts from
    # Numbers handed to a method or a module's function (`c.most_common(1)`,
    # `zlib.decompress(b, 16 + zlib.MAX_WBITS)`, `s.ljust(6, "0")[:6]`):
    # library arguments whose neighbours often mean the same.
    method_numbers: set[int] = field(default_factory=set)
    annotations: set[int] = field(default_factory=set)
    # A slice thrown away (`iterable[:0]` in a `try`) probes whether the object
    # can be sliced, which other bounds answer alike (more-itertools' `divide`;
    # an index, `d["key"]`, is still changed); so does an unread deque maxlen.
    probes: set[int] = field(default_factory=set)
    quiet: set[int] = field(default_factory=set)  # a logging or warnings message, formatted too


def _mark_call(node: ast.Call, marks: _Marks) -> None:
    arguments = [*node.args, *(k.value for k in node.keywords)]
    if call_name(node) in _QUIET_CALLS:
        marks.quiet.update(inside(*arguments))
    if isinstance(node.func, ast.Attribute) or call_name(node) in _LIBRARY_CALLS:
        marks.method_numbers.update(
            i
            for i, n in walk_ids(*arguments)
            if isinstance(n, ast.Constant) and isinstance(n.value, (int, float))
        )


def _marks(function: ast.AST, nodes: list[tuple[ast.AST, ast.AST]]) -> _Marks:
    marks = _Marks()
    body = function.body  # type: ignore[attr-defined]
    for node, _ in nodes:
        marks.probes.update(map(id, unread_maxlen(node)))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Subscript):
            if isinstance(node.value.slice, ast.Slice):
                marks.probes.update(inside(node.value.slice))
        if isinstance(node, ast.Raise):
            marks.raising.update(inside(node))
        if isinstance(node, ast.AnnAssign):
            marks.annotations.update(inside(node.annotation))
        if isinstance(node, ast.Call):
            _mark_call(node, marks)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node in body:
            # A variable starting from zero or empty at the top of the body.
            value = node.value
            parts = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
            if all(isinstance(p, ast.Constant) and p.value in (0, "", b"") for p in parts):
                marks.initial.update(id(part) for part in parts)
    marks.raising.update(_message_texts(function))
    return marks


def _message_texts(function: ast.AST) -> set[int]:
    """The nodes of values given a local name that is read only inside a `raise`.

    `msg = "cannot convert %s" % value; raise ValueError(msg)` is the text of a
    raised exception as much as `raise ValueError("cannot ...")`: its strings
    are `raise.message`'s (opt-in), not `constant.string`'s.  A name declared
    `global` or `nonlocal`, or read anywhere outside a `raise` (a nested
    function's reads included), keeps its strings ordinary constants.
    """
    raised: set[int] = set()
    shared: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Raise):
            raised |= inside(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            shared.update(node.names)
    read_in_raise: set[str] = set()
    read_elsewhere: set[str] = set(shared)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            (read_in_raise if id(node) in raised else read_elsewhere).add(node.id)
    messages = read_in_raise - read_elsewhere
    found: set[int] = set()
    for node, _ in own_nodes(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) and t.id in messages for t in targets):
                found |= inside(node.value)
    return found


_SIMPLE: tuple[tuple[type | tuple[type, ...], Callable[..., Iterator[Candidate]]], ...] = (
    ((ast.If, ast.IfExp), lambda node, parent, lines: _conditions(node, lines)),
    (ast.BinOp, _binop),
    (ast.AugAssign, lambda node, parent, lines: _augassign(node, lines)),
    (ast.Compare, _compare),
    (ast.BoolOp, _boolop),
    (ast.UnaryOp, _not),
    (ast.Slice, lambda node, parent, lines: _slice(node, lines)),
)


def _node_candidates(
    node: ast.AST, parent: ast.AST, lines: list[str], marks: _Marks
) -> Iterator[Candidate]:
    for kind, operator in _SIMPLE:
        if isinstance(node, kind):
            yield from operator(node, parent, lines)
            return
    if isinstance(node, ast.Constant) and not _skip_constants(parent):
        if isinstance(parent, ast.Expr):
            return  # a bare string statement (a comment in disguise)
        yield from _constant(
            node,
            parent,
            lines,
            id(node) in marks.raising,
            id(node) in marks.initial,
            id(node) in marks.method_numbers,
            id(node) in marks.quiet,
        )
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield from _call_statement(node, parent, lines)
    elif isinstance(node, ast.Raise):
        yield from _raise(node, lines)


def candidates(function: ast.AST, lines: list[str]) -> Iterator[Candidate]:
    """Every change of `function` the known operators can make, in source order."""
    nodes = list(own_nodes(function))
    generator = any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node, _ in nodes)
    yield from _extreme(function, lines, generator)
    start = body_start(function)
    docstring = function.body[0] if start else None  # type: ignore[attr-defined]
    marks = _marks(function, nodes)
    for node, parent in nodes:
        if node is docstring or id(node) in marks.annotations or id(node) in marks.probes:
            continue
        if isinstance(node, ast.Return):
            if not generator and not is_none(node.value):
                yield _returns(node, lines)
        else:
            yield from _node_candidates(node, parent, lines, marks)
