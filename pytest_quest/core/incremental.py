"""Incremental scan and check: which tests a change can affect (pure: facts in, selection out).

A previous run left, per test, its outcome and the lines (arcs) it executed
in the code under test, with a digest of every project file and a key of the
environment.  After a change, a test must run again when it can behave
differently; every other test keeps its recorded outcome and arcs, moved to
the lines its functions occupy now.  The rule, in order:

1. The environment (Python, installed packages, the command's arguments,
   the measured sources) differs: everything runs (`Full`, with why).
2. A changed file that is neither code under test nor a test file nor a
   conftest (a helper, a data file, a configuration file) may be read by any
   test: everything runs.
3. A changed file of the code under test whose module-level code changed
   (anything outside its functions, decorators and class bodies included)
   changes what every importer sees: everything runs.
4. Otherwise a test runs again when it is new, did not pass last time, started
   measured processes, sits in a changed test file or under a changed
   conftest, or executed a line of a function whose text changed (or of a file
   that is gone).

A function is unchanged when its text, from the ``def`` line to its end, is
the same but for blank lines and comments; its lines then map one to one.
"""

from __future__ import annotations

import ast
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain

PASSED = "passed"
# A function's place in its module's outline (no line of Python source starts with NUL).
_MARK = "\0def "


@dataclass(frozen=True)
class LineMap:
    """Old line -> new line of one changed source file; `module_changed` says why none.

    Lines absent from `lines` belong to functions whose text changed (or
    that are gone): a test that executed one must run again.
    """

    lines: Mapping[int, int] = field(default_factory=dict)
    module_changed: bool = False


@dataclass(frozen=True)
class Full:
    """Everything runs, and `reason` says why (one line for the user)."""

    reason: str


@dataclass(frozen=True)
class Changes:
    """What changed since the recorded run, in the terms of the selection rule."""

    source_maps: Mapping[str, LineMap] = field(default_factory=dict)
    # Source files gone since the run: every line of theirs is unmapped.
    removed_sources: frozenset[str] = frozenset()
    test_files: frozenset[str] = frozenset()
    # Folders (relative, "" the rootdir) whose conftest.py changed, appeared or went.
    conftest_dirs: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RecordedTest:
    """One test of the recorded run: its outcome and the lines it executed, per file."""

    outcome: str
    lines: Mapping[str, frozenset[int]] = field(default_factory=dict)
    # It started processes whose coverage was measured: rerun rather than replay.
    children: bool = False


def classify(
    previous: Mapping[str, str],
    now: Mapping[str, str],
    *,
    sources: Iterable[str],
    test_files: Iterable[str],
) -> tuple[list[str], Changes] | Full:
    """Sort the files whose digest differs between `previous` and `now` (path -> digest).

    `sources` are the measured source files (then or now), `test_files` the
    files that held tests (then or now).  Returns the changed source files
    still to be mapped line by line (the caller reads their texts) with the
    other changes, or `Full` for a change no test can be traced to.
    """
    source_set, test_set = set(sources), set(test_files)
    changed_sources: list[str] = []
    removed: set[str] = set()
    tests: set[str] = set()
    conftests: set[str] = set()
    for path in sorted(set(previous) | set(now)):
        if previous.get(path) == now.get(path):
            continue
        traced = False
        if path in test_set:
            tests.add(path)
            traced = True
        if path.rsplit("/", 1)[-1] == "conftest.py":
            conftests.add(path.rsplit("/", 1)[0] if "/" in path else "")
            traced = True
        if path in source_set:
            if path in now:
                changed_sources.append(path)
            else:
                removed.add(path)
            traced = True
        if not traced:
            what = "new" if path not in previous else "gone" if path not in now else "changed"
            return Full(f"{path} is {what}, and no test can be traced to it")
    return changed_sources, Changes(
        removed_sources=frozenset(removed),
        test_files=frozenset(tests),
        conftest_dirs=frozenset(conftests),
    )


def select(
    collected: Iterable[tuple[str, str]],
    recorded: Mapping[str, RecordedTest],
    changes: Changes,
) -> set[str]:
    """The node ids among `collected` ((node id, file) pairs) that must run again."""
    chosen = set()
    for nodeid, file in collected:
        test = recorded.get(nodeid)
        if (
            test is None
            or test.outcome != PASSED
            or test.children
            or file in changes.test_files
            or _under(file, changes.conftest_dirs)
            or _ran_changed(test, changes)
        ):
            chosen.add(nodeid)
    return chosen


def _under(file: str, folders: frozenset[str]) -> bool:
    return any(folder == "" or file.startswith(folder + "/") for folder in folders)


def _ran_changed(test: RecordedTest, changes: Changes) -> bool:
    for path, lines in test.lines.items():
        if path in changes.removed_sources:
            return True
        found = changes.source_maps.get(path)
        if found is not None and not lines <= found.lines.keys():
            return True
    return False


def move_arcs(arcs: Iterable[tuple[int, int]], line_map: LineMap) -> list[tuple[int, int]] | None:
    """`arcs` at their new lines; None when one touches a line that has none."""
    moved = []
    lines = line_map.lines
    for start, end in arcs:
        first, second = lines.get(abs(start)), lines.get(abs(end))
        if first is None or second is None:
            return None
        moved.append((first if start > 0 else -first, second if end > 0 else -second))
    return moved


def arc_lines(arcs: Iterable[tuple[int, int]]) -> frozenset[int]:
    """The lines an arc list touches (an exit's negative line is its code object's first line)."""
    # C-level iteration: a record holds hundreds of thousands of arcs.
    return frozenset(map(abs, chain.from_iterable(arcs))).difference((0,))


# -- the line map of one changed file -----------------------------------------------


@dataclass(frozen=True)
class _Outline:
    # Per function (qualname, ordinal): its kept lines (number, text), def line to end.
    functions: dict[tuple[str, int], list[tuple[int, str]]]
    # Kept lines outside functions; a function stands as one ("def", qualname) marker.
    skeleton: list[tuple[int, str]]


def line_map(old: str, new: str) -> LineMap:
    """How the lines of `old` moved in `new`; `module_changed` when code outside functions changed.

    Functions are matched by qualified name and order among twins; a function
    added or removed is not a module-level change (its tests are new, or ran
    its lines), but one moved past another is.
    """
    before, after = _outline(old), _outline(new)
    if before is None or after is None:
        return LineMap(module_changed=True)
    only_one = {_MARK + name for name, _ in before.functions.keys() ^ after.functions.keys()}

    def kept(skeleton: list[tuple[int, str]]) -> list[tuple[int, str]]:
        return [(n, text) for n, text in skeleton if not (n == 0 and text in only_one)]

    old_skeleton, new_skeleton = kept(before.skeleton), kept(after.skeleton)
    if [t for _, t in old_skeleton] != [t for _, t in new_skeleton]:
        return LineMap(module_changed=True)
    lines = {o: n for (o, _), (n, _) in zip(old_skeleton, new_skeleton) if o}
    for key, old_lines in before.functions.items():
        new_lines = after.functions.get(key)
        if new_lines is not None and [t for _, t in old_lines] == [t for _, t in new_lines]:
            lines.update((o, n) for (o, _), (n, _) in zip(old_lines, new_lines))
    return LineMap(lines=lines)


def _outline(source: str) -> _Outline | None:
    try:
        tree = ast.parse(source)
        code = _code_lines(source)
    except (SyntaxError, ValueError, tokenize.TokenError):
        return None
    spans: list[tuple[int, int, str]] = []  # outermost functions: def line, end, qualname
    _function_spans(tree, "", spans)
    ordinals: dict[str, int] = {}
    functions: dict[tuple[str, int], list[tuple[int, str]]] = {}
    in_function: dict[int, str] = {}
    for start, end, qualname in sorted(spans):
        ordinals[qualname] = ordinals.get(qualname, 0) + 1
        functions[(qualname, ordinals[qualname])] = [
            (n, code[n]) for n in range(start, end + 1) if n in code
        ]
        for n in range(start, end + 1):
            in_function[n] = qualname
    starts = {start for start, _, _ in spans}
    skeleton: list[tuple[int, str]] = []
    for n in range(1, max([*code, *starts, 0]) + 1):
        if n in starts:
            skeleton.append((0, _MARK + in_function[n]))  # the whole function, as one line
        elif n not in in_function and n in code:
            skeleton.append((n, code[n]))
    return _Outline(functions, skeleton)


def _function_spans(node: ast.AST, prefix: str, found: list[tuple[int, int, str]]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            end = child.end_lineno if child.end_lineno is not None else child.lineno
            found.append((child.lineno, end, prefix + child.name))
        elif isinstance(child, ast.ClassDef):
            _function_spans(child, f"{prefix}{child.name}.", found)
        else:
            _function_spans(child, prefix, found)


def _code_lines(source: str) -> dict[int, str]:
    """Each line that holds code, without its comment (a multi-line string's lines are all code)."""
    code: set[int] = set()
    comments: dict[int, int] = {}
    for token in tokenize.generate_tokens(iter(source.splitlines(keepends=True)).__next__):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.start[1]
        elif token.type not in _NOT_CODE:
            code.update(range(token.start[0], token.end[0] + 1))
    text = source.splitlines()
    return {n: text[n - 1][: comments.get(n)].rstrip() for n in sorted(code) if n <= len(text)}


_NOT_CODE = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
