"""A mutant as source text: the module's file with the function's lines replaced.

Pure (stdlib only).  Written into the source file under a throwaway layer
(engine/ondisk.py), so every way of loading the module runs the mutant.  The
function's lines (decorators to last line) become ``ast.unparse`` of the
mutated tree's function node (core/mutants.py), indented as the original;
the rest is the file's own text, padded with blank lines so that every later
line keeps its number (tracebacks, ``inspect.getsource``): docs/judge.md.

`prelude` is one statement put before the function, defining the mark
functions where nothing else did.  The text must parse to the same function
node (``ast.dump``), else there is no text (None).
"""

from __future__ import annotations

import ast
import copy
import re
import tokenize

from pytest_quest.core.mutant_ast import parsed
from pytest_quest.core.mutants import add_probe_mark, find_function
from pytest_quest.core.operators import candidates

# A line and its end as the parser counts lines (str.splitlines also splits at a form feed).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _lines(text: str) -> list[str]:
    """`text`'s lines, each with its line end, numbered as ``ast`` numbers them."""
    return _LINE.findall(text)


def _string_lines(text: str) -> set[int]:
    """The lines of `text` (1-based) that continue a token begun on an earlier line.

    A string's (or, from Python 3.12, an f-string part's) own text: indenting
    them would change the string.
    """
    inside: set[int] = set()
    lines = iter(_lines(text))
    for token in tokenize.generate_tokens(lambda: next(lines, "")):
        if token.end[0] > token.start[0] and token.type not in _LAYOUT:
            inside.update(range(token.start[0] + 1, token.end[0] + 1))
    return inside


_LAYOUT = frozenset({tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT})


def _indented(text: str, indent: str) -> list[str]:
    """`text` with `indent` before each line, but the lines inside a multi-line string."""
    skip = _string_lines(text)
    return [
        line if number in skip or not line else indent + line
        for number, line in enumerate((x.rstrip("\r\n") for x in _lines(text)), start=1)
    ]


def function_replaced(source: str, start: int, tree: ast.Module, prelude: str = "") -> str | None:
    """`source` with the function defined on line `start` as it is in `tree`; None if it cannot be.

    `tree` is `source`'s module with that function changed (its ``def`` still
    on line `start`); `prelude`, one line of code put before the function: on
    the blank line above it where there is one (the ``def`` keeps its line).
    """
    original = find_function(parsed(source), start)
    changed = find_function(tree, start)
    if original is None or changed is None:
        return None
    node, new = original[1], changed[1]
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]
    last = int(node.end_lineno or node.lineno)  # type: ignore[attr-defined]
    lines = _lines(source)
    head = lines[first - 1]
    indent = head[: len(head) - len(head.lstrip(" \t"))]
    try:
        body = _indented(ast.unparse(new), indent)
    except (ValueError, RecursionError, SyntaxError):
        return None
    above = bool(prelude) and first > 1 and not lines[first - 2].strip()
    for taken in (1, 0) if above else (0,):
        text = _spliced(
            lines, (first - taken, last), ([indent + prelude] if prelude else []) + body
        )
        at = first - taken + bool(prelude) + len(getattr(new, "decorator_list", []))
        if _same_function(text, at, new):
            return text
    return None


def _spliced(lines: list[str], span: tuple[int, int], replaced: list[str]) -> str:
    """`lines` with lines `span` (first, last; 1-based) replaced, the later lines kept in place."""
    first, last = span
    # The blank lines after the function take what the new text has more, where they can.
    while len(replaced) > last - first + 1 and last < len(lines) and not lines[last].strip():
        last += 1
    replaced = replaced + [""] * (last - first + 1 - len(replaced))
    newline = "\r\n" if lines[first - 1].endswith("\r\n") else "\n"
    return "".join(lines[: first - 1]) + newline.join(replaced) + newline + "".join(lines[last:])


def mutant_text(source: str, start: int, index: int | None, prelude: str = "") -> str | None:
    """`source` with mutant `index` (None: the probe) of the function on line `start`.

    The function is changed as `mutated_tree` and `probe_tree` change it (the
    same candidate, applied to the same function node with the reach marks),
    on a copy of that node only: the module is not parsed again.
    """
    found = find_function(parsed(source), start)
    if found is None:
        return None
    function = copy.deepcopy(found[1])
    if index is None:
        add_probe_mark(function)
    else:
        every = list(candidates(function, source.splitlines()))
        if not 0 <= index < len(every):
            return None
        every[index].apply(True)
    return function_replaced(source, start, ast.Module(body=[function], type_ignores=[]), prelude)  # type: ignore[list-item]


def _same_function(text: str, start: int, node: ast.AST) -> bool:
    """Whether `text` parses and its function on line `start` is `node` (positions aside)."""
    try:
        found = find_function(ast.parse(text), start)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return found is not None and ast.dump(found[1]) == ast.dump(node)
