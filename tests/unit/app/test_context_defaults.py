"""A context built without a session asks no L1 check and no verifier."""

from __future__ import annotations

from pytest_quest.app.context import _no_l1_checks, _no_verifiers


def test_the_contexts_defaults_find_nothing() -> None:
    assert _no_l1_checks() == []
    assert _no_l1_checks(quest=1, tests=["a"]) == []
    assert _no_verifiers() == []
