"""Counting words: a message never says ``1 functions`` or ``process(es)``."""

from __future__ import annotations

import ast
import re

import pytest

from pytest_quest.core.words import counted, counted_words
from tests.support import paths


@pytest.mark.parametrize(
    ("number", "noun", "plural", "expected"),
    [
        (0, "function", "", "0 functions"),
        (1, "function", "", "1 function"),
        (1, "process", "processes", "1 process"),
        (2, "process", "processes", "2 processes"),
        (1, "discrepancy", "discrepancies", "1 discrepancy"),
    ],
)
def test_counted(number: int, noun: str, plural: str, expected: str) -> None:
    assert counted(number, noun, plural) == expected
    assert counted_words(number, noun, plural) == expected.split(" ", 1)[1]


# Counted in a module this change leaves to its owner: to be moved to `counted` there.
PENDING = frozenset({"pytest_quest/app/since.py"})


def _message_texts() -> list[tuple[str, str]]:
    """Each string literal and f-string of the package but docstrings, placeholders as ``{}``."""
    found = []
    for path in sorted((paths.ROOT / "pytest_quest").rglob("*.py")):
        if path.relative_to(paths.ROOT).as_posix() in PENDING:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if id(node) in docstrings:
                continue
            if isinstance(node, ast.JoinedStr):
                text = "".join(
                    str(part.value) if isinstance(part, ast.Constant) else "{}"
                    for part in node.values
                )
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            else:
                continue
            found.append((f"{path.relative_to(paths.ROOT)}:{node.lineno}", text))
    return found


def test_no_message_counts_with_a_bracketed_plural() -> None:
    lazy = [
        f"{where}: {text[:80]!r}"
        for where, text in _message_texts()
        if re.search(r"[a-z]\((s|es)\)", text)
    ]
    assert not lazy, "count with core.words.counted instead:\n" + "\n".join(lazy)


def test_no_message_counts_a_placeholder_in_a_fixed_plural() -> None:
    """``{len(x)} functions`` reads "1 functions" for one; `counted` says it right."""
    fixed = [
        f"{where}: {text[:80]!r}"
        for where, text in _message_texts()
        if re.search(
            r"\{\} (functions|quests|tests|files|lines|questions|answers|verifiers)\b", text
        )
    ]
    assert not fixed, "count with core.words.counted instead:\n" + "\n".join(fixed)


def test_no_fix_of_a_ratchet_file_error_nests_parentheses() -> None:
    """`RatchetFileError` shows its fix in parentheses: a fix holding its own would nest them."""
    nested = []
    for path in sorted((paths.ROOT / "pytest_quest").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", "")) == "RatchetFileError"
                and len(node.args) >= 3
            ):
                continue
            for part in ast.walk(node.args[2]):
                if (
                    isinstance(part, ast.Constant)
                    and isinstance(part.value, str)
                    and "(" in part.value
                ):
                    nested.append(f"{path.relative_to(paths.ROOT)}:{node.lineno}: {part.value!r}")
    assert not nested, "\n".join(nested)
