"""The code under test as source: its functions, their fingerprints, syntax, exclusions.

No measurement here: what coverage.py's ``code_regions()`` and the AST say of a file.
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import FunctionFacts, make_quest_id


@dataclass
class FunctionInfo:
    """One function region of a source file, before any measurement."""

    file: str
    qualname: str
    ordinal: int
    start: int
    first: int
    last: int
    lines: set[int]
    fingerprint: str

    @property
    def quest_id(self) -> str:
        return make_quest_id(self.file, self.qualname, self.ordinal)

    def facts(self, statements: int, branches: int, **measured: Any) -> FunctionFacts:
        """This function's identity with what was measured of it."""
        return FunctionFacts(
            file=self.file,
            qualname=self.qualname,
            ordinal=self.ordinal,
            start=self.start,
            first=self.first,
            last=self.last,
            fingerprint=self.fingerprint,
            statements=statements,
            branches=branches,
            **measured,
        )


def fingerprint_node(node: ast.AST) -> str:
    """A digest of a function's code, blind to comments, blank lines and position.

    Built on the AST, so a ``# pragma: no cover`` comment or the function
    moving down the file leaves it unchanged (step 2 reports pragmas on its
    own), while any change to the code itself changes it.
    """
    dump = ast.dump(node, annotate_fields=True, include_attributes=False)
    return "sha256:" + hashlib.sha256(dump.encode("utf-8")).hexdigest()[:32]


def source_functions(rel_path: str, source: str) -> list[FunctionInfo]:
    """Every function of `source`, as coverage.py's ``code_regions()`` sees them.

    Twins (same qualified name twice in one file: a property getter and
    setter, defs under if/else) get ordinals 1, 2... in source order.
    Raises `QuestUsageError` naming file and line on a syntax error.
    """
    try:
        tree = ast.parse(source, filename=rel_path)
        regions = code_regions(source)
    except SyntaxError as exc:
        raise QuestUsageError(
            f"{rel_path}:{exc.lineno}: syntax error in the code under test: {exc.msg}; "
            "fix it before running pytest-quest"
        ) from None
    defs: dict[int, ast.AST] = {
        node.lineno: node
        for node in _statements(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    function_regions = sorted((r for r in regions if r.kind == "function"), key=lambda r: r.start)
    # A region's lines leave out nested functions; the function ends where its
    # last nested function ends.  Children start on a line of their parent.
    last_line: dict[int, int] = {}
    for region in reversed(function_regions):
        found = defs.get(region.start)
        end = getattr(found, "end_lineno", None) if found is not None else None
        last = end if isinstance(end, int) else max(region.lines | {region.start})
        last_line[region.start] = last
    seen: dict[str, int] = defaultdict(int)
    functions = []
    for region in function_regions:
        seen[region.name] += 1
        found = defs.get(region.start)
        functions.append(
            FunctionInfo(
                file=rel_path,
                qualname=region.name,
                ordinal=seen[region.name],
                start=region.start,
                first=region.start,
                last=last_line[region.start],
                lines=set(region.lines),
                fingerprint=fingerprint_node(found) if found is not None else "",
            )
        )
    return functions


def _statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement of `tree`, at any depth: where a ``def`` can stand.

    Expressions (most of a tree's nodes) hold no statement, so they are
    never visited: `ast.walk` would visit them all.
    """
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                stack.extend(item for item in value if isinstance(item, _HOLDERS))


# Nodes that are statements, or hold statements (an ``except`` clause, a ``case``).
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def fingerprint_as(path: Path, start: int, name: str) -> str:
    """The fingerprint of the function defined on line `start` of `path` as if named `name`.

    How a renamed function is recognised: its fingerprint under its old name
    is the old one.  "" when the file does not parse or has no def there.
    """
    try:
        tree = ast.parse(read_source(path))
    except (SyntaxError, ValueError):
        return ""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == start:
            renamed = copy.copy(node)
            renamed.name = name
            return fingerprint_node(renamed)
    return ""


def facts_from_source(
    quest_id: str, file: str, rootdir: Path, *, all_missing: bool
) -> FunctionFacts | None:
    """The function `quest_id` as its source shows it, without any measurement.

    With `all_missing`, every line of its region is missing (no test ran it);
    else it carries no counts, only its identity (position, fingerprint).
    None when the file or the function is gone, or the file does not parse.
    """
    source = read_source(rootdir / file)
    if not source:
        return None
    try:
        functions = source_functions(file, source)
    except QuestUsageError:
        return None
    for info in functions:
        if info.quest_id == quest_id:
            if not all_missing:
                return info.facts(statements=0, branches=0)
            lines = sorted(info.lines)
            return info.facts(statements=len(lines), branches=0, missing_lines=lines)
    return None


def read_source(path: Path) -> str:
    """The text of `path`; "" when it does not exist, undecodable bytes replaced."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError:
        return path.read_bytes().decode("utf-8", errors="replace")


def check_syntax(sources: Iterable[str], rootdir: Path) -> None:
    """Raise `QuestUsageError` naming file and line of the first source that does not parse.

    A syntax error in the code under test reaches pytest as an import error of
    the test module; this names the file that is really at fault.
    """
    for source in sources:
        root = Path(source) if os.path.isabs(source) else rootdir / source
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
        for path in files:
            try:
                ast.parse(read_source(path), filename=str(path))
            except SyntaxError as exc:
                raise QuestUsageError(
                    f"{relpath(str(path), rootdir)}:{exc.lineno}: syntax error in the code "
                    f"under test: {exc.msg}; fix it before running pytest-quest"
                ) from None


@functools.lru_cache(maxsize=256)
def code_regions(source: str) -> list[Any]:
    """coverage.py's regions of `source`, parsed once per process (the fold and analyze() share it)."""
    # Imported on first use, for start-up time: commands that read no source
    # (status, next) never load coverage.py.
    from coverage.regions import code_regions as regions_of

    return list(regions_of(source))


def relpath(filename: str, rootdir: Path) -> str:
    """`filename` relative to `rootdir`, with forward slashes."""
    try:
        return Path(os.path.relpath(filename, rootdir)).as_posix()
    except ValueError:  # pragma: no cover - another drive on Windows
        return Path(filename).as_posix()


def new_exclusions(
    facts: FunctionFacts,
    baseline_offsets: set[int],
    *,
    source_lines: list[str],
    patterns: list[str],
) -> list[tuple[int, str]]:
    """Excluded lines of a function that were not excluded at issue, with the pattern at fault.

    Offsets are relative to the function's first line, so the function moving
    in its file is no new exclusion.
    """
    found = []
    for line in facts.excluded_lines:
        if line - facts.first in baseline_offsets:
            continue
        text = source_lines[line - 1] if 0 < line <= len(source_lines) else ""
        pattern = next((p for p in patterns if re.search(p, text)), "")
        found.append((line, pattern))
    return found


def partial_branch_lines(
    source_lines: list[str], first: int, last: int, patterns: list[str]
) -> list[tuple[int, str]]:
    """Lines `first`..`last` that coverage's ``partial_branches`` patterns match, with the pattern."""
    combined = _combined(tuple(patterns))
    if combined is None:
        return []
    found = []
    for line in range(first, min(last, len(source_lines)) + 1):
        text = source_lines[line - 1]
        if combined.search(text):
            found.append((line, next(p for p in patterns if _search(p, text))))
    return found


@functools.lru_cache(maxsize=16)
def _combined(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for all `patterns` (as coverage.py joins them); None when none is valid."""
    valid = [p for p in patterns if _search(p, "") or _compiles(p)]
    return re.compile("|".join(f"(?:{p})" for p in valid)) if valid else None


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False


def _code_part(text: str) -> str:
    """`text` without a trailing ``#`` comment (a ``#`` inside a string literal is kept)."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#":
            return text[:index]
    return text


def new_partial_exclusions(
    facts: FunctionFacts,
    baseline: list[str] | None,
    *,
    source_lines: list[str],
    patterns: list[str],
) -> list[tuple[int, str]]:
    """Partial-branch lines of a function that were not there at issue, with the pattern at fault.

    `baseline` holds the stripped text of the lines matched at issue.  A quest
    issued before they were recorded (None) counts a line as new when only its
    comment matches: step 1 already holds the code itself unchanged.
    """
    remaining = list(baseline or [])
    found = []
    for line, pattern in partial_branch_lines(source_lines, facts.first, facts.last, patterns):
        text = source_lines[line - 1].strip()
        if baseline is None:
            if not _search(pattern, _code_part(text)):
                found.append((line, pattern))
        elif text in remaining:
            remaining.remove(text)
        else:
            found.append((line, pattern))
    return found
