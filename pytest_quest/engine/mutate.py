"""Gate steps 4 (mutants) and 5 (stability): checked, not just run.

A test that calls a function and asserts nothing covers every line of it.
Step 4 asks the question coverage cannot: does any covering test *notice*
when the function is wrong?  It makes a small deterministic set of mutants of
the quest's function and runs the covering tests against each; a mutant that
every test lets through is a FAIL fact.

The mutants are chosen where equivalent mutants (changes no test could
detect) are rare, after "extreme mutation" (Descartes for PIT) rather than
operator-level mutation, whose flipped ``<``/``<=`` is often equivalent:

* ``body.return_none`` / ``body.skip``: the body is skipped (``return None``
  is put before it).  Tests that check nothing at all do not notice.
* ``return.changed``: each ``return <value>`` returns another value of the
  same kind (a number moved by at least its own size, ``bool`` negated, a shorter ``str``/``list``/
  ``dict``, a fresh ``object()`` for anything else; see `changed_value`).
  Tests that only check ``is not None`` or the type do not notice.
* ``condition.true`` / ``condition.false``: an ``if`` condition (statement or
  expression) forced.  Forcing False is left out for an ``if`` without
  ``else`` whose body is a single ``return``: that is the shape of fast paths
  and caches (``if not items: return 0``), where skipping the branch is often
  equivalent; the branch's ``return.changed`` mutant checks its value instead.
  The same for a single ``raise``: a validation guard often raises what the
  code after it would raise anyway (``if x <= 0: raise ValueError`` before
  ``math.log(x)``), which ``pytest.raises(ValueError)`` cannot tell apart.
  Forcing True is left out for an ``if`` without ``else`` whose body cannot
  leave early (a guarded adjustment: ``if len(parts) > 3: parts = parts[:3]``,
  ``if items: items.sort()``): on the inputs the guard excludes, such a body
  is often a no-op.  ``while`` conditions are never forced (an endless loop
  checks nothing).

The user's files are never modified.  All mutants run in ONE child pytest
process (`run_mutation_check`): it collects the covering tests once, runs
them twice as a baseline (step 5: a test whose outcome differs is unstable),
then for each mutant swaps the function's code object in memory (compiled
from the mutated AST of the module), runs the covering tests until one fails,
and swaps the original back.  A crash mid-check leaves the tree untouched,
because nothing was ever written to it.
"""

from __future__ import annotations

import ast
import builtins
import gc
import json
import math
import os
import signal
import sys
import tempfile
import time
import types
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

# Above this many mutants per function the check costs more than it tells.
MAX_MUTANTS = 16

# The name mutated code calls to change a returned value (put in builtins in
# the child only, so the mutated code object finds it from any module).
CHANGED = "pytest_quest_changed"

# Mutated code calls this where the change is, to tell whether a test ran it.
REACHED = "pytest_quest_reached"

# The child reads its instructions from this variable (set only for it).
SPEC_ENV = "PYTEST_QUEST_MUTATE"

_FunctionNode = (ast.FunctionDef, ast.AsyncFunctionDef)


# -- choosing mutants (pure) -----------------------------------------------------


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
                found = visit(child, chain + [child])
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


def _reached(value: ast.expr) -> ast.expr:
    return ast.Call(func=ast.Name(id=REACHED, ctx=ast.Load()), args=[value], keywords=[])


# -- swapping code objects (child process) -----------------------------------------


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


class SwapError(Exception):
    """A mutant could not be put in place (the reason is the message)."""


class CodeSwap:
    """Puts mutated code objects into the live functions of one source file, and back.

    The live functions are found by their code (file, name, first line)
    among all objects; a nested function is reached through the constants of
    its enclosing functions' code, so instances made after the swap are
    mutated too.
    """

    def __init__(self, path: str, source: str, start: int) -> None:
        self.path = os.path.realpath(path)
        self.source = source
        tree = ast.parse(source)
        found = find_function(tree, start)
        if found is None:
            raise SwapError(f"no function defined on line {start} of {path}")
        chain, target = found
        self.keys = [_key(node) for node in chain + [target]]
        self.swapped: list[tuple[types.FunctionType, types.CodeType]] = []
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

    def apply(self, tree: ast.Module) -> int:
        """Swap in the mutated code of `tree`; returns how many live functions changed."""
        if self.outer_codes is None:
            # Found once: a heap walk in Python is the slow part of a swap.
            self.outer_codes = list(
                {id(f.__code__): f.__code__ for f in self.live_functions()}.values()
            )
        outers = self.outer_codes
        if not outers:
            raise SwapError("the function's module is not imported by the covering tests")
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
                    raise SwapError(f"nested function {key[0]} not found in the live code")
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
        for obj in self.holders:
            swap = replacements.get(id(obj.__code__))
            if swap is not None and swap[0] is obj.__code__:
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
        for function, code in reversed(self.swapped):
            function.__code__ = code
        self.swapped.clear()


# -- the child: one process runs the baseline twice and every mutant -------------


class _MutantTimeout(BaseException):
    """Raised in a test running a mutant past its time budget (the mutant counts as killed)."""


def _outcome(reports: list[pytest.TestReport]) -> str:
    outcome = "passed"
    for report in reports:
        if hasattr(report, "wasxfail"):
            return "xfailed" if report.skipped else "xpassed"
        if report.failed:
            return "failed" if report.when == "call" else "error"
        if report.skipped:
            outcome = "skipped"
    return outcome


class MutationChild:
    """The pytest plugin of the mutation child (``-p pytest_quest.engine.mutate``)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        out = Path(self.spec["out"])
        by_id = {item.nodeid: item for item in session.items}
        _quiet_hypothesis()
        results = []
        for function in self.spec["functions"]:
            result: dict[str, Any] = {"runs": [], "run_seconds": [], "mutants": [], "problem": ""}
            started = time.monotonic()
            items = [by_id[n] for n in function["nodeids"] if n in by_id]
            try:
                if session.testsfailed:
                    result["problem"] = "the covering tests could not be collected again"
                elif len(items) < len(function["nodeids"]):
                    result["problem"] = "some covering tests were not found again"
                else:
                    self._run(function, items, result)
            except Exception as exc:  # noqa: BLE001 - reported to the parent as an environment problem
                result["problem"] = f"the mutation runner failed: {type(exc).__name__}: {exc}"
            result["seconds"] = round(time.monotonic() - started, 4)
            results.append(result)
        out.write_text(json.dumps({"functions": results}), encoding="utf-8")
        return True

    def _run(
        self, function: dict[str, Any], items: list[pytest.Item], result: dict[str, Any]
    ) -> None:
        source = Path(function["file"]).read_text(encoding="utf-8")
        start = int(function["start"])
        for _ in range(2):
            # Found before each baseline run: the module may be imported by the first.
            _CACHES[:] = _cache_wrappers(function["file"], source, start)
            started = time.monotonic()
            result["runs"].append({item.nodeid: _outcome(_run_item(item)) for item in items})
            result["run_seconds"].append(time.monotonic() - started)
        if not self.spec.get("mutants", True):
            return
        stable = [
            item
            for item in items
            if result["runs"][0][item.nodeid] == result["runs"][1][item.nodeid] == "passed"
        ]
        if not stable:
            return  # nothing passes twice: the parent sees why in the runs
        mutants = plan_mutants(source, start)
        swap = CodeSwap(function["file"], source, start)
        budget = max(2.0, 10 * max(result["run_seconds"]))
        reached: list[bool] = []

        def mark(value: Any) -> Any:
            reached.append(True)
            return value

        def changed(value: Any) -> Any:
            reached.append(True)
            return changed_value(value)

        setattr(builtins, CHANGED, changed)
        setattr(builtins, REACHED, mark)
        try:
            self._mutants(mutants, swap, source, start, stable, budget, reached, result)
        finally:
            delattr(builtins, CHANGED)
            delattr(builtins, REACHED)
        ran = [m for m in result["mutants"] if m["status"] != "skipped"]
        if ran and all(m["status"] == "unreached" for m in ran):
            result["problem"] = (
                "the covering tests did not execute the function when run again "
                "in one process; could not check them"
            )

    @staticmethod
    def _mutants(
        mutants: list[Mutant],
        swap: CodeSwap,
        source: str,
        start: int,
        stable: list[pytest.Item],
        budget: float,
        reached: list[bool],
        result: dict[str, Any],
    ) -> None:
        for mutant in mutants:
            entry = asdict(mutant)
            began = time.monotonic()
            try:
                swap.apply(mutated_tree(source, start, mutant.index))
            except SwapError as exc:
                swap.restore()
                entry.update(status="skipped", reason=str(exc), seconds=0.0)
                result["mutants"].append(entry)
                continue
            reached.clear()
            try:
                entry.update(_try_mutant(stable, budget))
            finally:
                swap.restore()
            if entry["status"] == "survived" and not reached:
                # Not run again here (state kept from an earlier run, say a warm
                # cache): nothing is known of this mutant.
                entry["status"] = "unreached"
            entry["seconds"] = round(time.monotonic() - began, 4)
            result["mutants"].append(entry)


def _try_mutant(items: list[pytest.Item], budget: float) -> dict[str, Any]:
    """Run `items` against the mutant in place until one does not pass."""
    timed_out = []

    def alarm(signum: int, frame: Any) -> None:
        timed_out.append(True)
        raise _MutantTimeout(f"mutant ran longer than {budget:g}s")

    previous = signal.signal(signal.SIGALRM, alarm)
    # Repeats, in case a test swallows the first one and loops on.
    signal.setitimer(signal.ITIMER_REAL, budget, 0.5)
    try:
        for item in items:
            try:
                outcome = _outcome(_run_item(item))
            except _MutantTimeout:
                # Stopped outside the test's own phases (in a hook): still a kill.
                return {"status": "killed", "killed_by": item.nodeid, "how": "timeout"}
            if timed_out:
                return {"status": "killed", "killed_by": item.nodeid, "how": "timeout"}
            if outcome != "passed":
                return {"status": "killed", "killed_by": item.nodeid, "how": outcome}
        return {"status": "survived", "killed_by": "", "how": ""}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ``functools.lru_cache``/``cache`` wrappers of the function: cleared before
# every test, so that each run executes the function (and each mutant).
_CACHES: list[Any] = []


def _cache_wrappers(path: str, source: str, start: int) -> list[Any]:
    found = find_function(ast.parse(source), start)
    if found is None:
        return []
    key = _key(found[1])
    real = os.path.realpath(path)
    functions = [
        obj
        for obj in gc.get_objects()
        if isinstance(obj, types.FunctionType)
        and _code_key(obj.__code__) == key
        and os.path.realpath(obj.__code__.co_filename) == real
    ]
    if not functions:
        return []
    return [
        holder
        for holder in gc.get_referrers(*functions)
        if not isinstance(holder, (dict, list, tuple, types.FunctionType, types.MethodType))
        and callable(getattr(holder, "cache_clear", None))
    ]


def _run_item(item: pytest.Item) -> list[pytest.TestReport]:
    from _pytest.runner import runtestprotocol

    for cache in _CACHES:
        cache.cache_clear()

    # nextitem=None tears every fixture down after each test, so a test can be
    # run again (and stopped early) with its fixtures set up afresh.
    return runtestprotocol(item, log=False, nextitem=None)


def _quiet_hypothesis() -> None:
    """Make Hypothesis tests repeatable here, and keep their database untouched."""
    hypothesis = sys.modules.get("hypothesis")
    if hypothesis is None:
        return
    settings = hypothesis.settings
    current = settings.default
    settings.register_profile(
        "pytest-quest-mutants",
        settings(current, database=None, derandomize=True, deadline=None),
    )
    settings.load_profile("pytest-quest-mutants")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # Before any conftest of the tests under judgment is imported.
    if os.environ.get(SPEC_ENV):
        from pytest_quest.engine.guard import protect_from_env

        protect_from_env()


def pytest_configure(config: pytest.Config) -> None:
    raw = os.environ.get(SPEC_ENV)
    if raw:
        spec = json.loads(Path(raw).read_text(encoding="utf-8"))
        config.pluginmanager.register(MutationChild(spec), "quest-mutation-child")


# -- the parent: run the child, read its report -----------------------------------


@dataclass
class MutationReport:
    """What the mutation child found for one function."""

    completed: bool = True
    problem: str = ""
    runs: list[dict[str, str]] = field(default_factory=list)
    run_seconds: list[float] = field(default_factory=list)
    mutants: list[dict[str, Any]] = field(default_factory=list)
    duration: float = 0.0

    def unstable(self, first: dict[str, str] | None = None) -> list[str]:
        """Tests whose outcome differs between runs (`first`: an earlier run's outcomes)."""
        runs = list(self.runs)
        names = sorted(set().union(*runs)) if runs else []
        found = []
        for name in names:
            seen = {run.get(name, "missing") for run in runs}
            if first is not None and name in first:
                seen.add(first[name])
            if len(seen) > 1:
                found.append(name)
        return found

    def passed_again(self) -> bool:
        """Whether some covering test passed in every run of the child."""
        if not self.runs:
            return False
        return any(all(run.get(name) == "passed" for run in self.runs) for name in self.runs[0])

    def survivors(self) -> list[dict[str, Any]]:
        return [m for m in self.mutants if m.get("status") == "survived"]


def mutation_command(
    nodeids: list[str],
    rootdir: Path,
    inifile: Path | None,
    plugin_args: list[str],
    has_xdist: bool,
    has_cov: bool,
) -> list[str]:
    # --tb=native: a killed mutant's failure report is made, never shown;
    # pytest's own traceback rendering costs more than many a test.
    command = [sys.executable, "-m", "pytest", "-q", "--tb=native", "-p", "no:cacheprovider"]
    command += ["--rootdir", str(rootdir)]
    if inifile is not None:
        command += ["-c", str(inifile)]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        command += ["-p", "pytest_quest.plugin.hooks"]  # its ini options are in the user's config
    command += plugin_args
    command += ["-p", "pytest_quest.engine.mutate"]
    if has_xdist:
        command += ["-n", "0"]
    if has_cov:
        command += ["--no-cov"]
    return command + ["--"] + nodeids


@dataclass(frozen=True)
class Target:
    """One function to check: its file, the line of its ``def``, its covering tests."""

    file: Path
    start: int
    nodeids: tuple[str, ...]


def run_mutation_check(
    nodeids: list[str],
    file: Path,
    start: int,
    rootdir: Path,
    inifile: Path | None,
    timeout: float,
    cwd: Path,
    plugin_args: list[str] | None = None,
    mutants: bool = True,
    has_xdist: bool = False,
    has_cov: bool = False,
) -> MutationReport:
    """Run the baseline twice and every mutant of the function on `start` of `file`.

    One child pytest process (stopped at `timeout` seconds); a timeout or a
    crash gives ``completed=False`` with the problem stated.
    """
    target = Target(file, start, tuple(nodeids))
    return run_mutation_checks(
        [target], rootdir, inifile, timeout, cwd, plugin_args, mutants, has_xdist, has_cov
    )[0]


def run_mutation_checks(
    targets: list[Target],
    rootdir: Path,
    inifile: Path | None,
    timeout: float,
    cwd: Path,
    plugin_args: list[str] | None = None,
    mutants: bool = True,
    has_xdist: bool = False,
    has_cov: bool = False,
) -> list[MutationReport]:
    """`run_mutation_check` for several functions in ONE child process, one report each.

    The tests of all `targets` are collected once; each function is checked
    in turn with its own covering tests.  A timeout or crash of the child
    leaves every report ``completed=False`` with the problem stated.
    """
    from pytest_quest.engine.runner import child_env, run_in_own_session

    def failed(problem: str, duration: float) -> list[MutationReport]:
        return [
            MutationReport(completed=False, problem=problem, duration=duration) for _ in targets
        ]

    nodeids = sorted({nodeid for target in targets for nodeid in target.nodeids})
    with tempfile.TemporaryDirectory(prefix="pytest-quest-mutants-") as workdir:
        out = Path(workdir) / "mutants.json"
        spec_file = Path(workdir) / "spec.json"
        spec = {
            "out": str(out),
            "mutants": mutants,
            "functions": [
                {"file": str(t.file), "start": t.start, "nodeids": list(t.nodeids)} for t in targets
            ],
        }
        spec_file.write_text(json.dumps(spec), encoding="utf-8")
        command = mutation_command(nodeids, rootdir, inifile, plugin_args or [], has_xdist, has_cov)
        env = child_env()
        env[SPEC_ENV] = str(spec_file)
        log_path = Path(workdir) / "output.txt"
        started = time.monotonic()
        returncode = run_in_own_session(command, cwd, env, log_path, timeout)
        if returncode is None:
            return failed(
                f"the mutation check exceeded --quest-timeout ({timeout:g}s) and was stopped",
                time.monotonic() - started,
            )
        duration = time.monotonic() - started
        if not out.exists():
            output = log_path.read_text(encoding="utf-8", errors="replace")
            tail = " | ".join(output.strip().splitlines()[-3:])
            return failed(
                f"the mutation runner crashed (exit status {returncode}): {tail}", duration
            )
        try:
            data = json.loads(out.read_text(encoding="utf-8"))["functions"]
        except (ValueError, KeyError) as exc:
            return failed(f"the mutation report was unreadable: {exc}", duration)
        reports = []
        for item in data:
            reports.append(
                MutationReport(
                    completed=not item["problem"],
                    problem=item["problem"],
                    runs=item["runs"],
                    run_seconds=item["run_seconds"],
                    mutants=item["mutants"],
                    # Several functions share one child: each gets its own time
                    # in it (the start-up is in none of them).
                    duration=duration if len(targets) == 1 else item["seconds"],
                )
            )
        return reports


__all__ = [
    "CodeSwap",
    "Mutant",
    "MutationReport",
    "Target",
    "changed_value",
    "mutated_tree",
    "plan_mutants",
    "run_mutation_check",
    "run_mutation_checks",
]
