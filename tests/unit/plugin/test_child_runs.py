"""plugin/child_runs.py: the mutation child's parse is made again after CPython 3.11's AST race."""

from __future__ import annotations

import pytest

from pytest_quest.plugin.child_runs import again_on_ast_race


def test_a_parse_raced_by_another_thread_is_made_once_more() -> None:
    calls: list[int] = []

    def make() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=75, after=29)")
        return "parsed"

    assert again_on_ast_race(make) == "parsed"
    assert len(calls) == 2


def test_other_errors_and_a_second_race_are_not_hidden() -> None:
    def other() -> None:
        raise SystemError("something else")

    with pytest.raises(SystemError, match="something else"):
        again_on_ast_race(other)

    def always() -> None:
        raise SystemError("AST constructor recursion depth mismatch (before=1, after=2)")

    with pytest.raises(SystemError, match="mismatch"):
        again_on_ast_race(always)
