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


def read_test_source(nodeid: str, rootdir: Path) -> str | None:
    """The source of the test function a node id names, or None."""
    file_part, _, rest = nodeid.partition("::")
    if not rest:
        return None
    names = [re.sub(r"\[.*\]$", "", part) for part in rest.split("::")]
    path = rootdir / file_part
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return None
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
    segment = ast.get_source_segment(source, node)
    if segment is None:
        return None
    decorators = getattr(node, "decorator_list", [])
    lines = source.splitlines()
    start = min([d.lineno for d in decorators] + [node.lineno])  # type: ignore[attr-defined]
    end = node.end_lineno or node.lineno  # type: ignore[attr-defined]
    text = "\n".join(lines[start - 1 : end])
    indent = len(text) - len(text.lstrip(" "))
    return "\n".join(line[indent:] for line in text.splitlines())


def example_for(
    quest: Quest,
    ratchet: Ratchet,
    rootdir: Path,
    *,
    recorded: Callable[[], set[str]] | None = None,
) -> dict[str, str]:
    """A passing test to start from: the function's own, else a neighbour's, else a skeleton.

    Own covering tests first; then the passing tests of the nearest
    functions, those of the same class before the rest of the module. A
    test written since the scan (its file new, or changed and the test not
    seen by the scan) is shown only as the function's own: the agent's test
    for another quest is rarely the pattern to follow.
    """
    seen = scanned_tests(ratchet, rootdir, recorded)
    for nodeid in sorted(quest.covering_tests, key=lambda n: (n not in seen, n)):
        source = read_test_source(nodeid, rootdir)
        if source:
            return {"kind": "own", "test": nodeid, "function": quest.id, "source": source}
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
        for nodeid in sorted(neighbour.covering_tests):
            if nodeid not in seen:
                continue
            source = read_test_source(nodeid, rootdir)
            if source:
                return {
                    "kind": "neighbour",
                    "test": nodeid,
                    "function": neighbour.id,
                    "source": source,
                }
    return {"kind": "skeleton", "test": "", "function": "", "source": skeleton(quest, rootdir)}


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
