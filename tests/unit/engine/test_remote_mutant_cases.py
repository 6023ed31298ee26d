"""engine/remote_mutant.py's import hook: the loader of the mutated module, the finder that
serves the one judged file, the file compiled with its mutant or probe, and the finder kept
first in ``sys.meta_path``."""

from __future__ import annotations

import importlib.machinery
import marshal
import os
import types
from pathlib import Path

from pytest_quest.core.mutants import mutated_tree, probe_tree
from pytest_quest.engine.remote_mutant import _compiled, _Finder, _FinderFirst, _Loader

SOURCE = "def f(a):\n    return a + 1\n\n\nVALUE = f(1)\n"


def test_loader_runs_its_code_in_the_module() -> None:
    code = compile("x = 40 + 2\nname = __name__\n", "m.py", "exec")
    loader = _Loader(code)
    spec = importlib.machinery.ModuleSpec("judged_mod", loader)
    loader.create_module(spec)  # the default module object: nothing made here
    module = types.ModuleType("judged_mod")
    loader.exec_module(module)
    assert (module.x, module.name) == (42, "judged_mod")
    assert loader.get_code("judged_mod") is code


def test_finder_serves_the_judged_file_from_its_code(tmp_path: Path) -> None:
    (tmp_path / "judged_mod.py").write_text("x = 1\n")
    (tmp_path / "other_mod.py").write_text("y = 2\n")
    code = compile("x = 99\n", str(tmp_path / "judged_mod.py"), "exec")
    finder = _Finder(os.path.realpath(tmp_path / "judged_mod.py"), code)
    assert finder.filename == os.path.realpath(tmp_path / "judged_mod.py")
    assert finder.code is code
    spec = finder.find_spec("judged_mod", [str(tmp_path)])
    assert spec is not None
    assert spec.origin == str(tmp_path / "judged_mod.py")
    assert isinstance(spec.loader, _Loader)
    assert spec.loader.code is code
    assert spec.submodule_search_locations is None
    assert finder.find_spec("other_mod", [str(tmp_path)]) is None
    assert finder.find_spec("no_such_mod_here", [str(tmp_path)]) is None


def test_finder_serves_a_package(tmp_path: Path) -> None:
    package = tmp_path / "judged_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("x = 1\n")
    code = compile("x = 2\n", str(package / "__init__.py"), "exec")
    finder = _Finder(os.path.realpath(package / "__init__.py"), code)
    spec = finder.find_spec("judged_pkg", [str(tmp_path)])
    assert spec is not None
    assert spec.submodule_search_locations == [str(package)]


def test_finder_of_a_namespace_package_serves_nothing(tmp_path: Path) -> None:
    (tmp_path / "space").mkdir()
    finder = _Finder(str(tmp_path / "space"), compile("", "x", "exec"))
    assert finder.find_spec("space", [str(tmp_path)]) is None


def _dumped(tree: object, filename: str) -> bytes:
    return marshal.dumps(compile(tree, filename, "exec", dont_inherit=True), 2)  # type: ignore[call-overload]


def test_compiled_with_the_mutant(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    code = _compiled(str(path), "mutant", {"start": "1", "index": "0"})
    assert code.co_filename == str(path)
    assert marshal.dumps(code, 2) == _dumped(mutated_tree(SOURCE, 1, 0), str(path))
    assert marshal.dumps(code, 2) != _dumped(probe_tree(SOURCE, 1), str(path))


def test_compiled_with_the_probe(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    code = _compiled(str(path), "probe", {"start": 1})
    assert marshal.dumps(code, 2) == _dumped(probe_tree(SOURCE, 1), str(path))


class Plain:
    """A finder that is not the mutant's."""


def test_finder_first_keeps_the_mutants_finder_ahead() -> None:
    ours = _Finder("/x.py", compile("", "x", "exec"))
    a, b, c = Plain(), Plain(), Plain()
    path = _FinderFirst([ours, a])
    path.insert(0, b)
    assert path == [ours, b, a]
    path.insert(len(path), c)
    assert path == [ours, b, a, c]
    path.insert(1, a)
    assert path[1] is a


def test_finder_first_lets_a_mutants_finder_go_anywhere() -> None:
    ours = _Finder("/x.py", compile("", "x", "exec"))
    second = _Finder("/y.py", compile("", "y", "exec"))
    a = Plain()
    path = _FinderFirst([ours, a])
    path.insert(0, second)
    assert path == [second, ours, a]


def test_finder_first_without_a_mutants_finder() -> None:
    a, b = Plain(), Plain()
    path = _FinderFirst([a])
    path.insert(0, b)
    assert path == [b, a]
    only = _FinderFirst([_Finder("/x.py", compile("", "x", "exec"))])
    only.insert(0, a)
    assert only[1] is a
    assert len(only) == 2
