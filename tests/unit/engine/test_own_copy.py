"""engine/own_copy.py: the ways a test makes its own copy of the judged function are seen."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import marshal
import runpy
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_quest.engine.own_copy import CopyWatch, body_dump, copy_watch, holds_body

SOURCE = '''\
def sign(x):
    """Which side of zero."""
    if x > 0:
        return "positive"
    return "other"
'''


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[CopyWatch, Path]]:
    path = tmp_path / "calc.py"
    path.write_text(SOURCE)
    watch = copy_watch()
    assert copy_watch() is watch  # one per process, its hook installed once
    watch.watch(str(path), ast.parse(SOURCE).body[0])
    yield watch, path
    watch.end()
    watch.watch("", ast.parse("def nothing(): pass").body[0])


def test_the_body_is_compared_without_its_docstring_or_name() -> None:
    node = ast.parse(SOURCE).body[0]
    plain = SOURCE.replace("def sign", "def oracle").replace('"""Which side of zero."""', "")
    other = ast.parse(plain).body[0]
    assert body_dump(node) == body_dump(other)
    assert holds_body(ast.parse("class A:\n" + textwrap.indent(SOURCE, "    ")), body_dump(node))
    assert not holds_body(ast.parse(SOURCE.replace("> 0", ">= 0")), body_dump(node))


def test_nothing_counts_outside_a_run(watched: tuple[CopyWatch, Path]) -> None:
    watch, path = watched
    runpy.run_path(str(path))
    assert watch.found == {}


def test_each_way_of_copying_is_named_once_per_test(watched: tuple[CopyWatch, Path]) -> None:
    watch, path = watched
    watch.begin("t::runpy")
    runpy.run_path(str(path))
    runpy.run_path(str(path))
    watch.begin("t::spec")
    spec = importlib.util.spec_from_file_location("copy_of_calc", path)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    watch.begin("t::renamed")
    exec(compile(SOURCE.replace("sign", "oracle"), "<oracle>", "exec"), {})
    watch.begin("t::tree")
    compile(ast.parse("x = 1\n" + SOURCE), "<tree>", "exec")
    watch.end()
    cache = Path(importlib.util.cache_from_source(str(path)))
    cache.parent.mkdir(exist_ok=True)
    cache.write_bytes(bytes(16) + marshal.dumps(compile(SOURCE, str(path), "exec")))
    watch.begin("t::bytecode")
    with open(cache, "rb") as handle:
        handle.read()
    watch.begin("t::honest")
    exec(compile("def other(x):\n    return x\n", "<honest>", "exec"), {})
    open(path).close()  # reading the source (tracebacks, inspect) is no copy
    watch.end()
    assert set(watch.found) == {"t::runpy", "t::spec", "t::renamed", "t::tree", "t::bytecode"}
    assert watch.found["t::runpy"].startswith("compiled ")
    assert watch.found["t::renamed"] == "compiled source holding the function's body"
    assert watch.found["t::bytecode"].startswith("read the cached bytecode ")


def test_source_that_does_not_parse_and_other_events_are_ignored(
    watched: tuple[CopyWatch, Path],
) -> None:
    watch, _ = watched
    watch.begin("t::x")
    with pytest.raises(SyntaxError):
        compile("def broken(:\n", "<bad>", "exec")
    watch.hook("open", (3, "r", 0))
    watch.hook("exec", ("not code",))
    watch.hook("compile", (None, None))
    watch.hook("import", ("os",))
    assert watch.found == {}


def test_a_read_of_the_judged_functions_code_object_marks_the_run_and_no_other(
    watched: tuple[CopyWatch, Path],
) -> None:
    watch, path = watched
    live = runpy.run_path(str(path))["sign"]  # outside a run: the judged function as loaded

    def sign(x: int) -> int:  # another file's function of the same name
        return x

    watch.begin("t::other")
    assert sign.__code__.co_name == "sign"
    assert not watch.read_code
    watch.begin("t::signature")
    assert list(inspect.signature(live).parameters) == ["x"]
    assert not watch.read_code  # inspect's own reader: a signature, which no mutant changes
    watch.begin("t::code")
    assert live.__code__.co_code
    assert watch.read_code
    assert watch.found == {}  # no fact: the kills of the run are discounted
    watch.begin("t::next")
    assert not watch.read_code


def test_where_the_bytecode_file_holds_the_runs_mutant_only_copies_of_the_original_count(
    watched: tuple[CopyWatch, Path],
) -> None:
    # engine/ondisk.py: each run's mutant (or probe) is in the module's bytecode file, with
    # its reach marks; what a test loads through the import system during the run is that.
    from pytest_quest.core.mutant_text import function_replaced
    from pytest_quest.core.mutants import probe_tree
    from pytest_quest.engine.ondisk import _pyc

    watch, path = watched
    watch.watch(str(path), ast.parse(SOURCE).body[0], written=True)
    original_code = compile(SOURCE, str(path), "exec")  # before the run
    original_bytes = marshal.dumps(original_code)
    probe = function_replaced(SOURCE, 1, probe_tree(SOURCE, 1))
    assert probe is not None
    cache = Path(importlib.util.cache_from_source(str(path)))
    cache.parent.mkdir(exist_ok=True)
    st = path.stat()
    cache.write_bytes(_pyc(compile(probe, str(path), "exec"), int(st.st_mtime), st.st_size))
    reached: list[object] = []

    def mark(value: object = None) -> object:
        reached.append(value)
        return value

    space = {"pytest_quest_reached": mark}
    watch.begin("t::honest")
    spec = importlib.util.spec_from_file_location("copy_of_calc", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(space)
    spec.loader.exec_module(module)  # the import system reads the bytecode file: the probe
    assert module.sign(-2) == "other"
    assert reached  # the probe's mark ran: the code came from the bytecode file
    watch.begin("t::runpy")
    runpy.run_path(str(path), init_globals=space)  # the text: the original's
    watch.begin("t::read")
    with open(cache, "rb") as handle:  # its bytes tell the run's code from the original's
        handle.read()
    watch.begin("t::source")
    exec(compile(SOURCE.replace("sign", "oracle"), "<oracle>", "exec"), {})
    watch.begin("t::code")
    exec(original_code, {})
    watch.begin("t::bytecode")
    marshal.loads(original_bytes)
    watch.end()
    assert watch.found == {
        "t::runpy": "compiled source holding the function's body",
        "t::read": f"read the cached bytecode {cache}",
        "t::source": "compiled source holding the function's body",
        "t::code": f"executed the original sign compiled from {watch.path}",
        "t::bytecode": f"loaded bytecode of the original sign from {watch.path}",
    }
