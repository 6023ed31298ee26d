"""Tamper signs in one Python file (test module or conftest): the ast walk.

``core.tamper`` is the front door; this module finds every sign in a whole
file, with the lines it spans, and ``core.tamper`` keeps those on lines the
submission added or changed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from pytest_quest.core import tamper_rules as rules
from pytest_quest.core.tamper_names import (
    BUILTIN_NAMES,
    Names,
    assigned_pairs,
    literal_text,
    prefixes,
)
from pytest_quest.core.tamper_ratchet import RatchetPaths, ratchet_write

_MAX_NESTING = 3  # exec("exec('...')"): deep enough for any honest reason to nest
_CONSTRUCT_WIDTH = 80
_UNJUDGED = "nests expressions too deeply for the check to judge the file"
_BUILTIN_WHY = "changes a builtin for all code in the process"
_BUILTINS = frozenset({"builtins", "builtins.__dict__"})
_DICT_WRITES = frozenset(
    {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"}
)


@dataclass(frozen=True)
class Sign:
    """One tamper sign in a file: its kind, the lines of its construct, the code, why."""

    kind: str
    line: int
    end_line: int
    construct: str
    why: str


@dataclass(frozen=True)
class Settings:
    """What the scan needs to know about the project.

    `own_packages`: top-level names of the code under test; a project that
    *is* pytest-quest or coverage.py tests itself by importing itself.
    `local_modules`: dotted module names of the submitted files, so that
    `pytest_plugins` naming one of them (whose code is judged too) is no sign.
    """

    ratchet_name: str = "quest.json"
    coverage_data_name: str = ".coverage"
    own_packages: frozenset[str] = frozenset()
    local_modules: frozenset[str] = frozenset()


def code_text(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= _CONSTRUCT_WIDTH else text[: _CONSTRUCT_WIDTH - 3] + "..."


def python_signs(text: str, settings: Settings) -> list[Sign]:
    """Every tamper sign in Python source `text`; none when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []  # Python cannot compile it either: a collection error, judged elsewhere
    try:
        return _Scan(tree, settings, depth=0).run()
    except RecursionError:
        # Compiles, but nests deeper than this walk can follow: a file the
        # check cannot vouch for must not pass as one without signs.
        return [Sign("unjudged", 1, len(text.splitlines()) or 1, "<whole file>", _UNJUDGED)]


class _Scan:
    def __init__(
        self, tree: ast.Module, settings: Settings, *, depth: int, outer: Names | None = None
    ) -> None:
        self.tree = tree
        self.settings = settings
        self.depth = depth
        self.nodes: list[ast.AST] = list(ast.walk(tree))
        self.parents = {
            child: parent for parent in self.nodes for child in ast.iter_child_nodes(parent)
        }
        self.names = Names(self.nodes, self.parents, outer)
        # pytest-quest's own tests use files named like the ratchet as test data.
        self.ratchet = RatchetPaths(
            self.nodes,
            self.parents,
            "" if self.own("pytest_quest") else settings.ratchet_name,
        )
        self.signs: list[Sign] = []
        self.constants = _module_constants(tree)

    def add(self, kind: str, node: ast.AST, why: str, construct: str = "") -> None:
        line = getattr(node, "lineno", 1)
        end = getattr(node, "end_lineno", None) or line
        self.signs.append(Sign(kind, line, end, construct or code_text(node), why))

    def own(self, module: str) -> bool:
        return module.split(".", maxsplit=1)[0] in self.settings.own_packages

    def run(self) -> list[Sign]:
        self._module_level()
        for node in self.nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._imports(node)
            if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
                self._reference(node)
            if isinstance(node, (ast.Name, ast.Attribute, ast.FunctionDef, ast.AsyncFunctionDef)):
                self._identifier(node)
            if isinstance(node, ast.Attribute):
                self._attribute(node)
            for target, _ in assigned_pairs(node):
                self._mutation(target, node)
            if isinstance(node, ast.Delete):
                for target in node.targets:
                    self._mutation(target, node)
            if isinstance(node, ast.Call):
                self._call(node)
            if isinstance(node, ast.Compare):
                self._module_membership(node)
            if isinstance(node, (ast.Constant, ast.BinOp)) and self._judged_alone(node):
                self._literal(node)
        return self.signs

    # -- names ------------------------------------------------------------------------

    def _rule(self, name: str, *, modules: bool) -> tuple[str, str] | None:
        candidates = prefixes(name)
        for rule in candidates:
            if rule in rules.MEMBERS:
                return rules.MEMBERS[rule]
        if modules and candidates[0] in rules.MODULES and not self.own(candidates[0]):
            return rules.MODULES[candidates[0]]
        return None

    def _imports(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                return
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            names = [alias.name for alias in node.names]
        for name in names:
            found = self._rule(name, modules=True)
            if found:
                self.add(found[0], node, found[1])
                return

    def _reference(self, node: ast.expr) -> None:
        parent = self.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return  # the longer chain is judged instead
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            return
        for name in sorted(self.names.resolve(node)):
            found = self._rule(name, modules=_obtained_dynamically(node))
            if found is None:
                continue
            if name == "sys._getframe" and self._frame_name_only(node, parent):
                continue
            shown = parent if isinstance(parent, ast.Call) and parent.func is node else node
            self.add(found[0], node, found[1], code_text(shown))
            return

    def _identifier(
        self, node: ast.Name | ast.Attribute | ast.FunctionDef | ast.AsyncFunctionDef
    ) -> None:
        if isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Attribute):
            name = node.attr
        else:
            name = node.name
        if rules.QUEST_NAME.search(name) and not self.own("pytest_quest"):
            self.add("internals", node, "names pytest-quest's own objects", name)

    def _attribute(self, node: ast.Attribute) -> None:
        parent = self.parents.get(node)
        if node.attr in rules.FRAME_NAMESPACES:
            self.add("frames", node, rules.FRAMES_WHY)
        elif node.attr == "__code__" and isinstance(node.ctx, ast.Load):
            # `f.__code__.co_filename` is a name; the code object itself, its
            # bytecode or constants tell a mutant from the original.
            if not (isinstance(parent, ast.Attribute) and parent.attr in rules.CODE_METADATA):
                self.add("code", node, "reads a code object: a mutant is told apart by it")
        elif node.attr.startswith("quest_") and _ends_with(node.value, "option"):
            if not self.own("pytest_quest"):
                self.add("internals", node, "reads or sets pytest-quest's options")
        elif node.attr in rules.RECORDING_HOOKS and _ends_with(node.value, "hook", "ihook"):
            if _session_object(node.value):
                self.add("config", node, "calls a pytest hook of the run: reports can be forged")
        elif node.attr == "no_cover" and _ends_with(node.value, "mark"):
            self.add("internals", node, "turns coverage off for a test (pytest-cov's mark)")

    def _module_membership(self, node: ast.Compare) -> None:
        # `"coverage" in sys.modules`: is the measurement running?
        name = literal_text(node.left)
        if name is None or not any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            return
        if any("sys.modules" in self.names.resolve(other) for other in node.comparators):
            found = self._rule(name, modules=True)
            if found:
                self.add(found[0], node, found[1])

    def _judged_alone(self, node: ast.AST) -> bool:
        """Not a bare string statement (a docstring), nor a part of a `"a" + "b"`
        literal that is judged whole."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.Expr):
            return False
        return not (isinstance(parent, ast.BinOp) and literal_text(parent) is not None)

    def _literal(self, node: ast.Constant | ast.BinOp) -> None:
        text = literal_text(node)
        if text is None:
            return
        settings = self.settings
        base = text.replace("\\", "/").rsplit("/", 1)[-1]
        if not self.own("pytest_quest"):
            if settings.ratchet_name in text:
                self.add("internals", node, "names the ratchet file or its lock")
            elif rules.QUEST_NAME.search(text):
                self.add("internals", node, "names pytest-quest, its options or variables")
        if rules.PROC_PATH.match(text):
            self.add("process", node, "reads the process table: the gate's runner and its children")
        if not self.own("coverage"):
            name = settings.coverage_data_name
            if base == name or base.startswith(name + "."):
                self.add("internals", node, "names coverage.py's data file")
            elif rules.COVERAGE_ENV.match(text):
                self.add("internals", node, "names a coverage.py environment variable")

    # -- statements --------------------------------------------------------------------

    def _module_level(self) -> None:
        for node in _top_level(self.tree.body):
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and rules.is_hook(node.name)
                and not _marker_setup_only(node)
            ):
                args = ", ".join(arg.arg for arg in node.args.args)
                self.add(
                    "config",
                    node,
                    "defines a pytest hook that can change outcomes or run after the results",
                    f"def {node.name}({args})",
                )
            for target, value in assigned_pairs(node):
                if isinstance(target, ast.Name) and target.id == "pytest_plugins":
                    self._plugins(value)

    def _plugins(self, value: ast.expr) -> None:
        items = value.elts if isinstance(value, (ast.List, ast.Tuple, ast.Set)) else [value]
        for item in items:
            name = literal_text(item)
            if name in rules.BUNDLED_PLUGINS or name in self.settings.local_modules:
                continue
            self.add(
                "config",
                item,
                "loads a plugin whose code is not part of the submission",
                f"pytest_plugins: {code_text(item)}",
            )

    def _mutation(self, target: ast.expr, statement: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._mutation(element, statement)
            return
        shown = code_text(statement)
        if isinstance(target, ast.Attribute):
            if target.attr in rules.CODE_DUNDERS:
                self.add("code", target, rules.CODE_WHY, shown)
            elif "builtins" in self.names.resolve(target.value):
                self.add("builtins", target, _BUILTIN_WHY, shown)
        elif isinstance(target, ast.Subscript):
            bases = self.names.resolve(target.value)
            if bases & _BUILTINS:
                self.add("builtins", target, _BUILTIN_WHY, shown)
            elif "sys.modules" in bases:
                self._module_key(target, literal_text(target.slice))

    def _module_key(self, node: ast.AST, name: str | None) -> None:
        found = self._rule(name, modules=True) if name else None
        if found:
            self.add(found[0], node, found[1])

    # -- calls -------------------------------------------------------------------------

    def _call(self, call: ast.Call) -> None:
        callee = self.names.resolve(call.func)
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        for keyword in call.keywords:
            if keyword.arg in rules.DETACH_KEYWORDS and not _is_none_or_false(keyword.value):
                self.add("process", call, rules.DETACH_WHY)
                break
        if callee & rules.PROCESS_STARTERS or method in rules.PROCESS_METHODS:
            self._process_arguments(call)
        if callee & {"builtins.exec", "builtins.eval", "builtins.compile"} and call.args:
            self._nested(call, self._code_literal(call.args[0]), self.names)
        if method == "replace" and any((kw.arg or "").startswith("co_") for kw in call.keywords):
            self.add("code", call, rules.CODE_WHY)
        if "builtins.type" in callee and call.args and _is_code_attribute(call.args[0]):
            self.add("code", call, rules.CODE_WHY)
        if receiver is None:
            pass
        elif (
            method in rules.PLUGIN_MANAGER_METHODS
            and _ends_with(receiver, "pluginmanager")
            and _session_object(receiver)
        ):
            self.add("config", call, "changes the plugins of the pytest run")
        elif method in _DICT_WRITES and self.names.resolve(receiver) & _BUILTINS:
            self.add("builtins", call, _BUILTIN_WHY)
        if callee & {"importlib.util.find_spec", "pkgutil.find_loader", "importlib.find_loader"}:
            self._module_key(call, literal_text(call.args[0]) if call.args else None)
        self._setter(call, callee, method)
        written = ratchet_write(call, callee, self.ratchet, self.names)
        if written:
            self.add("ratchet", call, written)

    def _setter(self, call: ast.Call, callee: set[str], method: str) -> None:
        plain = bool(callee & {"builtins.setattr", "builtins.delattr"}) or method in {
            "__setattr__",
            "__delattr__",
        }
        patch = method in {"setattr", "delattr", "setitem", "delitem", "object", "dict"} or any(
            name.endswith(".patch") or name.endswith(".patch.object") for name in callee
        )
        if not (plain or patch) or not call.args:
            return
        first = literal_text(call.args[0])
        if first is not None and "." in first:  # monkeypatch.setattr("pkg.mod.name", ...)
            target, name = first.rsplit(".", 1)
            bases = {target}
        elif len(call.args) >= 2 and literal_text(call.args[1]) is not None:
            name = literal_text(call.args[1]) or ""
            bases = self.names.resolve(call.args[0])
        else:
            return
        if name in rules.CODE_DUNDERS:
            self.add("code", call, rules.CODE_WHY)
        elif bases & _BUILTINS:
            if plain or name not in BUILTIN_NAMES:
                self.add("builtins", call, _BUILTIN_WHY)
        elif "sys.modules" in bases:
            self._module_key(call, name)
        else:
            for base in sorted(bases):
                found = self._rule(f"{base}.{name}", modules=True)
                if found and found[0] not in rules.PATCHABLE_KINDS:
                    self.add(found[0], call, found[1])
                    return

    def _process_arguments(self, call: ast.Call) -> None:
        words = [item for arg in call.args for item in _flat(arg)]
        if any(self.ratchet.mentions(item) for item in words):
            self.add("ratchet", call, "hands the ratchet file to another process")
        for index, item in enumerate(words):
            text = literal_text(item)
            if text is None:
                continue
            if rules.DETACH_WORDS.search(text) or rules.BACKGROUND.search(text):
                self.add("process", call, rules.DETACH_WHY)
                return
            if text == "-c" and index + 1 < len(words):  # python -c "code": judged as code
                self._nested(call, self._code_literal(words[index + 1]), None)

    def _code_literal(self, node: ast.expr) -> str | None:
        """The text of code given as a literal, `textwrap.dedent(literal)`, or a
        name bound once, at module level, to a literal (`exec(CODE)`)."""
        if isinstance(node, ast.Call) and node.args:
            if self.names.resolve(node.func) & {"textwrap.dedent", "inspect.cleandoc"}:
                return self._code_literal(node.args[0])
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        return literal_text(node)

    def _nested(self, call: ast.Call, code: str | None, outer: Names | None) -> None:
        """Judge code run from a literal: `exec` (in this module's names) or `python -c`."""
        if code is None or self.depth >= _MAX_NESTING:
            return
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            return
        for sign in _Scan(tree, self.settings, depth=self.depth + 1, outer=outer).run():
            self.add(sign.kind, call, sign.why, f"{code_text(call)} runs: {sign.construct}")

    # -- the ratchet file ----------------------------------------------------------------

    def _frame_name_only(self, node: ast.AST, parent: ast.AST | None) -> bool:
        """`sys._getframe()`, `sys._getframe(0)`, `sys._getframe(n).f_code`: the own
        frame, or only the name and line of a caller, no objects of other frames."""
        if not (isinstance(parent, ast.Call) and parent.func is node):
            return False
        if not parent.args:
            return True
        first = parent.args[0]
        if isinstance(first, ast.Constant) and first.value == 0:
            return True
        above = self.parents.get(parent)
        return isinstance(above, ast.Attribute) and above.attr in rules.FRAME_METADATA


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """Names bound exactly once by a module-level statement, to a string literal."""
    bindings: dict[str, list[str | None]] = {}
    for node in _top_level(tree.body):
        for target, value in assigned_pairs(node):
            if isinstance(target, ast.Name):
                bindings.setdefault(target.id, []).append(literal_text(value))
    return {
        name: texts[0]
        for name, texts in bindings.items()
        if len(texts) == 1 and texts[0] is not None
    }


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, looking inside module-level `if` and `try`."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _top_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body + node.orelse + node.finalbody)


def _obtained_dynamically(node: ast.AST) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, (ast.Call, ast.Subscript))


def _marker_setup_only(hook: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A start-up hook (`pytest_configure`) that uses its arguments only to
    register markers or read options runs before the tests like any conftest
    code, whose constructs are judged line by line anyway."""
    if hook.name not in rules.START_HOOKS:
        return False
    arguments = {arg.arg for arg in hook.args.args}
    parents = {child: node for node in ast.walk(hook) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(hook):
        if not (isinstance(node, ast.Name) and node.id in arguments):
            continue
        method = parents.get(node)
        call = parents.get(method) if method is not None else None
        if not (
            isinstance(method, ast.Attribute)
            and method.attr in rules.CONFIG_READS
            and isinstance(call, ast.Call)
            and call.func is method
        ):
            return False
    return True


def _session_object(node: ast.AST) -> bool:
    """True when `node` hangs off the running session (`request.config...`,
    `pytestconfig...`, `item.ihook`), not off a config a test built (pytester)."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return isinstance(node, ast.Name) and node.id in rules.SESSION_ROOTS


def _ends_with(node: ast.AST, *names: str) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in names
    return isinstance(node, ast.Name) and node.id in names


def _is_none_or_false(node: ast.expr) -> bool:
    # `is`, not `in (None, False)`: `process_group=0` is a new process group.
    return isinstance(node, ast.Constant) and (node.value is None or node.value is False)


def _is_code_attribute(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "__code__"


def _flat(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, (ast.List, ast.Tuple)):
        return [item for element in node.elts for item in _flat(element)]
    return [node]
