r"""Killing checks for surviving boltons mutants (the false FAILs of 2026-12-gate-research.md).

    python benchmarks/research/killing_checks.py /path/to/boltons

Each check is a plain test of the function's behaviour, run on the
original module and on a copy with one planned mutant applied
(`core.mutants.mutated_tree`); a different result means the mutant is
killable, so the function's FAIL is not a false one.  The first four were
once counted equivalent (session 22, boltons at 967864f8); the others are
the survivors of boltons 26.2.0 (session 27) that are not plainly killable
by reading them.  The BarrelList checks show what tells those mutants apart:
only the partition into sublists (`bl.lists`), never the list's items.
"""

from __future__ import annotations

import importlib
import io
import itertools
import os
import socket
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

from pytest_quest.core.mutants import Mutant, mutated_tree, plan_mutants
from pytest_quest.core.operators import ALL_OPERATORS
from pytest_quest.engine.source import facts_from_source


def module_with_mutant(
    root: Path, module: str, quest_id: str, pick: Callable[[Mutant], bool], what: object
) -> Any:
    """A fresh copy of `module` with the one planned mutant of `quest_id` that `pick` picks."""
    file = quest_id.split("::", maxsplit=1)[0]
    source = (root / file).read_text(encoding="utf-8")
    facts = facts_from_source(quest_id, file, root, all_missing=False)
    assert facts is not None, quest_id
    found = [m for m in plan_mutants(source, facts.start, ALL_OPERATORS) if pick(m)]
    assert len(found) == 1, (quest_id, what)
    copy = types.ModuleType(module)
    copy.__package__ = module.rpartition(".")[0]
    copy.__file__ = str(root / file)
    tree = mutated_tree(source, facts.start, found[0].index, mark=False)
    exec(compile(tree, str(root / file), "exec"), copy.__dict__)
    return copy


def mutant_module(root: Path, module: str, quest_id: str, original: str, mutated: str) -> Any:
    """`module` with the mutant of `quest_id` that turns the line `original` into `mutated`."""
    return module_with_mutant(
        root,
        module,
        quest_id,
        lambda m: m.original == original and m.mutated == mutated,
        (original, mutated),
    )


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


def omd_clear_then_readd(m: Any) -> Any:
    d = m.OrderedMultiDict(a=1)
    d.clear()
    d["b"] = 2
    d["a"] = 3
    del d["a"]
    return list(d.items(multi=True))


def lri_delete_then_fill(m: Any) -> Any:
    try:
        c = m.LRI(max_size=2)
        c["a"], c["b"] = 1, 2
        del c["a"]
        c["c"], c["d"] = 3, 4
        return sorted(c.items())
    except KeyError:
        return "KeyError"


def lri_pop_then_fill(m: Any) -> Any:
    try:
        c = m.LRI(max_size=2)
        c["a"], c["b"] = 1, 2
        c.pop("a")
        c["c"], c["d"] = 3, 4
        return sorted(c.items())
    except KeyError:
        return "KeyError"


def threshold_counter_keeps_a_twice_seen_key(m: Any) -> Any:
    t = m.ThresholdCounter(threshold=0.1)
    for key in ["x", "x", 1, 2, 3, 4, 5, 6, 7, 8]:
        t.add(key)
    return t.most_common()


def one_to_one_unhashable_value(m: Any) -> Any:
    d = m.OneToOne(a=1)
    try:
        d["a"] = []
    except TypeError:
        pass
    return dict(d), dict(d.inv)


def jsonl_position_after_rel_seek(m: Any) -> Any:
    f = io.StringIO('{"a": 1}\n{"b": 2}\n{"c": 3}\n{"d": 4}\n')
    return m.JSONLIterator(f, rel_seek=0.3).cur_byte_pos


class _Loader:
    def get_source(self, name: str) -> str:
        return "first line\nsecond line\n"


_NAMES = itertools.count()


def deferred_line_from_a_loader(m: Any) -> Any:
    name = f"no_such_module_file_{next(_NAMES)}.py"  # linecache keeps each name's lines
    return str(m._DeferredLine(name, 2, {"__name__": "nsm", "__loader__": _Loader()}))


def context_lines_near_the_top(m: Any) -> Any:
    cp = m.ContextualCallpoint("mod", "no_such_file.py", "f", 3, 0, None)
    cp._populate_context_lines()
    return [line.lineno for line in cp.pre_lines]


def guid_salt_prefix(m: Any) -> Any:
    # The salt is a public attribute: its known parts come first, '-'-joined.
    return m.GUIDerator().salt.startswith(f"{os.getpid()}-{socket.gethostname()}-")


def sequential_start_from_fixed_entropy(m: Any) -> Any:
    # Every part of the salt fixed, as a test would monkeypatch them: one start, anywhere.
    with (
        mock.patch.object(m.os, "urandom", bytes),
        mock.patch.object(m.os, "getpid", lambda: 1),
        mock.patch.object(m.time, "time", lambda: 1.0),
        mock.patch.object(socket, "gethostname", lambda: "example"),
    ):
        return m.SequentialGUIDerator().start


def barrel_insert_in_the_middle(m: Any) -> Any:
    bl = m.BarrelList(range(30000))
    bl.pop(0)
    bl.insert(0, 0)
    bl.insert(5, "x")
    return bl[5], bl[0]


def netstring_read(prefix: bytes) -> Callable[[Any], Any]:
    def read(m: Any) -> Any:
        a, b = socket.socketpair()
        try:
            a.sendall(prefix + b"x" * 100 + b",")
            try:
                return len(m.NetstringSocket(b, timeout=1, maxsize=100).read_ns())
            except Exception as exc:  # the mutant's exception is the result
                return type(exc).__name__
        finally:
            a.close()
            b.close()

    read.__name__ = f"netstring_read_{prefix.decode()}"
    return read


def bits_as_hex(m: Any) -> Any:
    return m.Bits(255, 16).as_hex()


def augpath_multidot_without_extension(m: Any) -> Any:
    try:
        return m.augpath("foo", suffix="_new", multidot=True)
    except IndexError:
        return "IndexError"


def spooled_string_len_keeps_the_position(m: Any) -> Any:
    f = m.SpooledStringIO()
    f.write("abc")
    f.seek(1)
    f.len  # noqa: B018 (a property with an effect)
    return f.read()


def omd_poplast(m: Any) -> Any:
    d = m.OrderedMultiDict([("a", 1), ("b", 2)])
    d.poplast("a")
    return list(d.items(multi=True))


def update_wrapper_one_injected_name(m: Any) -> Any:
    def f(ab: Any, c: Any) -> Any:
        return ab

    def w(c: Any) -> Any:
        return f(1, c)

    try:
        import inspect

        return str(inspect.signature(m.update_wrapper(w, f, injected="ab")))
    except Exception as exc:
        return type(exc).__name__


def barrel_sort_items_and_partition(m: Any) -> Any:
    bl = m.BarrelList(reversed(range(100000)))
    bl.pop(50000)
    bl.sort()
    return list(bl) == sorted(bl), len(bl.lists)


def barrel_partition(m: Any) -> Any:
    bl = m.BarrelList(range(30000))
    bl.pop(0)
    bl.insert(0, 0)
    return list(bl) == list(range(30000)), len(bl.lists)


POP = "if index is None or index == -1 or index == len_self - 1:"
NETSTRING = "self._msgsize_maxsize = len(str(maxsize)) + 1  # len(str()) == log10"
HEX = "tmpl = f'%0{2 * (self.len // 8 + ((self.len % 8) != 0))}X'"
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
    (
        omd_clear_then_readd,
        "boltons.dictutils",
        "boltons/dictutils.py::OrderedMultiDict._clear_ll",
        "_map.clear()",
        "pass  # call removed",
    ),
    (
        lri_delete_then_fill,
        "boltons.cacheutils",
        "boltons/cacheutils.py::LRI._remove_from_ll",
        "link = self._link_lookup.pop(key)",
        "return None",
    ),
    (
        lri_delete_then_fill,
        "boltons.cacheutils",
        "boltons/cacheutils.py::LRI.__delitem__",
        "self._remove_from_ll(key)",
        "pass  # call removed",
    ),
    (
        lri_pop_then_fill,
        "boltons.cacheutils",
        "boltons/cacheutils.py::LRI.pop",
        "self._remove_from_ll(key)",
        "pass  # call removed",
    ),
    (
        threshold_counter_keeps_a_twice_seen_key,
        "boltons.cacheutils",
        "boltons/cacheutils.py::ThresholdCounter.add",
        "self._count_map[key] = [1, self._cur_bucket - 1]",
        "self._count_map[key] = [1, self._cur_bucket - 2]",
    ),
    (
        one_to_one_unhashable_value,
        "boltons.dictutils",
        "boltons/dictutils.py::OneToOne.__setitem__",
        "hash(val)  # ensure val is a valid key",
        "pass  # call removed",
    ),
    (
        jsonl_position_after_rel_seek,
        "boltons.jsonutils",
        "boltons/jsonutils.py::JSONLIterator._align_to_newline",
        "cur, total_read = newline[:0], 0",
        "cur, total_read = newline[:0], 1",
    ),
    (
        deferred_line_from_a_loader,
        "boltons.tbutils",
        "boltons/tbutils.py::_DeferredLine.__init__",
        "if module_globals is None:",
        "if True:",
    ),
    (
        context_lines_near_the_top,
        "boltons.tbutils",
        "boltons/tbutils.py::ContextualCallpoint._populate_context_lines",
        "start_line = max(0, lineno - pivot)",
        "start_line = max(1, lineno - pivot)",
    ),
    (
        barrel_insert_in_the_middle,
        "boltons.listutils",
        "boltons/listutils.py::BarrelList.insert",
        "elif index < -len_self:  # clamp to prepend, like list.insert",
        "elif True:",
    ),
    (
        netstring_read(b"0100:"),
        "boltons.socketutils",
        "boltons/socketutils.py::NetstringSocket.__init__",
        NETSTRING,
        NETSTRING.replace("+ 1", "+ 2"),
    ),
    (
        netstring_read(b"100:"),
        "boltons.socketutils",
        "boltons/socketutils.py::NetstringSocket.__init__",
        NETSTRING,
        NETSTRING.replace("+ 1", "- 1"),
    ),
    (
        bits_as_hex,
        "boltons.mathutils",
        "boltons/mathutils.py::Bits.as_hex",
        HEX,
        HEX.replace("// 8", "// 9"),
    ),
    (
        augpath_multidot_without_extension,
        "boltons.pathutils",
        "boltons/pathutils.py::augpath",
        "'' if len(parts) == 1 else '.' + parts[1]",
        "'' if False else '.' + parts[1]",
    ),
    (
        spooled_string_len_keeps_the_position,
        "boltons.ioutils",
        "boltons/ioutils.py::SpooledStringIO.len",
        "self.buffer.seek(pos)",
        "pass  # call removed",
    ),
    (
        omd_poplast,
        "boltons.dictutils",
        "boltons/dictutils.py::OrderedMultiDict._remove",
        "values = self._map[k]",
        "return None",
    ),
    (
        update_wrapper_one_injected_name,
        "boltons.funcutils",
        "boltons/funcutils.py::update_wrapper",
        "elif isinstance(injected, str):",
        "elif False:",
    ),
    # Counted false FAILs in session 27 (a salt mixed with os.urandom and the time): the
    # salt is public, and a test that fixes the random parts fixes the start.
    (
        guid_salt_prefix,
        "boltons.iterutils",
        "boltons/iterutils.py::GUIDerator.reseed",
        "self.salt = '-'.join([str(self.pid),",
        "self.salt = 'XX-XX'.join([str(self.pid),",
    ),
    (
        guid_salt_prefix,
        "boltons.iterutils",
        "boltons/iterutils.py::GUIDerator.reseed",
        "socket.gethostname() or '<nohostname>',",
        "socket.gethostname() and '<nohostname>',",
    ),
    (
        sequential_start_from_fixed_entropy,
        "boltons.iterutils",
        "boltons/iterutils.py::SequentialGUIDerator.reseed",
        "self.start |= (1 << ((self.size * 4) - 2))",
        "self.start |= (2 << ((self.size * 4) - 2))",
    ),
    (
        sequential_start_from_fixed_entropy,
        "boltons.iterutils",
        "boltons/iterutils.py::SequentialGUIDerator.reseed",
        "self.start |= (1 << ((self.size * 4) - 2))",
        "self.start |= (1 << ((self.size * 4) - 3))",
    ),
    # Only the partition into sublists tells these apart (session 27: counted false FAILs).
    (
        barrel_sort_items_and_partition,
        "boltons.listutils",
        "boltons/listutils.py::BarrelList.sort",
        "self._balance_list(0)",
        "pass  # call removed",
    ),
    (
        barrel_sort_items_and_partition,
        "boltons.listutils",
        "boltons/listutils.py::BarrelList.sort",
        "li.sort()",
        "pass  # call removed",
    ),
    (
        barrel_sort_items_and_partition,
        "boltons.listutils",
        "boltons/listutils.py::BarrelList.sort",
        "if len(self.lists) == 1:",
        "if False:",
    ),
    (
        barrel_partition,
        "boltons.listutils",
        "boltons/listutils.py::BarrelList._cur_size_limit",
        "return int(round(size_factor * math_log(len_self + 2, 2)))",
        "return int(round(size_factor + math_log(len_self + 2, 2)))",
    ),
]


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    sys.path.insert(0, str(root))
    for check, module, quest_id, original, mutated in CHECKS:
        before = check(importlib.import_module(module))
        after = check(mutant_module(root, module, quest_id, original, mutated))
        verdict = "KILLED" if before != after else "survives"
        print(
            f"{quest_id} `{mutated}`: {check.__name__} gives {before!r}, the mutant {after!r}: {verdict}"
        )


if __name__ == "__main__":
    main()
