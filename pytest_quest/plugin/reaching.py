"""In the mutation child: which stable covering tests can reach a mutant, by line.

A test that never ran the statement a mutant changes cannot run the mutant,
so only the tests the measuring run saw on that line are tried; without line
data for it, every stable test is.
"""

from __future__ import annotations

import ast
from typing import Any

from pytest_quest.core.mutant_ast import parsed, statement_lines
from pytest_quest.core.mutants import find_function


class Reaching:
    """`tests(line, stable)`: the stable tests that ran the statement on `line`."""

    def __init__(self, source: str, start: int, line_tests: Any) -> None:
        self.function: ast.AST | None = None
        self.by_line: dict[int, set[str]] = {}
        if not isinstance(line_tests, dict) or not line_tests:
            return
        for line, tests in line_tests.items():
            if str(line).isdigit() and isinstance(tests, list):
                self.by_line[int(line)] = {t for t in tests if isinstance(t, str)}
        try:
            found = find_function(parsed(source), start)
        except SyntaxError:
            found = None
        self.function = found[1] if found is not None else None

    def tests(self, line: int, stable: list[Any]) -> list[Any]:
        if self.function is None:
            return stable
        lines = statement_lines(self.function, line)
        ran: set[str] = set()
        for number in lines:
            ran |= self.by_line.get(number, set())
        chosen = [item for item in stable if item.nodeid in ran]
        return chosen or stable
