"""What a name in test code stands for: import aliases resolved to dotted names.

The tamper check (``core.tamper``) asks "is this expression ``atexit.register``?"
however the module was imported: ``import atexit as a``, ``from os import setsid
as x``, ``__import__("atexit")``, ``importlib.import_module(...)``,
``sys.modules[...]``, ``getattr(mod, "name")`` with a literal name, and names
bound to any of these (``f = a.register``).
"""

from __future__ import annotations

import ast
import builtins
from collections import defaultdict

BUILTIN_NAMES = frozenset(dir(builtins))

# Calls that hand back a module object named by their first argument.
_IMPORT_CALLS = frozenset(
    {
        "builtins.__import__",
        "importlib.__import__",
        "importlib.import_module",
        "pytest.importorskip",
        "sys.modules.get",
        "sys.modules.pop",
        "sys.modules.setdefault",
        "sys.modules.__getitem__",
    }
)
# Bounded: each pass can only follow one more `a = b` link, and real test code
# rarely chains more than two.
_ALIAS_PASSES = 6


def literal_text(node: ast.AST | None) -> str | None:
    """The value of a str (or bytes) literal, or of literals joined with `+`; else None."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return node.value
        if isinstance(node.value, bytes):
            return node.value.decode("latin-1")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = literal_text(node.left), literal_text(node.right)
        if left is not None and right is not None:
            return left + right
    return None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def scope_chain(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> list[int]:
    """Ids of the functions around `node`, innermost first, then 0 (the module)."""
    scopes = []
    current = parents.get(node)
    while current is not None:
        if isinstance(current, _SCOPES):
            scopes.append(id(current))
        current = parents.get(current)
    return [*scopes, 0]


def _binding(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    return []


class Names:
    """Every dotted name each name of one module may stand for, scope by scope.

    A name is looked up in the innermost function that binds it (a parameter
    `x` hides a module-level `from os import setsid as x`), else in the
    module. All bindings of a name in one scope count together: a name bound
    to ``atexit.register`` on any line of a function means it on every line
    of that function. That errs towards seeing a sign (a person looks at a
    grey case) and keeps the table small and obvious.
    """

    def __init__(
        self,
        nodes: list[ast.AST],
        parents: dict[ast.AST, ast.AST],
        outer: Names | None = None,
    ) -> None:
        """`nodes`: every node of the module (`list(ast.walk(tree))`); `parents`: child ->
        parent; `outer`: the names of the module whose `exec` runs this code."""
        self.parents = parents
        self.outer = outer
        self.aliases: dict[tuple[int, str], set[str]] = defaultdict(set)
        self.star_modules: list[str] = []
        self.bound = {(self._scope(node), name) for node in nodes for name in _binding(node)}
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    self.aliases[(self._scope(node), local)].add(
                        alias.name if alias.asname else local
                    )
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name == "*":
                        self.star_modules.append(node.module)
                    else:
                        local = alias.asname or alias.name
                        self.aliases[(self._scope(node), local)].add(f"{node.module}.{alias.name}")
        assignments = [
            ((self._scope(target), target.id), value)
            for node in nodes
            for target, value in assigned_pairs(node)
            if isinstance(target, ast.Name)
        ]
        for _ in range(_ALIAS_PASSES):
            changed = False
            for key, value in assignments:
                found = self.resolve(value) - self.aliases[key]
                if found:
                    self.aliases[key] |= found
                    changed = True
            if not changed:
                break

    def _scope(self, node: ast.AST) -> int:
        """The function a binding at `node` belongs to: a parameter to its own
        function, a `def` statement's name to the one around it."""
        return scope_chain(node, self.parents)[0]

    def resolve(self, node: ast.AST) -> set[str]:
        """The dotted names `node` may evaluate to (empty when not a known object)."""
        if isinstance(node, ast.Name):
            if node.id == "__builtins__":
                return {"builtins"}
            for scope in scope_chain(node, self.parents):
                if (scope, node.id) in self.bound:
                    return set(self.aliases.get((scope, node.id), ()))
            if self.outer is not None and (0, node.id) in self.outer.bound:
                return set(self.outer.aliases.get((0, node.id), ()))
            if node.id in BUILTIN_NAMES:
                return {f"builtins.{node.id}"}
            return {f"{module}.{node.id}" for module in self.star_modules}
        if isinstance(node, ast.Attribute):
            return {f"{base}.{node.attr}" for base in self.resolve(node.value)}
        if isinstance(node, ast.Subscript):
            key = literal_text(node.slice)
            bases = self.resolve(node.value)
            if key is not None and "sys.modules" in bases:
                return {key}
            # `os.__dict__["fork"]`, `vars(os)["fork"]`
            return {
                f"{base.removesuffix('.__dict__')}.{key}"
                for base in bases
                if key is not None and base.endswith(".__dict__")
            }
        if isinstance(node, ast.Call):
            return self._resolve_call(node)
        return set()

    def _resolve_call(self, call: ast.Call) -> set[str]:
        callee = self.resolve(call.func)
        first = literal_text(call.args[0]) if call.args else None
        getter = call.func
        if isinstance(getter, ast.Call) and len(getter.args) == 1 and len(call.args) == 1:
            # operator.attrgetter("settrace")(sys)
            name = literal_text(getter.args[0])
            if name is not None and "operator.attrgetter" in self.resolve(getter.func):
                return {f"{base}.{name}" for base in self.resolve(call.args[0])}
        if "builtins.getattr" in callee and len(call.args) >= 2:
            name = literal_text(call.args[1])
            if name is not None:
                return {f"{base}.{name}" for base in self.resolve(call.args[0])}
        if "builtins.vars" in callee and len(call.args) == 1:
            return {f"{base}.__dict__" for base in self.resolve(call.args[0])}
        if "importlib.reload" in callee and call.args:
            return self.resolve(call.args[0])
        if callee & _IMPORT_CALLS and first and not first.startswith("."):
            if callee & {"builtins.__import__", "importlib.__import__"} and not _has_fromlist(call):
                # `__import__("os.path")` returns `os`, not `os.path`.
                return {first.split(".")[0]}
            return {first}
        return set()


def _has_fromlist(call: ast.Call) -> bool:
    if len(call.args) >= 4:
        return True
    return any(keyword.arg == "fromlist" for keyword in call.keywords)


def assigned_pairs(node: ast.AST) -> list[tuple[ast.expr, ast.expr]]:
    """(target, value) pairs a node binds: assignments, walrus, `with ... as`."""
    kind = type(node)
    if kind is ast.Assign:
        assert isinstance(node, ast.Assign)
        return [(target, node.value) for target in node.targets]
    if kind in (ast.AnnAssign, ast.AugAssign, ast.NamedExpr):
        assert isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr))
        return [(node.target, node.value)] if node.value is not None else []
    if kind is ast.withitem:
        assert isinstance(node, ast.withitem)
        if node.optional_vars is not None:
            return [(node.optional_vars, node.context_expr)]
    return []


def matches(name: str, rule: str) -> bool:
    """True when dotted `name` is `rule` or something inside it."""
    return name == rule or name.startswith(rule + ".")


def prefixes(name: str) -> list[str]:
    """`a.b.c` -> `a`, `a.b`, `a.b.c`: the rules a dotted name can match."""
    parts = name.split(".")
    return [".".join(parts[: end + 1]) for end in range(len(parts))]
