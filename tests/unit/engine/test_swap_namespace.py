"""`CodeSwap.restore` puts the module's names back as `apply` found them."""

from __future__ import annotations

import ast
import importlib.util
import types
from pathlib import Path

from pytest_quest.engine.swap import CodeSwap

SOURCE = "LIMIT = 1\n\n\ndef f(x):\n    return x + LIMIT\n"


def load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_restore_undoes_what_the_run_wrote_in_the_module(tmp_path: Path) -> None:
    path = tmp_path / "swap_namespace_mod.py"
    path.write_text(SOURCE)
    module = load(path, "swap_namespace_mod")
    original_f = module.f
    swap = CodeSwap(str(path), SOURCE, 4)
    swap.prepare()
    assert swap.apply(ast.parse(SOURCE)) == 1
    # What a mutant's run may do to its module: bind a new name, rebind one, drop one;
    # and a submodule imported for the first time is bound to its package.
    namespace = vars(module)
    namespace["cached"] = "1.0"
    namespace["LIMIT"] = 100
    del namespace["f"]
    submodule = types.ModuleType("swap_namespace_mod.sub")
    namespace["sub"] = submodule
    swap.restore()
    assert "cached" not in namespace
    assert module.LIMIT == 1
    assert module.f is original_f and module.f(1) == 2
    assert module.sub is submodule  # the import system would not bind it again
    # Nothing left to put back: a second restore changes nothing.
    namespace["later"] = 1
    swap.restore()
    assert namespace["later"] == 1
