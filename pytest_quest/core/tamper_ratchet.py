"""Writes to the ratchet file in test code: which expressions hold its path, which calls write it.

Part of the tamper check (``core.tamper``): a path is known by its literal
(`"quest.json"`, `"quest.json.lock"`) and followed through assignments,
`with ... as` and fixtures that return it.
"""

from __future__ import annotations

import ast

from pytest_quest.core import tamper_rules as rules
from pytest_quest.core.tamper_names import (
    Names,
    assigned_pairs,
    literal_text,
    matches,
    scope_chain,
)

_WRITES = "writes, moves, locks or links the ratchet file or its lock"
_HARD_LINK = "makes a hard link, through which the ratchet file can be written"

# (scope, name): scope is the id of the function a name is bound in, 0 for the module.
_Key = tuple[int, str]


class RatchetPaths:
    """Which expressions of one module hold a path of the ratchet file (or its lock).

    A name is keyed by the function it is bound in, so that `path = tmp_path /
    "quest.json"` in one test does not mark every other test's `path`;
    attributes (`self.ratchet`) and fixtures, which pytest hands over by
    name, are module-wide. An empty `ratchet_name` turns the tracking off.
    """

    def __init__(
        self, nodes: list[ast.AST], parents: dict[ast.AST, ast.AST], ratchet_name: str
    ) -> None:
        self.parents = parents
        self.ratchet_name = ratchet_name
        self.known: set[_Key] = set()
        if not ratchet_name or not any(
            ratchet_name in (literal_text(node) or "") for node in nodes
        ):
            return  # the common case: no literal, so nothing can hold the path
        pairs = [pair for node in nodes for pair in assigned_pairs(node)]
        functions = [
            node for node in nodes if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        while True:
            before = len(self.known)
            for target, value in pairs:
                if isinstance(target, (ast.Name, ast.Attribute)) and self.mentions(value):
                    self.known.add(self._key(target))
            for function in functions:  # a fixture that returns the path
                if any(
                    isinstance(node, (ast.Return, ast.Yield))
                    and node.value is not None
                    and self.mentions(node.value)
                    for node in ast.walk(function)
                ):
                    self.known.add((0, function.name))
            if len(self.known) == before:
                return

    def mentions(self, node: ast.AST) -> bool:
        """True when `node` contains the ratchet file's name or a name that holds its path."""
        if not self.ratchet_name:
            return False
        for inner in ast.walk(node):
            text = literal_text(inner)
            if text is not None and self.ratchet_name in text:
                return True
            if isinstance(inner, ast.Name):
                if any(
                    (scope, inner.id) in self.known for scope in scope_chain(inner, self.parents)
                ):
                    return True
            elif isinstance(inner, ast.Attribute) and (0, ast.unparse(inner)) in self.known:
                return True
        return False

    def _key(self, node: ast.Name | ast.Attribute) -> _Key:
        if isinstance(node, ast.Attribute):
            return (0, ast.unparse(node))
        return (scope_chain(node, self.parents)[0], node.id)


def ratchet_write(call: ast.Call, callee: set[str], paths: RatchetPaths, names: Names) -> str:
    """Why `call` writes, links or locks the ratchet file; empty when it does not."""
    method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
    if method in rules.HARD_LINK_METHODS:
        return _HARD_LINK
    if callee & rules.FILE_OPENERS and call.args and paths.mentions(call.args[0]):
        return _WRITES if _opens_for_writing(call, 1, names) else ""
    if receiver is not None and paths.mentions(receiver):
        if method in rules.WRITE_METHODS:
            return _WRITES
        if method == "open" and _opens_for_writing(call, 0, names):
            return _WRITES
        return ""
    if callee & rules.FILE_WRITERS and any(paths.mentions(arg) for arg in arguments):
        return _WRITES
    if callee & rules.FILE_COPIERS and len(call.args) > 1 and paths.mentions(call.args[1]):
        return _WRITES
    is_lock = method.endswith("FileLock") or any(matches(name, "filelock") for name in callee)
    if is_lock and any(paths.mentions(arg) for arg in arguments):
        return _WRITES
    return ""


def _opens_for_writing(call: ast.Call, mode_index: int, names: Names) -> bool:
    keyword = {kw.arg: kw.value for kw in call.keywords}
    mode = call.args[mode_index] if len(call.args) > mode_index else keyword.get("mode")
    if mode is None:
        mode = keyword.get("flags")
    if mode is None:
        return False  # open(path): read-only
    text = literal_text(mode)
    if text is not None:
        return any(letter in text for letter in "wax+")
    flags = ast.unparse(mode)
    if any(flag in flags for flag in rules.OS_WRITE_FLAGS):
        return True
    # os.O_RDONLY alone is read-only; any other unknown mode may write.
    return not (names.resolve(mode) & {"os.O_RDONLY"})
