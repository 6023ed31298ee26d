"""The example test shown with a quest: its own covering test, a neighbour's, else a skeleton."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

from pytest_quest.core.model import Quest, Ratchet
from pytest_quest.core.view import recorded_at_scan
from pytest_quest.engine.testfiles import digest


def module_name(rel_path: str, rootdir: Path) -> str:
    """The import name of a source file: packages are folders with ``__init__.py``."""
    path = rootdir / rel_path
    parts = [path.stem] if path.stem != "__init__" else []
    folder = path.parent
    while (folder / "__init__.py").exists() and folder != folder.parent:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts) or path.stem


class _TestFiles:
    """Test files parsed once per call: a quest may have a hundred covering tests in one file."""

    def __init__(self, rootdir: Path) -> None:
        self.rootdir = rootdir
        self.parsed: dict[str, tuple[str, ast.Module] | None] = {}
        # A test's names, and its rank as an example (no check first, length), by its id
        # without parameters.
        self.seen: dict[str, tuple[frozenset[str], tuple[bool, int]] | None] = {}

    def parse(self, file_part: str) -> tuple[str, ast.Module] | None:
        if file_part not in self.parsed:
            try:
                source = (self.rootdir / file_part).read_text(encoding="utf-8")
                self.parsed[file_part] = (source, ast.parse(source))
            except (OSError, SyntaxError, ValueError):
                self.parsed[file_part] = None
        return self.parsed[file_part]

    def names(self, nodeid: str) -> tuple[frozenset[str], tuple[bool, int]] | None:
        """The names the test's code uses (names and attributes), and its rank as an example:
        whether it checks nothing (no ``assert``, ``assert*`` or ``raises`` call: a benchmark
        that only runs the code is no pattern to follow), then its length in lines."""
        plain = re.sub(r"\[.*\]$", "", nodeid)
        if plain not in self.seen:
            found = self._node(plain)
            if found is None:
                self.seen[plain] = None
            else:
                node = found[1]
                used = frozenset(
                    n.id if isinstance(n, ast.Name) else n.attr
                    for n in ast.walk(node)
                    if isinstance(n, (ast.Name, ast.Attribute))
                )
                # As shown: a parameter table in its decorators counts.
                decorators = getattr(node, "decorator_list", [])
                start: int = min([d.lineno for d in decorators] + [getattr(node, "lineno", 0)])
                end: int = getattr(node, "end_lineno", None) or start
                self.seen[plain] = (used, (not _checks(node), end - start))
        return self.seen[plain]

    def _node(self, nodeid: str) -> tuple[str, ast.AST] | None:
        file_part, _, rest = nodeid.partition("::")
        if not rest:
            return None
        parsed = self.parse(file_part)
        if parsed is None:
            return None
        source, tree = parsed
        names = [re.sub(r"\[.*\]$", "", part) for part in rest.split("::")]
        body: list[ast.stmt] = tree.body
        node: ast.AST | None = None
        for name in names:
            node = next(
                (
                    n
                    for n in body
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    and n.name == name
                ),
                None,
            )
            if node is None:
                return None
            body = getattr(node, "body", [])
        if node is None:
            return None
        return source, node

    def test(self, nodeid: str) -> tuple[str, ast.AST] | None:
        """The test's source (decorators included, dedented) and its node, or None."""
        found = self._node(nodeid)
        if found is None:
            return None
        source, node = found
        if ast.get_source_segment(source, node) is None:
            return None
        decorators = getattr(node, "decorator_list", [])
        lines = source.splitlines()
        start = min([d.lineno for d in decorators] + [node.lineno])  # type: ignore[attr-defined]
        end = node.end_lineno or node.lineno  # type: ignore[attr-defined]
        text = "\n".join(lines[start - 1 : end])
        indent = len(text) - len(text.lstrip(" "))
        return "\n".join(line[indent:] for line in text.splitlines()), node


def _checks(node: ast.AST) -> bool:
    """Whether the test's code checks something: an ``assert``, or a call of ``assert*``,
    ``raises``, ``warns`` or ``fail`` (unittest, pytest)."""
    for child in ast.walk(node):
        if isinstance(child, ast.Assert):
            return True
        if isinstance(child, ast.Call):
            func = child.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name.startswith("assert") or name in ("raises", "warns", "fail"):
                return True
    return False


def called_names(quest: Quest, rootdir: Path) -> set[str]:
    """The names a test that calls the quest's function in its own process must use.

    The function's own name (a call, a reference such as ``raises(E, f, x)``, an attribute:
    a method or a property); for a dunder method (``__init__``, ``__eq__``...), the class
    (built, then used by the operator or the call the dunder serves); for a nested
    function, each enclosing function (the only way to reach it).
    """
    parts = quest.qualname.split(".")
    names = {parts[-1]}
    if len(parts) > 1 and parts[-1].startswith("__") and parts[-1].endswith("__"):
        names.add(parts[-2])
    if len(parts) > 1:
        names |= _enclosing_functions(quest, rootdir)
    return names


def _enclosing_functions(quest: Quest, rootdir: Path) -> set[str]:
    """The functions (not classes) that enclose the quest's function, by name."""
    try:
        tree = ast.parse((rootdir / quest.file).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return set()
    found: set[str] = set()
    body: list[ast.stmt] = tree.body
    for part in quest.qualname.split(".")[:-1]:
        node = next(
            (
                n
                for n in body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name == part
            ),
            None,
        )
        if node is None:
            break
        if not isinstance(node, ast.ClassDef):
            found.add(part)
        body = node.body
    return found


def example_for(
    quest: Quest,
    ratchet: Ratchet,
    rootdir: Path,
    *,
    recorded: Callable[[], set[str]] | None = None,
) -> dict[str, str]:
    """A passing test to start from: the function's own, else a neighbour's, else a skeleton.

    Only a test whose own code makes the call is shown, the shortest first; own covering
    tests, then the nearest functions' (same class first).  A test written since the
    scan is shown only as the function's own: another quest's new test is rarely the
    pattern to follow.
    """
    seen = scanned_tests(ratchet, rootdir, recorded)
    files = _TestFiles(rootdir)
    own = _shortest(files, quest.covering_tests, called_names(quest, rootdir), lambda _: True)
    if own is not None:
        return {"kind": "own", "test": own[0], "function": quest.id, "source": own[1]}
    owner = quest.qualname.rpartition(".")[0]
    neighbours = sorted(
        (
            q
            for q in ratchet.quests.values()
            if q.file == quest.file and q.id != quest.id and q.covering_tests
        ),
        key=lambda q: (
            not owner or q.qualname.rpartition(".")[0] != owner,
            abs(q.first - quest.first),
            q.first,
        ),
    )
    for neighbour in neighbours:
        found = _shortest(
            files, neighbour.covering_tests, called_names(neighbour, rootdir), seen.__contains__
        )
        if found is not None:
            return {
                "kind": "neighbour",
                "test": found[0],
                "function": neighbour.id,
                "source": found[1],
            }
    return {"kind": "skeleton", "test": "", "function": "", "source": skeleton(quest, rootdir)}


#: Covering tests read to choose an example: a function run by thousands of tests (a
#: helper every test reaches) needs no more than these to find a short one that calls it.
_READ_AT_MOST = 200


def _shortest(
    files: _TestFiles, nodeids: list[str], names: set[str], allowed: Callable[[str], bool]
) -> tuple[str, str] | None:
    """The shortest test of `nodeids` that names one of `names` in its own code, with its source.

    A test is parsed once (its names kept for every quest that asks), its source read
    only for the one chosen.
    """
    best: tuple[tuple[bool, int], str] | None = None
    for nodeid in sorted(nodeids)[:_READ_AT_MOST]:
        if not allowed(nodeid):
            continue
        found = files.names(nodeid)
        if found is None or not names & found[0]:
            continue
        if best is None or (found[1], nodeid) < best:
            best = (found[1], nodeid)
    if best is None:
        return None
    shown = files.test(best[1])
    return (best[1], shown[0]) if shown is not None else None


class _Scanned:
    """Node ids the scan saw: in a test file unchanged since, or recorded by the scan itself."""

    def __init__(
        self, ratchet: Ratchet, rootdir: Path, recorded: Callable[[], set[str]] | None = None
    ) -> None:
        self.ratchet = ratchet
        # Given when `ratchet` holds some quests only (`next` from its kept view).
        self.given = recorded
        self.rootdir = rootdir
        self.unchanged: dict[str, bool] = {}
        self.missing: set[str] = set()
        # Covering tests recorded at a scan (every quest's but a PASS the gate gave):
        # gathered when first needed (a lazy read decodes every quest's list for it).
        self._recorded: set[str] | None = None

    @property
    def recorded(self) -> set[str]:
        if self._recorded is None and self.given is not None:
            self._recorded = self.given()
        if self._recorded is None:
            self._recorded = {
                nodeid
                for q in self.ratchet.quests.values()
                if recorded_at_scan(q)
                for nodeid in q.covering_tests
            }
        return self._recorded

    def __contains__(self, nodeid: object) -> bool:
        if not isinstance(nodeid, str):
            return False
        path = nodeid.split("::")[0]
        if path not in self.unchanged:
            recorded = self.ratchet.test_files.get(path)
            try:
                self.unchanged[path] = recorded == digest(self.rootdir / path)
            except OSError:
                self.unchanged[path] = False
                # Gone or unreadable: no source to show from it, so no need to
                # decode every quest's list to ask whether the scan saw it.
                self.missing.add(path)
        if path in self.missing:
            return False
        return self.unchanged[path] or nodeid in self.recorded


def scanned_tests(
    ratchet: Ratchet, rootdir: Path, recorded: Callable[[], set[str]] | None = None
) -> _Scanned:
    return _Scanned(ratchet, rootdir, recorded)


def skeleton(quest: Quest, rootdir: Path) -> str:
    module = module_name(quest.file, rootdir)
    parts = quest.qualname.split(".")
    top = parts[0]
    test_name = "test_" + "_".join(re.sub(r"\W", "_", p).strip("_").lower() for p in parts)
    call = f"{top}(...)" if len(parts) == 1 else f"{top}(...).{parts[-1]}(...)"
    return (
        f"from {module} import {top}\n\n\n"
        f"def {test_name}():\n"
        f"    result = {call}\n"
        f"    assert result == ...  # check what it returns, not just that it runs\n"
    )
