"""Swapping a function's code object in memory for a mutated one, and back (in a live process)."""

from __future__ import annotations

import ast
import builtins
import collections
import functools
import gc
import os
import sys
import types
import weakref
from collections.abc import Iterable
from typing import Any

from pytest_quest.core.mutant_ast import marks_renamed, parsed
from pytest_quest.core.mutants import find_function


def _first_line(node: ast.AST) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    lines = [int(getattr(node, "lineno", 0))] + [d.lineno for d in decorators]
    return min(lines)


def _key(node: ast.AST) -> tuple[str, int]:
    return node.name, _first_line(node)  # type: ignore[attr-defined]


def _code_key(code: types.CodeType) -> tuple[str, int]:
    return code.co_name, code.co_firstlineno


def _find_code(code: types.CodeType, key: tuple[str, int]) -> types.CodeType | None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if _code_key(const) == key:
                return const
            found = _find_code(const, key)
            if found is not None:
                return found
    return None


@functools.lru_cache(maxsize=4096)
def _real(filename: str) -> str:
    return os.path.realpath(filename)


class LiveIndex:
    """The live functions of some source files, found in one walk of the heap (held weakly).

    A heap walk per function was too slow; the heap is walked again only when
    modules were imported since.  Functions made by other means (a reload, a
    copy) are not found, so tests using them cannot kill the mutant.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = {_real(str(path)) for path in paths}
        self._stamp: tuple[int, str] | None = None
        self._found: dict[tuple[str, tuple[str, int]], list[weakref.ref[types.FunctionType]]] = {}
        # The ``lru_cache`` wrappers of the functions found, and the ids of those each holds
        # (found on first use after a walk: one `gc.get_referrers` for all).
        self._wrappers: list[tuple[Any, set[int]]] | None = None
        self.walks = 0

    def functions(self, path: str, keys: Iterable[tuple[str, int]]) -> list[types.FunctionType]:
        """The live functions of `path` whose code has one of `keys` (name, first line)."""
        stamp = (len(sys.modules), next(reversed(sys.modules.keys()), ""))
        if stamp != self._stamp:
            self._walk()
            self._stamp = stamp
            self._wrappers = None
        real = _real(path)
        found = []
        for key in keys:
            for ref in self._found.get((real, key), ()):
                function = ref()
                if function is not None:
                    found.append(function)
        return found

    def _walk(self) -> None:
        self.walks += 1
        found: dict[tuple[str, tuple[str, int]], list[weakref.ref[types.FunctionType]]] = {}
        paths, function_type = self.paths, types.FunctionType
        for obj in gc.get_objects():
            if type(obj) is function_type:
                code = obj.__code__
                real = _real(code.co_filename)
                if real in paths:
                    key = (real, (code.co_name, code.co_firstlineno))
                    found.setdefault(key, []).append(weakref.ref(obj))
        self._found = found

    def wrappers(self, functions: list[types.FunctionType]) -> list[Any]:
        """`_wrappers(functions)` for functions this index found, from one search for all."""
        if not functions:
            return []
        if self._wrappers is None:
            indexed = [
                f for refs in self._found.values() for ref in refs if (f := ref()) is not None
            ]
            self._wrappers = [
                (holder, {id(inner) for inner in gc.get_referents(holder)})
                for holder in _wrappers(indexed)
            ]
        wanted = {id(function) for function in functions}
        return [holder for holder, held in self._wrappers if held & wanted]


class SwapError(Exception):
    """A mutant could not be put in place (the reason is the message)."""


class SwapMissError(SwapError):
    """The function's live code was not found: nothing the tests run could be changed."""


class CodeSwap:
    """Puts mutated code objects into the live functions of one source file, and back.

    The live functions are found by their code (file, name, first line)
    among all objects; a nested function is reached through the constants of
    its enclosing functions' code, so instances made after the swap are
    mutated too.  With `marks`, the mutants call the marks under
    `mark_names(marks)` (core/mutant_ast.py): the names the child set.
    """

    def __init__(self, path: str, source: str, start: int, marks: str = "") -> None:
        self.path = os.path.realpath(path)
        self.source = source
        self.marks = marks
        found = find_function(parsed(source), start)
        if found is None:
            raise SwapError(f"no function defined on line {start} of {path}")
        chain, target = found
        self.keys = [_key(node) for node in [*chain, target]]
        self.swapped: list[tuple[types.FunctionType, types.CodeType]] = []
        # The namespaces of the swapped functions' modules as `apply` found them.
        self.namespaces: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.outer_codes: list[types.CodeType] | None = None
        self.holders: list[types.FunctionType] | None = None

    def live_functions(self) -> list[types.FunctionType]:
        outer = self.keys[0]
        return [
            obj
            for obj in gc.get_objects()
            if isinstance(obj, types.FunctionType)
            and _code_key(obj.__code__) == outer
            and os.path.realpath(obj.__code__.co_filename) == self.path
        ]

    def prepare(self, index: LiveIndex | None = None) -> list[Any]:
        """Find the live functions now, in one walk of the heap; their ``lru_cache`` wrappers.

        The outer functions' code is what `apply` swaps (found here instead of
        on its first call); the wrappers are those `cache_wrappers_of` finds.
        With `index`, the functions are the index's (a walk shared by many functions).
        """
        outer, target = self.keys[0], self.keys[-1]
        if index is not None:
            found = index.functions(self.path, dict.fromkeys((outer, target)))
        else:
            found = [
                obj
                for obj in gc.get_objects()
                if isinstance(obj, types.FunctionType)
                and _code_key(obj.__code__) in (outer, target)
                and os.path.realpath(obj.__code__.co_filename) == self.path
            ]
        outers = [f for f in found if _code_key(f.__code__) == outer]
        self.outer_codes = list({id(f.__code__): f.__code__ for f in outers}.values())
        targets = [f for f in found if _code_key(f.__code__) == target]
        if index is None:
            return _wrappers(targets)
        if len(self.keys) == 1:
            # Not nested: the functions holding its code are those just found.
            self.holders = outers
        return index.wrappers(targets)

    def apply(self, tree: ast.Module) -> int:
        """Swap in the mutated code of `tree`; returns how many live functions changed."""
        if self.outer_codes is None:
            # Found once: a heap walk in Python is the slow part of a swap.
            self.outer_codes = list(
                {id(f.__code__): f.__code__ for f in self.live_functions()}.values()
            )
        outers = self.outer_codes
        if not outers:
            raise SwapMissError(
                "no live function with this code (its module is not imported by the "
                "covering tests, or its code object was renamed)"
            )
        tree = marks_renamed(tree, self.marks)
        compiled: dict[str, types.CodeType] = {}
        replacements: dict[int, tuple[types.CodeType, types.CodeType]] = {}
        for original_outer in outers:
            filename = original_outer.co_filename
            if filename not in compiled:
                compiled[filename] = compile(tree, filename, "exec", dont_inherit=True)
            originals = [original_outer]
            for key in self.keys[1:]:
                inner = _find_code(originals[-1], key)
                if inner is None:
                    raise SwapMissError(f"nested function {key[0]} not found in the live code")
                originals.append(inner)
            mutated_target = _find_code(compiled[filename], self.keys[-1])
            if mutated_target is None:
                raise SwapError("the mutated function was not found in the compiled module")
            if (mutated_target.co_freevars, mutated_target.co_cellvars) != (
                originals[-1].co_freevars,
                originals[-1].co_cellvars,
            ):
                raise SwapError("the mutant changes the function's closure variables")
            self._chain_replacements(originals, mutated_target, replacements)
        if self.holders is None:
            # Functions made later from a swapped parent get the mutated
            # constant; those alive now are found once (a heap walk each).
            originals = [old for old, _ in replacements.values()]
            self.holders = [
                obj for obj in gc.get_referrers(*originals) if isinstance(obj, types.FunctionType)
            ]
        count = 0
        seen = {id(namespace) for namespace, _ in self.namespaces}
        for obj in self.holders:
            swap = replacements.get(id(obj.__code__))
            if swap is not None and swap[0] is obj.__code__:
                if id(obj.__globals__) not in seen:
                    seen.add(id(obj.__globals__))
                    self.namespaces.append((obj.__globals__, dict(obj.__globals__)))
                self.swapped.append((obj, obj.__code__))
                obj.__code__ = swap[1]
                count += 1
        return count

    @staticmethod
    def _chain_replacements(
        originals: list[types.CodeType],
        mutated_target: types.CodeType,
        replacements: dict[int, tuple[types.CodeType, types.CodeType]],
    ) -> None:
        # Each level's new code holds the next level's new code as a constant.
        new_codes: list[types.CodeType] = [mutated_target]
        for level in range(len(originals) - 2, -1, -1):
            child_old, child_new = originals[level + 1], new_codes[0]
            consts = tuple(child_new if c is child_old else c for c in originals[level].co_consts)
            new_codes.insert(0, originals[level].replace(co_consts=consts))
        for old, new in zip(originals, new_codes):
            replacements[id(old)] = (old, new)

    def restore(self) -> None:
        """The original code back, and its module's names as they were before `apply`."""
        for function, code in reversed(self.swapped):
            function.__code__ = code
        self.swapped.clear()
        for namespace, before in self.namespaces:
            _put_back(namespace, before)
        self.namespaces.clear()


def _put_back(namespace: dict[str, Any], before: dict[str, Any]) -> None:
    """`namespace` bound as in `before` again: what the mutant's run wrote there is undone.

    A mutant's writes to its module's globals would otherwise decide the runs
    after it.  A submodule bound by an import in the run stays: the import
    system binds it to its package only once.
    """
    for name in [name for name in namespace if name not in before]:
        if not isinstance(namespace[name], types.ModuleType):
            del namespace[name]
    for name, value in before.items():
        if namespace.get(name, _MISSING) is not value:
            namespace[name] = value


_MISSING = object()


#: Names of a module's namespace never put back: Python's own, rebuilt as needed.
_OWN_NAMES = frozenset({"__builtins__", "__warningregistry__"})
_PLAIN = (dict, list, set, collections.deque)


class ModuleState:
    """Some modules' names and plain containers as they were at one moment, put back on demand.

    A module-level cache filled by the baseline runs would hide a mutant of
    the code that fills it.  Taken after collection and put back before each
    test of a mutant: top-level names and the contents of top-level dicts,
    lists, sets and deques (refilled in place: other modules hold them).  The
    interpreter's own tables (``sys.modules``, ``sys.path``...) are never touched.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        wanted = {_real(str(path)) for path in paths}
        modules = [
            module
            for module in list(sys.modules.values())
            if isinstance(getattr(module, "__file__", None), str)
            and _real(module.__file__) in wanted
        ]
        interpreter = {id(value) for value in vars(sys).values()}
        interpreter |= {id(vars(module)) for module in list(sys.modules.values()) if module}
        interpreter.add(id(vars(builtins)))
        self.saved: list[tuple[dict[str, Any], dict[str, Any], list[tuple[Any, Any]]]] = []
        for module in modules:
            namespace = vars(module)
            names = {k: v for k, v in namespace.items() if k not in _OWN_NAMES}
            contents = [
                (value, _copied(value))
                for name, value in names.items()
                if not name.startswith("__")
                and isinstance(value, _PLAIN)
                and id(value) not in interpreter
            ]
            self.saved.append((namespace, names, contents))

    def changed(self) -> bool:
        """Whether a name or a container differs from what was taken (a test filled a cache)."""
        for namespace, names, contents in self.saved:
            now = {k: v for k, v in namespace.items() if k not in _OWN_NAMES}
            added = [k for k in now if k not in names and not isinstance(now[k], types.ModuleType)]
            if added or any(now.get(k, _MISSING) is not v for k, v in names.items()):
                return True
            if any(not _same(value, copy) for value, copy in contents):
                return True
        return False

    def restore(self) -> None:
        """Every name and container as taken."""
        for namespace, names, contents in self.saved:
            _put_back(
                namespace, {**names, **{k: namespace[k] for k in _OWN_NAMES if k in namespace}}
            )
            for value, copy in contents:
                if not _same(value, copy):
                    _refill(value, copy)


def _copied(value: Any) -> Any:
    return list(value.items()) if isinstance(value, dict) else list(value)


def _same(value: Any, copy: list[Any]) -> bool:
    """Whether `value` holds what `copy` was taken from, element by element (identity)."""
    if len(value) != len(copy):
        return False
    if isinstance(value, dict):
        return all(value.get(key, _MISSING) is item for key, item in copy)
    if isinstance(value, set):
        return all(item in value for item in copy)
    return all(a is b for a, b in zip(value, copy))


def _refill(value: Any, copy: list[Any]) -> None:
    value.clear()
    if isinstance(value, (dict, set)):
        value.update(copy)
    else:
        value.extend(copy)


def cache_wrappers_of(functions_at: list[tuple[str, str, int]]) -> list[Any]:
    """The ``functools.lru_cache``/``cache`` wrappers of the live functions at (path, source,
    line), in one walk of the heap."""
    wanted: set[tuple[str, tuple[str, int]]] = set()
    trees: dict[str, ast.Module] = {}
    for path, source, start in functions_at:
        if path not in trees:
            trees[path] = parsed(source)
        found = find_function(trees[path], start)
        if found is not None:
            wanted.add((os.path.realpath(path), _key(found[1])))
    if not wanted:
        return []
    keys = {key for _, key in wanted}
    functions = [
        obj
        for obj in gc.get_objects()
        if isinstance(obj, types.FunctionType)
        and _code_key(obj.__code__) in keys
        and (os.path.realpath(obj.__code__.co_filename), _code_key(obj.__code__)) in wanted
    ]
    return _wrappers(functions)


def _wrappers(functions: list[types.FunctionType]) -> list[Any]:
    """The ``lru_cache``/``cache`` wrappers that hold one of `functions`."""
    if not functions:
        return []
    return [
        holder
        for holder in gc.get_referrers(*functions)
        if not isinstance(holder, (dict, list, tuple, types.FunctionType, types.MethodType))
        and callable(getattr(holder, "cache_clear", None))
    ]
