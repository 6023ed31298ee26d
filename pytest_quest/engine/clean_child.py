"""The clean witness search: `search` (engine/witness_search.py) in a process that loads no test code.

Run by the judge (engine/clean_search.py) as ``python -m
pytest_quest.engine.clean_child W,R`` for the survivors the mutation child
found no witness for.  From the judged process it takes only hints: the path,
source and fingerprint are the judge's own, the live function must be the
judged source compiled, and each mutant is rebuilt from the judge's plan.
The tests' calls are seeds read as data (engine/seeds.py), beside values of
the search's own.  Why: docs/judge.md, "Where the witness search that lets a
survivor through runs".
"""

from __future__ import annotations

import builtins
import gc
import importlib
import marshal
import os
import secrets
import sys
import tempfile
import types
from collections.abc import Callable
from typing import Any

from pytest_quest.core.mutant_ast import CHANGED, REACHED, parsed
from pytest_quest.core.mutant_module import FunctionTrees
from pytest_quest.core.mutants import Mutant, changed_value, find_function, plan_mutants
from pytest_quest.core.words import counted
from pytest_quest.engine.channel import answer, read_instructions
from pytest_quest.engine.seeds import decode
from pytest_quest.engine.source import fingerprint_node
from pytest_quest.engine.swap import _find_code, _key
from pytest_quest.engine.witness_search import Target, search

#: Values the search calls the function with besides the tests' own, one call per value
#: for every parameter (and Hypothesis varies each kind from there): never derived from seeds.
OWN_VALUES: tuple[Any, ...] = (0, 1, -1, 10, 100, 2.5, "", "a", "abc", None, True, [], [1, 2], {})


class Refused(Exception):
    """The function cannot be searched here as the judge named it (the message says why)."""


def main(argv: list[str]) -> int:
    write_fd, nonce, spec = read_instructions(argv[1])
    answer(write_fd, nonce, run(spec))
    return 0


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Every function's searches: ``{"functions": [{mutant id: search record}]}``."""
    path = [str(p) for p in spec["path"]]
    # sys.path[0] is the folder `-m` ran from: the judge's path replaces it.
    sys.path[:] = [*path, *(p for p in sys.path[1:] if p not in path)]
    # Bytecode the tests may have written next to the source is never read: the caches
    # are looked for in a folder no one made (a random name), and none is written.
    sys.pycache_prefix = os.path.join(
        tempfile.gettempdir(), f"pytest-quest-no-bytecode-{secrets.token_hex(8)}"
    )
    sys.dont_write_bytecode = True
    setattr(builtins, CHANGED, changed_value)
    setattr(builtins, REACHED, lambda value=None: value)
    roots = [os.path.realpath(str(r)) for r in spec["roots"]]
    _warm()
    return {"functions": [_function(function, roots) for function in spec["functions"]]}


def _warm() -> None:
    """Hypothesis imported and its strategies drawn from once, before any search starts:
    what a first draw costs (the text strategy's character tables) is not taken from
    the first search's seconds."""
    try:
        from hypothesis import HealthCheck, Phase, find, settings
        from hypothesis import strategies as st
        from hypothesis.errors import HypothesisException
    except ImportError:  # pragma: no cover - a runtime dependency
        return
    kinds = st.one_of(st.integers(), st.floats(), st.text(), st.binary(), st.lists(st.integers()))
    chosen = settings(
        database=None, derandomize=True, max_examples=5, deadline=None,
        phases=(Phase.generate,), suppress_health_check=list(HealthCheck),
    )  # fmt: skip
    try:
        find(kinds, lambda value: False, settings=chosen)
    except HypothesisException:
        pass  # nothing to find: only the draws were wanted


def _function(function: dict[str, Any], roots: list[str]) -> dict[str, dict[str, Any]]:
    jobs = function["jobs"]
    try:
        live = _load(function)
    except Refused as exc:
        return {str(job["id"]): _problem(str(exc)) for job in jobs}
    except BaseException as exc:  # an import of the code under test may raise anything
        why = f"the module could not be imported: {type(exc).__name__}: {exc}"[:200]
        return {str(job["id"]): _problem(why) for job in jobs}
    source, start = str(function["source"]), int(function["start"])
    plan = {m.id: m for m in plan_mutants(source, start, _operators(function.get("operators")))}
    trees = FunctionTrees(source, start, live.__code__.co_filename)
    found = find_function(trees.tree, start)
    assert found is not None  # `_load` found it
    key = _key(found[1])

    def project(module: str) -> bool:
        held = sys.modules.get(module)
        where = getattr(held, "__file__", None)
        real = os.path.realpath(where) if isinstance(where, str) else ""
        return bool(real) and any(real.startswith(root + os.sep) for root in roots)

    results = {}
    for job in jobs:
        try:
            results[str(job["id"])] = _job(job, plan, trees, live, key, project)
        except Exception as exc:  # one survivor's search failing holds that survivor only
            results[str(job["id"])] = _problem(
                f"the search failed: {type(exc).__name__}: {exc}"[:200]
            )
    return results


def _job(
    job: dict[str, Any],
    plan: dict[str, Mutant],
    trees: FunctionTrees,
    live: types.FunctionType,
    key: tuple[str, int],
    project: Callable[[str], bool],
) -> dict[str, Any]:
    """The search record of one survivor (`job`: what the mutation child said of it)."""
    mutant = plan.get(str(job["id"]))
    if mutant is None or (mutant.line, mutant.original, mutant.mutated) != (
        job.get("line"),
        job.get("original"),
        job.get("mutated"),
    ):
        return _problem("the mutant is not one of the judge's plan")
    filename = live.__code__.co_filename
    compiled = compile(trees.mutant(mutant.index, mark=False), filename, "exec", dont_inherit=True)
    code = _find_code(compiled, key)
    if code is None or code.co_freevars != live.__code__.co_freevars:
        return _problem("the mutant could not be built on its own")
    seeds = _fitting(decode(job.get("seeds"), project), live.__code__)
    kept = seeds + _own_calls(live.__code__, seeds)
    outcome = search(Target(live, live.__code__, code, kept))
    record = outcome.record()
    if "witness" not in record and not record["problem"] and outcome.returned < 1:
        seen = job.get("seeds_seen")
        dropped = (seen if isinstance(seen, int) else 0) - len(seeds)
        record["problem"] = (
            f"no call could be tried: the function raised on every call ({record['calls']} tried)"
            + (
                f"; {counted(dropped, 'call')} of the tests could not be read back here "
                "(an argument that is not plain data: an open object, a match, a module's "
                "own type the search does not rebuild)"
                if dropped > 0
                else ""
            )
        )
    return record


def _problem(why: str) -> dict[str, Any]:
    return {"calls": 0, "escapes": "", "problem": why}


def _operators(given: Any) -> tuple[str, ...] | None:
    return None if given is None else tuple(str(o) for o in given)


def _load(function: dict[str, Any]) -> types.FunctionType:
    """The live function the judge named, imported on the judge's path, checked against its source."""
    file, start, source = str(function["file"]), int(function["start"]), str(function["source"])
    real = os.path.realpath(file)
    try:
        with open(real, encoding="utf-8") as handle:
            now = handle.read()
    except OSError as exc:
        raise Refused(f"the file could not be read: {exc}") from None
    if now != source:
        raise Refused("the file changed since the judge read it")
    found = find_function(parsed(source), start)
    if found is None or fingerprint_node(found[1]) != function["fingerprint"]:
        raise Refused("the function at the quest's line has another fingerprint")
    key = _key(found[1])
    names = [str(n) for n in function["modules"]]
    chosen = str(function.get("module") or "")
    module: types.ModuleType | None = None
    failed = ""
    for name in [chosen, *names] if chosen in names else names:
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # the code under test's import may raise anything
            failed = f" ({name}: {type(exc).__name__}: {exc})"[:160]
            continue
        where = getattr(module, "__file__", None)
        if isinstance(where, str) and os.path.realpath(where) == real:
            break
        module = None
    if module is None:
        raise Refused(f"no module on the judge's path is the quest's file{failed}")
    for candidate in gc.get_objects():
        if not isinstance(candidate, types.FunctionType):
            continue
        code = candidate.__code__
        if (code.co_name, code.co_firstlineno) != key or os.path.realpath(code.co_filename) != real:
            continue
        # The live code must be the judged source compiled: nothing else was imported.
        compiled = _find_code(compile(source, code.co_filename, "exec", dont_inherit=True), key)
        if compiled is not None and _same(code, compiled):
            # A method calling `super()` holds its class in a `__class__` cell, set once
            # when the class was made: callable on its own; any other free variable is
            # a call's state of the function it is nested in.
            if code.co_freevars and code.co_freevars != ("__class__",):
                raise Refused("a nested function is not called on its own")
            return candidate
    raise Refused("the function at the quest's line is not in its module as the source has it")


def _same(a: types.CodeType, b: types.CodeType) -> bool:
    return marshal.dumps(a, 2) == marshal.dumps(b, 2)


def _parameters(code: types.CodeType) -> list[str]:
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    return list(code.co_varnames[:count])


def _fitting(calls: list[dict[str, Any]], code: types.CodeType) -> list[dict[str, Any]]:
    """The seeds that name exactly the function's parameters, in order (the rest dropped)."""
    names = _parameters(code)
    return [call for call in calls if list(call) == names]


def _own_calls(code: types.CodeType, seeds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Calls with `OWN_VALUES` for every parameter (`self` or `cls` taken from a seed)."""
    names = _parameters(code)
    if not names:
        return [{}]
    receiver = names[0] if names[0] in ("self", "cls") else ""
    if receiver and not seeds:
        return []  # no object to call a method on
    varargs = code.co_argcount + code.co_kwonlyargcount if code.co_flags & 0x04 else -1
    varkw = len(names) - 1 if code.co_flags & 0x08 else -1
    calls = []
    for value in OWN_VALUES:
        call: dict[str, Any] = {}
        for at, name in enumerate(names):
            if name == receiver and at == 0:
                call[name] = seeds[0][name]
            elif at == varargs:
                call[name] = ()
            elif at == varkw:
                call[name] = {}
            else:
                call[name] = value
        calls.append(call)
    return calls


if __name__ == "__main__":  # pragma: no cover - run by the judge as a child
    sys.exit(main(sys.argv))
