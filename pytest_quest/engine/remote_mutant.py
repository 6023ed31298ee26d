"""Mutants in the processes the tests start: the mutation child's grandchildren run them too.

The mutation child points coverage.py's start-up hook
(``COVERAGE_PROCESS_START``) at an rcfile that loads this module as a
coverage.py plugin.  A record file, rewritten in place around each test run,
says which mutant (or the probe) of which function runs, and its marks file.
It is one fixed-size write carrying its own digest (a rename would flush the
file's data): a torn read is read again.  `coverage_init` imports the
function's module from the mutated tree, and the mark functions tell the
child the test reached the mutant.  Under bwrap the mutant is in the
bytecode file instead (engine/ondisk.py) and the hook only places the marks.
How and limits: docs/judge.md, "Across processes".
"""

from __future__ import annotations

import builtins
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import types
from collections.abc import Sequence
from typing import Any

from pytest_quest.core.mutant_ast import CHANGED, REACHED
from pytest_quest.core.mutants import changed_value, mutated_tree, probe_tree
from pytest_quest.engine.ondisk import ARMED, ONDISK, OnDisk
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


# The record's size: one write at offset 0 (a longer record is written whole and renamed).
RECORD_SIZE = 4096


def record_bytes(mode: str = "off", **spec: Any) -> bytes:
    """The record of one run: its digest, a space, its JSON, a newline; padded to `RECORD_SIZE`."""
    body = json.dumps({"mode": mode, **spec}, sort_keys=True, ensure_ascii=True)
    line = f"{hashlib.sha256(body.encode('ascii')).hexdigest()} {body}\n".encode("ascii")
    return line.ljust(RECORD_SIZE, b" ")


def read_record(path: str, tries: int = 200) -> dict[str, Any]:
    """The record at `path` as written whole (its first line matches its digest); {} if never."""
    for _ in range(tries):
        try:
            with open(path, "rb") as handle:
                line = handle.read().split(b"\n", 1)[0]
        except OSError:
            return {}
        digest, _, body = line.partition(b" ")
        if body and hashlib.sha256(body).hexdigest().encode("ascii") == digest:
            try:
                found = json.loads(body)
            except ValueError:
                return {}
            return found if isinstance(found, dict) else {}
    return {}


class RemoteMutants:
    """The mutation child's side: the rcfile its tests' processes read, one marks file per run."""

    def __init__(self, root: str | None = None, overlay: str = "") -> None:
        # The judge makes the folder (and removes it however the child ends).
        self.root = root or tempfile.mkdtemp(prefix="pytest-quest-children-")
        self.owned = root is None
        os.makedirs(os.path.join(self.root, "nothing"), exist_ok=True)
        self.rcfile = os.path.join(self.root, "pytest-quest-child.rc")
        self.record = os.path.join(self.root, "pytest-quest-child.run")
        self.runs = 0
        self._fd = -1
        self._record = b""
        # `overlay`: the project's root where it is a throwaway layer (the judge says
        # so, engine/ondisk.py checks): each run's mutant goes into its bytecode file too.
        self.ondisk = OnDisk(overlay, self.record) if overlay else None
        self._write(record_bytes())
        _replace(self.rcfile, rcfile_text(self.root, "record", record=self.record).encode("utf-8"))

    def _write(self, data: bytes) -> None:
        # A forkserver started in an earlier run would fork this run's workers
        # from the module it imported then (another mutant, or none).
        stop_forkserver()
        self._record = data
        if len(data) > RECORD_SIZE or self._fd < 0:
            _replace(self.record, data)
            if self._fd >= 0:
                os.close(self._fd)
            self._fd = os.open(self.record, os.O_WRONLY)  # not inherited (PEP 446)
        else:
            os.pwrite(self._fd, data, 0)

    def arm(self, file: str, start: int, index: int | None) -> str:
        """The next run's processes run mutant `index` (None: the probe); its marks file.

        Where the bytecode file holds the run's code (engine/ondisk.py), the
        record is the same for the probe and every mutant: nothing tells them apart.
        """
        self.runs += 1
        if self.ondisk is not None and self.ondisk.write(file, start, index):
            stop_forkserver()
            marks = os.path.join(self.root, "marks")
            if os.path.lexists(marks):
                os.unlink(marks)
            record = record_bytes(ONDISK, file=file, marks=marks)
            if record != self._record:
                self._write(record)
            return marks
        marks = os.path.join(self.root, f"marks-{self.runs}")
        mode = "probe" if index is None else "mutant"
        spec: dict[str, Any] = {"file": file, "start": start, "marks": marks}
        if index is not None:
            spec["index"] = index
        self._write(record_bytes(mode, **spec))
        return marks

    def disarm(self) -> None:
        if self.ondisk is not None and self.ondisk.written:
            self.ondisk.restore()  # the record stays: the next run of the function reads the same
            return
        self._write(record_bytes())

    def writes(self, file: str) -> bool:
        """Whether the runs' mutants are written into `file` (engine/ondisk.py)."""
        return self.ondisk is not None and self.ondisk.writable(file)

    def close(self) -> None:
        if self.ondisk is not None:
            self.ondisk.restore()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self.owned:
            shutil.rmtree(self.root, ignore_errors=True)
        else:
            for name in os.listdir(self.root) if os.path.isdir(self.root) else []:
                path = os.path.join(self.root, name)
                if os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)


def _replace(path: str, data: bytes) -> None:
    temporary = path + ".next"
    with open(temporary, "wb") as handle:
        handle.write(data)
    os.replace(temporary, path)


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


# The run record this process's start-up hook read (set when it ran: a fresh
# run started before its mutant was chosen reads it again, `apply_again`).
STARTED_WITH: list[str] = []


def coverage_init(reg: Any, options: dict[str, Any]) -> None:  # pragma: no cover - grandchildren
    """coverage.py's plugin entry point, run at start-up of a process the tests started."""
    if options.get("mode") == "record":
        STARTED_WITH[:] = [str(options.get("record") or "")]
        options = read_record(STARTED_WITH[0])
    _apply(options)


def apply_again() -> bool:
    """The run record applied now, in place of what the start-up hook applied; False if too late.

    For a fresh run (plugin/fresh_kill.py) held before any conftest until its
    mutant was chosen.  Too late: a plugin imported the function's module
    before the hold.  Nothing is done where no start-up hook ran.
    """
    if not STARTED_WITH:
        return True
    sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, _Finder)]
    for name in (REACHED, CHANGED):
        if hasattr(builtins, name):
            delattr(builtins, name)
    options = read_record(STARTED_WITH[0])
    if options.get("mode") in ARMED:
        filename = os.path.realpath(str(options.get("file")))
        for module in list(sys.modules.values()):
            where = getattr(module, "__file__", None)
            if isinstance(where, str) and os.path.realpath(where) == filename:
                return False
    _apply(options)
    return True


def first_in_line() -> None:
    """The mutant's import hook put back ahead of every finder inserted since start-up.

    pytest's assertion rewriter, inserted at the head later, would load the
    original from its file (`_meta_path`).  Called before any conftest or
    test module is imported.
    """
    ours = [finder for finder in sys.meta_path if isinstance(finder, _Finder)]
    if ours and sys.meta_path[: len(ours)] != ours:
        sys.meta_path[:] = ours + [f for f in sys.meta_path if not isinstance(f, _Finder)]


def imported_before() -> str:
    """The module of the mutant's file when it was imported without the mutant (else "").

    A pytest plugin (or what it imports) loaded before any conftest: the
    assertion rewriter loaded it from its file; the mutant cannot be in
    place from the start in this process.
    """
    ours = [finder for finder in sys.meta_path if isinstance(finder, _Finder)]
    for finder in ours:
        for name, module in list(sys.modules.items()):
            where = getattr(module, "__file__", None)
            if not isinstance(where, str) or os.path.realpath(where) != finder.filename:
                continue
            if not isinstance(getattr(getattr(module, "__spec__", None), "loader", None), _Loader):
                return name
    return ""


def _apply(options: dict[str, Any]) -> None:  # pragma: no cover - grandchildren
    mode = options.get("mode")
    if mode not in ARMED:
        return
    try:
        filename = os.path.realpath(str(options["file"]))
        marks = str(options["marks"])
        code = None if mode == ONDISK else _compiled(filename, mode, options)
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
    if code is None:
        # The bytecode file holds the mutant (engine/ondisk.py): every import reads it,
        # this hook's own imports too.
        return
    imported_anew(filename, __name__)
    if not isinstance(sys.meta_path, _FinderFirst):
        sys.meta_path = _FinderFirst(sys.meta_path)
    sys.meta_path.insert(0, _Finder(filename, code))


def imported_anew(filename: str, hook: str) -> list[str]:
    """The modules of `filename`, and those bound to them, dropped from ``sys.modules``
    when this start-up hook (module `hook`) imported them itself; their names.

    When pytest-quest judges itself, the hook has imported the judged modules
    before placing the mutant; dropped, their next import loads the mutant.
    The hook keeps the originals it bound, and its own module stays.
    """
    package = hook.split(".", 1)[0] + "."
    ours = {
        name: module
        for name, module in list(sys.modules.items())
        if name.startswith(package)
        and name != hook
        and isinstance(module, types.ModuleType)
        and getattr(module, "__path__", None) is None
    }
    dropped = {
        name
        for name, module in ours.items()
        if isinstance(getattr(module, "__file__", None), str)
        and os.path.realpath(str(module.__file__)) == filename
    }
    grown = bool(dropped)
    while grown:
        grown = False
        for name, module in ours.items():
            if name not in dropped and any(
                _bound_to(value, dropped) for value in list(vars(module).values())
            ):
                dropped.add(name)
                grown = True
    for name in dropped:
        del sys.modules[name]
    return sorted(dropped)


def _bound_to(value: object, names: set[str]) -> bool:
    """Whether `value` is one of the modules `names`, or a function or class of one."""
    if isinstance(value, types.ModuleType):
        return value.__name__ in names
    return callable(value) and getattr(value, "__module__", None) in names


def _compiled(filename: str, mode: str, options: dict[str, Any]) -> types.CodeType:
    """The module of `filename` with the run's mutant (or the probe) applied, compiled."""
    start = int(options["start"])
    with open(filename, encoding="utf-8") as handle:
        source = handle.read()
    if mode == "mutant":
        tree = mutated_tree(source, start, int(options["index"]))
    else:
        tree = probe_tree(source, start)
    return compile(tree, filename, "exec", dont_inherit=True)


class _FinderFirst(list):  # type: ignore[type-arg]
    """``sys.meta_path`` with the mutant's finder kept ahead of the finders inserted after it.

    pytest inserts its assertion rewriter at the head once the interpreter
    started; it loads every module of a package marked for rewriting from its
    file: the original, never the mutant.
    """

    def insert(self, index: Any, item: Any) -> None:
        ours = next((i for i, f in enumerate(self) if not isinstance(f, _Finder)), len(self))
        if not isinstance(item, _Finder) and 0 <= index < ours:
            index = ours
        super().insert(index, item)
