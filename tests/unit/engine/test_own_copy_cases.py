"""engine/own_copy.py's CopyWatch, its parts called directly (no audit hook installed): which
code, file reads, compiled sources and bytecode hold a copy of the judged function."""

from __future__ import annotations

import ast
import marshal
import os
import types
from pathlib import Path

import pytest

from pytest_quest.core.mutant_ast import CHANGED, REACHED
from pytest_quest.engine.own_copy import CODE_READ, CopyWatch, _codes, _marked

SOURCE = "def judged(a):\n    return a * 2\n\n\ndef other(b):\n    def inner():\n        return b\n    return inner\n"


@pytest.fixture
def watched(tmp_path: Path) -> tuple[CopyWatch, Path]:
    path = tmp_path / "mod.py"
    path.write_text(SOURCE)
    watch = CopyWatch()
    tree = ast.parse(SOURCE)
    watch.watch(str(path), tree.body[0])
    return watch, path


def _module_code(path: Path, source: str = SOURCE) -> types.CodeType:
    return compile(source, str(path), "exec")


def test_codes_walk_every_nested_code() -> None:
    code = compile(SOURCE, "m.py", "exec")
    assert [c.co_name for c in _codes(code)] == ["<module>", "judged", "other", "inner"]


def test_marked_by_a_reach_or_change_mark() -> None:
    assert _marked(compile(SOURCE, "m.py", "exec")) is False
    assert _marked(compile(f"def f():\n    {REACHED}()\n", "m.py", "exec")) is True
    assert _marked(compile(f"def f():\n    def g():\n        {CHANGED}(1)\n", "m.py", "exec"))
    assert _marked(compile(f"{REACHED}()\n", "m.py", "exec")) is True


def test_is_judged_by_real_path(watched: tuple[CopyWatch, Path], tmp_path: Path) -> None:
    watch, path = watched
    os.symlink(path, tmp_path / "link.py")
    assert watch._is_judged(str(path)) is True
    assert watch._is_judged(str(tmp_path / "link.py")) is True
    assert watch._is_judged(str(tmp_path / "other.py")) is False
    assert watch._is_judged("") is False
    assert watch._is_judged(None) is False
    assert watch._is_judged(b"mod.py") is False
    assert watch._real[str(tmp_path / "link.py")] == os.path.realpath(path)


def test_is_judged_stops_resolving_after_many_names(watched: tuple[CopyWatch, Path]) -> None:
    watch, path = watched
    watch._real = {f"name{n}": f"name{n}" for n in range(10_000)}
    assert watch._is_judged(str(path)) is True  # already real: the name itself
    link_dir = path.parent / "sub"
    link_dir.mkdir()
    os.symlink(path, link_dir / "link.py")
    assert watch._is_judged(str(link_dir / "link.py")) is False
    assert watch._real[str(link_dir / "link.py")] == str(link_dir / "link.py")


def test_from_file_finds_nested_code(watched: tuple[CopyWatch, Path], tmp_path: Path) -> None:
    watch, path = watched
    assert watch._from_file(_module_code(path)) is True
    elsewhere = compile("x = 1\n", str(tmp_path / "x.py"), "exec")
    assert watch._from_file(elsewhere) is False
    outer = compile("def f():\n    pass\n", str(tmp_path / "x.py"), "exec")
    inner = _module_code(path).co_consts[0]
    assert isinstance(inner, types.CodeType)
    mixed = outer.replace(co_consts=(*outer.co_consts, inner))
    assert watch._from_file(mixed) is True


def test_unmarked_original(watched: tuple[CopyWatch, Path], tmp_path: Path) -> None:
    watch, path = watched
    assert watch._unmarked(_module_code(path)) is True
    mutant = SOURCE.replace("return a * 2", f"{REACHED}()\n    return a + 2")
    assert watch._unmarked(_module_code(path, mutant)) is False
    assert watch._unmarked(compile(SOURCE, str(tmp_path / "x.py"), "exec")) is False
    assert watch._unmarked(_module_code(path, "def another():\n    pass\n")) is False


def test_loaded_bytecode_of_the_original(watched: tuple[CopyWatch, Path]) -> None:
    watch, path = watched
    data = marshal.dumps(_module_code(path))
    assert watch._loaded(data) == f"loaded bytecode of the original judged from {watch.path}"
    assert watch._loaded(bytearray(data)) == watch._loaded(data)


def test_loaded_other_data(watched: tuple[CopyWatch, Path]) -> None:
    watch, path = watched
    assert watch._loaded("judged") == ""
    assert watch._loaded(b"no name here") == ""
    assert watch._loaded(b"judged but not marshal") == ""
    assert watch._loaded(marshal.dumps(["judged"])) == ""
    mutant = SOURCE.replace("return a * 2", f"{REACHED}()\n    return a + 2")
    assert watch._loaded(marshal.dumps(_module_code(path, mutant))) == ""


def judged(a: int) -> int:
    return a * 2


def test_code_read_of_the_judged_function(watched: tuple[CopyWatch, Path]) -> None:
    watch, path = watched
    namespace: dict[str, object] = {}
    exec(_module_code(path), namespace)
    function = namespace["judged"]
    assert watch._code_read((function, "__code__"), None) == f"{CODE_READ} judged (`__code__`)"
    assert watch._code_read((function, "__name__"), None) == ""
    assert watch._code_read((function,), None) == ""
    assert watch._code_read((judged, "__code__"), None) == ""
    assert watch._code_read((namespace["other"], "__code__"), None) == ""
    assert watch._code_read(("judged", "__code__"), None) == ""


def test_compiled_body(watched: tuple[CopyWatch, Path]) -> None:
    watch, _ = watched
    said = "compiled source holding the function's body"
    assert watch._compiled_body("def renamed(a):\n    return a * 2\n") == said
    assert watch._compiled_body(b"def renamed(a):\n    return a * 2\n") == said
    assert watch._compiled_body(ast.parse("def renamed(a):\n    return a * 2\n")) == said
    assert watch._compiled_body("def renamed(a):\n    return a * 3\n") == ""
    assert watch._compiled_body("def (:") == ""
    assert watch._compiled_body("x = '\0'") == ""
    assert watch._compiled_body(42) == ""


def test_is_cached(watched: tuple[CopyWatch, Path]) -> None:
    watch, path = watched
    cache = path.parent / "__pycache__"
    assert watch._is_cached(str(cache / "mod.cpython-311.pyc")) is True
    assert watch._is_cached(str(cache / "mod.cpython-311.opt-1.pyc")) is True
    assert watch._is_cached(str(cache / "mod.cpython-311.py")) is False
    assert watch._is_cached(str(cache / "module.cpython-311.pyc")) is False
    assert watch._is_cached(str(path.parent / "other" / "mod.cpython-311.pyc")) is False
