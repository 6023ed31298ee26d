"""A test that loads its own copy of the code under judgement: an audit hook in the mutation child.

The swap (engine/swap.py) mutates only the live functions, so a test comparing the
function with a copy it makes at run time kills every mutant.  During each probe and
mutant run the hook names each test that makes such a copy (REVIEW ``mutation.own_copy``)
or reads the live function's ``__code__`` (`CODE_READ`: that kill is no kill).  What is
seen and why: docs/judge.md, "A copy of the function made during the run".
"""

from __future__ import annotations

import ast
import inspect
import marshal
import os
import sys
import types
from typing import Any

from pytest_quest.core.mutant_ast import CHANGED, REACHED


def body_dump(node: ast.AST) -> str:
    """A function's body as `ast.dump` gives it, its docstring left out (no names, no positions)."""
    body = list(getattr(node, "body", []))
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return ast.dump(ast.Module(body=body, type_ignores=[]))


def holds_body(tree: ast.AST, dump: str) -> bool:
    """Whether `tree` has a function whose body is `dump` (see `body_dump`)."""
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and body_dump(node) == dump
        for node in ast.walk(tree)
    )


class CopyWatch:
    """Which tests make their own copy of one function while it is judged (one per process)."""

    def __init__(self) -> None:
        self.path = ""
        self.name = ""
        self.dump = ""
        self.cache_prefix = ""
        self.current = ""
        self.found: dict[str, str] = {}
        #: The test of the current run read the function's code object.
        self.read_code = False
        self._real: dict[str, str] = {}
        self._busy = False
        #: The file holds each run's mutant (engine/ondisk.py): see `watch`.
        self.written = False

    def watch(self, path: str, tree: ast.AST, written: bool = False) -> None:
        """From now on: the function `tree` (its def node) of the file `path`.

        `written`: each run's code is in the file itself (bwrap), so only a copy
        of the original counts: its body as source, or code without the reach marks.
        """
        self.written = written
        self.path = os.path.realpath(path)
        self.name = str(getattr(tree, "name", ""))
        self.dump = body_dump(tree)
        folder, name = os.path.split(self.path)
        stem = name[:-3] if name.endswith(".py") else name
        self.cache_prefix = os.path.join(folder, "__pycache__", stem + ".")
        self.found = {}

    def begin(self, nodeid: str) -> None:
        """A run of test `nodeid` starts: what it does now counts."""
        self.current = nodeid
        self.read_code = False

    def end(self) -> None:
        self.current = ""

    def _is_judged(self, filename: object) -> bool:
        if not isinstance(filename, str) or not filename:
            return False
        real = self._real.get(filename)
        if real is None:
            real = os.path.realpath(filename) if len(self._real) < 10_000 else filename
            self._real[filename] = real
        return real == self.path

    def _from_file(self, code: types.CodeType) -> bool:
        if self._is_judged(code.co_filename):
            return True
        return any(
            isinstance(const, types.CodeType) and self._from_file(const) for const in code.co_consts
        )

    def _unmarked(self, code: types.CodeType) -> bool:
        """Whether `code` holds the function compiled from the judged file, never with a mark."""
        found = [
            c for c in _codes(code) if c.co_name == self.name and self._is_judged(c.co_filename)
        ]
        return bool(found) and not any(_marked(c) for c in found)

    def _loaded(self, data: object) -> str:
        """What a read of bytecode holding the original function is (`written` only)."""
        if not isinstance(data, (bytes, bytearray)) or self.name.encode("utf-8") not in data:
            return ""
        try:
            code = marshal.loads(data)
        except (ValueError, EOFError, TypeError):
            return ""
        if isinstance(code, types.CodeType) and self._unmarked(code):
            return f"loaded bytecode of the original {self.name} from {self.path}"
        return ""

    def _code_read(self, args: tuple[Any, ...], reader: object) -> str:
        if reader in _SIGNATURE_READERS:
            return ""  # it makes a Signature of the code, which no mutant changes
        if len(args) >= 2 and args[1] == "__code__" and isinstance(args[0], types.FunctionType):
            code = args[0].__code__
            if code.co_name == self.name and self._is_judged(code.co_filename):
                return f"{CODE_READ} {self.name} (`__code__`)"
        return ""

    def _compiled_body(self, source: object) -> str:
        tree = source if isinstance(source, ast.AST) else None
        if tree is None and isinstance(source, (str, bytes)):
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError):
                return ""
        if tree is not None and holds_body(tree, self.dump):
            return "compiled source holding the function's body"
        return ""

    def _what(
        self, event: str, args: tuple[Any, ...], caller: types.FrameType | None = None
    ) -> str:
        if event == "object.__getattr__":
            return self._code_read(args, caller.f_code if caller is not None else None)
        if self.written:
            return self._what_written(event, args, caller)
        if event == "exec" and args and isinstance(args[0], types.CodeType):
            if self._from_file(args[0]):
                return f"executed code compiled from {self.path}"
        elif event == "compile" and len(args) >= 2:
            if self._is_judged(args[1]):
                return f"compiled {self.path}"
            return self._compiled_body(args[0])
        elif event == "open" and args and isinstance(args[0], (str, bytes)):
            path = os.fsdecode(args[0])
            if self._is_cached(path):
                return f"read the cached bytecode {path}"
        return ""

    def _what_written(
        self, event: str, args: tuple[Any, ...], caller: types.FrameType | None
    ) -> str:
        """`_what` where the bytecode file holds the run's code: only copies of the original
        count, and a read of that file by anything but the import system (its bytes tell
        the run's mutant from the original's)."""
        if event == "exec" and args and isinstance(args[0], types.CodeType):
            if self._from_file(args[0]) and self._unmarked(args[0]):
                return f"executed the original {self.name} compiled from {self.path}"
        elif event == "compile" and len(args) >= 2:
            return self._compiled_body(args[0])
        elif event == "marshal.loads" and args:
            return self._loaded(args[0])
        elif event == "open" and args and isinstance(args[0], (str, bytes)):
            path = os.fsdecode(args[0])
            if self._is_cached(path) and not _imported(caller):
                return f"read the cached bytecode {path}"
        return ""

    def _is_cached(self, path: str) -> bool:
        name = os.path.basename(path)
        return (
            name.endswith(".pyc")
            and name.startswith(os.path.basename(self.cache_prefix))
            and os.path.realpath(path).startswith(self.cache_prefix)
        )

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.current or self._busy or event not in _EVENTS:
            return
        self._busy = True  # ast.parse compiles too
        try:
            # Who reads an attribute or a file: the frame below this hook.
            what = self._what(event, args, sys._getframe(1))
        except Exception:  # a hook must not break the test it watches
            what = ""
        finally:
            self._busy = False
        if what.startswith(CODE_READ):
            self.read_code = True  # its kill in this run is discounted, not reported
        elif what and self.current not in self.found:
            self.found[self.current] = what


#: How a read of the judged function's code object is named (`CopyWatch.read_code`).
CODE_READ = "read the code object of"
#: The functions whose read of ``__code__`` yields only a signature (parameter names
#: and kinds, which no mutant changes): ``inspect.signature``, and what uses it
#: (Hypothesis's ``st.builds``).  Taken at import, before any test could replace them.
_SIGNATURE_READERS = frozenset(
    reader.__code__
    for reader in (getattr(inspect, "_signature_from_function", None),)
    if isinstance(reader, types.FunctionType)
)
_EVENTS = frozenset({"exec", "compile", "open", "object.__getattr__", "marshal.loads"})


def _codes(code: types.CodeType) -> list[types.CodeType]:
    """`code` and every code object among its constants, at any depth."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _codes(const)
    return found


#: Where the import system reads a bytecode file: its loader's ``get_data``, called by
#: its ``get_code``, called by the import system itself (a module's load, ``runpy``).
_IMPORT_SYSTEM = ("<frozen importlib._bootstrap_external>", "<frozen importlib._bootstrap>")
_RUNPY = ("<frozen runpy>", os.path.join(os.path.dirname(os.__file__), "runpy.py"))


def _imported(frame: types.FrameType | None) -> bool:
    """Whether the read below `frame` (the audited call's caller) is a module's load.

    ``get_data`` called by ``get_code``, called from the import system or
    ``runpy``: not a test's own call of either (which would get the bytes, or
    the code, to compare with something).
    """
    calls: list[types.CodeType] = []
    while frame is not None and len(calls) < 3:
        calls.append(frame.f_code)
        frame = frame.f_back
    if len(calls) < 3:
        return False
    data, code, caller = calls
    return (
        (data.co_name, data.co_filename) == ("get_data", _IMPORT_SYSTEM[0])
        and (code.co_name, code.co_filename) == ("get_code", _IMPORT_SYSTEM[0])
        and (caller.co_filename in _IMPORT_SYSTEM or caller.co_filename in _RUNPY)
    )


def _marked(code: types.CodeType) -> bool:
    """Whether `code` (or a function inside it) calls a reach mark: a mutant's or the probe's
    (under the public names or a mutation child's own, `mark_names`)."""
    return any(name.startswith((REACHED, CHANGED)) for c in _codes(code) for name in c.co_names)


# The one watch of this process (an audit hook cannot be removed: it is installed once).
_WATCH: list[CopyWatch] = []


def copy_watch() -> CopyWatch:
    """This process's watch, its audit hook installed on first use."""
    if not _WATCH:
        _WATCH.append(CopyWatch())
        sys.addaudithook(_WATCH[0].hook)
    return _WATCH[0]
