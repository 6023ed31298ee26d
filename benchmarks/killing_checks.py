r"""Killing checks for boltons mutants once counted equivalent (docs/gate.md, false FAILs).

    python benchmarks/killing_checks.py /path/to/boltons

Each check is a plain test of the function's behaviour, run on the
original module and on a copy with one planned mutant applied
(`core.mutants.mutated_tree`); a different result means the mutant is
killable, so the function's FAIL is not a false one.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_quest.core.mutants import ALL_OPERATORS, mutated_tree, plan_mutants
from pytest_quest.engine.source import facts_from_source


def mutant_module(root: Path, module: str, quest_id: str, original: str, mutated: str) -> Any:
    file = quest_id.split("::", maxsplit=1)[0]
    source = (root / file).read_text(encoding="utf-8")
    facts = facts_from_source(quest_id, file, root, all_missing=False)
    assert facts is not None, quest_id
    found = [
        m
        for m in plan_mutants(source, facts.start, ALL_OPERATORS)
        if m.original == original and m.mutated == mutated
    ]
    assert len(found) == 1, (quest_id, original, mutated)
    copy = types.ModuleType(module)
    copy.__package__ = module.rpartition(".")[0]
    copy.__file__ = str(root / file)
    tree = mutated_tree(source, facts.start, found[0].index, mark=False)
    exec(compile(tree, str(root / file), "exec"), copy.__dict__)
    return copy


def pop_second_to_last(m: Any) -> Any:
    s = m.IndexedSet("abc")
    return s.pop(-2), list(s)


def pop_past_the_end(m: Any) -> Any:
    try:
        return m.IndexedSet("abc").pop(4)
    except IndexError:
        return "IndexError"


def setstate_on_a_full_dict(m: Any) -> Any:
    d = m.OrderedMultiDict(a=1)
    d.__setstate__([("b", 2)])
    return list(d.items(multi=True))


def rollover_closes_the_old_buffer(m: Any) -> Any:
    f = m.SpooledBytesIO()
    f.write(b"x")
    old = f.buffer
    f.rollover()
    return old.closed


POP = "if index is None or index == -1 or index == len_self - 1:"
CHECKS: list[tuple[Callable[[Any], Any], str, str, str, str]] = [
    (
        pop_second_to_last,
        "boltons.setutils",
        "boltons/setutils.py::IndexedSet.pop",
        POP,
        POP.replace("== -1", "== -2"),
    ),
    (
        pop_past_the_end,
        "boltons.setutils",
        "boltons/setutils.py::IndexedSet.pop",
        POP,
        POP.replace("len_self - 1", "len_self + 1"),
    ),
    (
        setstate_on_a_full_dict,
        "boltons.dictutils",
        "boltons/dictutils.py::OrderedMultiDict.__setstate__",
        "self.clear()",
        "pass  # call removed",
    ),
    (
        rollover_closes_the_old_buffer,
        "boltons.ioutils",
        "boltons/ioutils.py::SpooledBytesIO.rollover",
        "self.buffer.close()",
        "pass  # call removed",
    ),
]


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    sys.path.insert(0, str(root))
    for check, module, quest_id, original, mutated in CHECKS:
        before = check(importlib.import_module(module))
        after = check(mutant_module(root, module, quest_id, original, mutated))
        verdict = "KILLED" if before != after else "survives"
        print(f"{quest_id} `{mutated}`: {check.__name__} gives {before!r}, the mutant {after!r}: {verdict}")


if __name__ == "__main__":
    main()
