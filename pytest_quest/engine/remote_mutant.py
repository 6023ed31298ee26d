"""Mutants in the processes the tests start: the mutation child's grandchildren run them too.

The mutation child (plugin/mutation_child.py) points coverage.py's start-up
hook (``COVERAGE_PROCESS_START``, the ``a1_coverage.pth`` file coverage.py
installs) at an rcfile of its own that loads this module as a coverage.py
plugin.  It rewrites the rcfile before each test run: off, or which mutant
(or the probe, the original with a reach mark) of which function, and a
marks file for that run.  In a process the test starts, `coverage_init`
then imports the function's module from the mutated tree (an import hook
for that one file: ``import``, ``python -m``, ``runpy``), and the mark
functions create the marks file: the mutation child counts the run's test
as having reached the mutant.  Limits: docs/gate.md, "Across processes".
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import tempfile
import types
from collections.abc import Sequence
from typing import Any

from pytest_quest.core.mutants import CHANGED, REACHED, changed_value, mutated_tree, probe_tree
from pytest_quest.engine.subproc import stop_forkserver

SECTION = "pytest_quest.engine.remote_mutant"
_QUIET = "no-data-collected, module-not-imported, module-not-measured, already-imported"


def rcfile_text(root: str, mode: str = "off", **spec: Any) -> str:
    """The grandchildren's configuration: `mode` off, ``mutant`` or ``probe`` with its `spec`."""
    lines = [
        "[run]",
        f"data_file = {root}/.coverage-remote",
        "parallel = True",
        f"source = {root}/nothing",
        f"plugins = {SECTION}",
        f"disable_warnings = {_QUIET}",
        "",
        f"[{SECTION}]",
        f"mode = {mode}",
    ]
    lines += [f"{key} = {value}" for key, value in sorted(spec.items())]
    return "\n".join(lines).replace("%", "%%") + "\n"


class RemoteMutants:
    """The mutation child's side: the rcfile its tests' processes read, one marks file per run."""

    def __init__(self, root: str | None = None) -> None:
        # The judge makes the folder (and removes it however the child ends).
        self.root = root or tempfile.mkdtemp(prefix="pytest-quest-children-")
        self.owned = root is None
        os.makedirs(os.path.join(self.root, "nothing"), exist_ok=True)
        self.rcfile = os.path.join(self.root, "pytest-quest-child.rc")
        self.runs = 0
        self._write(rcfile_text(self.root))

    def _write(self, text: str) -> None:
        # A forkserver started in an earlier run would fork this run's workers
        # from the module it imported then (another mutant, or none).
        stop_forkserver()
        temporary = self.rcfile + ".next"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, self.rcfile)

    def arm(self, file: str, start: int, index: int | None) -> str:
        """The next run's processes run mutant `index` (None: the probe); its marks file."""
        self.runs += 1
        marks = os.path.join(self.root, f"marks-{self.runs}")
        mode = "probe" if index is None else "mutant"
        spec: dict[str, Any] = {"file": file, "start": start, "marks": marks}
        if index is not None:
            spec["index"] = index
        self._write(rcfile_text(self.root, mode, **spec))
        return marks

    def disarm(self) -> None:
        self._write(rcfile_text(self.root))

    def close(self) -> None:
        if self.owned:
            shutil.rmtree(self.root, ignore_errors=True)
        else:
            for name in os.listdir(self.root) if os.path.isdir(self.root) else []:
                path = os.path.join(self.root, name)
                if os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)


class _Loader(importlib.abc.Loader):
    def __init__(self, code: types.CodeType) -> None:
        self.code = code

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        exec(self.code, module.__dict__)

    def get_code(self, fullname: str) -> types.CodeType:  # runpy (``python -m``)
        return self.code


class _Finder(importlib.abc.MetaPathFinder):
    """Loads the one file under judgement from its mutated tree; every other import as usual."""

    def __init__(self, filename: str, code: types.CodeType) -> None:
        self.filename = filename
        self.code = code

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or os.path.realpath(spec.origin) != self.filename:
            return None
        return importlib.util.spec_from_file_location(
            fullname,
            spec.origin,
            loader=_Loader(self.code),
            submodule_search_locations=spec.submodule_search_locations,
        )


def coverage_init(reg: Any, options: dict[str, Any]) -> None:  # pragma: no cover - grandchildren
    """coverage.py's plugin entry point, run at start-up of a process the tests started."""
    mode = options.get("mode")
    if mode not in ("mutant", "probe"):
        return
    try:
        filename = os.path.realpath(str(options["file"]))
        start = int(options["start"])
        marks = str(options["marks"])
        with open(filename, encoding="utf-8") as handle:
            source = handle.read()
        if mode == "mutant":
            tree = mutated_tree(source, start, int(options["index"]))
        else:
            tree = probe_tree(source, start)
        code = compile(tree, filename, "exec", dont_inherit=True)
    except Exception:
        return  # nothing applied here: the run counts as not reaching the mutant
    done: list[bool] = []

    def reached() -> None:
        if not done:
            done.append(True)
            try:
                with open(marks, "a", encoding="utf-8"):
                    pass
            except OSError:
                pass

    def mark(value: Any) -> Any:
        reached()
        return value

    def changed(value: Any) -> Any:
        reached()
        return changed_value(value)

    setattr(builtins, REACHED, mark)
    setattr(builtins, CHANGED, changed)
    sys.meta_path.insert(0, _Finder(filename, code))


__all__ = ["SECTION", "RemoteMutants", "coverage_init", "rcfile_text"]
