"""app/deep_checks.py: what the mutation child hands the L1 hooks (`l1_evidence`), and the operators planned (`planned_operators`)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_quest.app.deep_checks import l1_evidence, planned_operators
from pytest_quest.core.gate import Evidence
from pytest_quest.core.model import FunctionFacts, Quest
from pytest_quest.core.policy import GatePolicy
from pytest_quest.core.run import CollectionError, RunReport

QUEST = Quest(
    id="src/m.py::f", file="src/m.py", qualname="f", first=3, last=9, fingerprint="sha256:x"
)
CURRENT = FunctionFacts(
    file="src/m.py",
    qualname="f",
    ordinal=1,
    start=3,
    first=3,
    last=9,
    fingerprint="sha256:x",
    statements=4,
    branches=2,
    missing_lines=[5],
    covering_tests=["t.py::a"],
)


def _ctx(path: Path) -> Any:
    return SimpleNamespace(store=SimpleNamespace(path=path))


def test_l1_evidence_of_a_run(tmp_path: Path) -> None:
    outcomes = {"t.py::a": "passed", "t.py::b": "failed"}
    run = RunReport(
        completed=False,
        problem="timed out",
        collection_errors=[CollectionError("t.py", 3, "SyntaxError")],
        outcomes=outcomes,
        duration=1.5,
    )
    found = l1_evidence(_ctx(tmp_path / "quest.json"), Evidence(QUEST, CURRENT, run))
    assert found == {
        "ratchet": str(tmp_path / "quest.json"),
        "quest": "src/m.py::f",
        "function": asdict(CURRENT),
        "run": {
            "completed": False,
            "problem": "timed out",
            "collection_errors": [{"file": "t.py", "line": 3, "message": "SyntaxError"}],
            "outcomes": outcomes,
            "duration": 1.5,
        },
    }
    assert found["run"]["outcomes"] is not outcomes
    assert found["function"]["missing_lines"] == [5]


def test_l1_evidence_of_a_complete_run(tmp_path: Path) -> None:
    found = l1_evidence(_ctx(tmp_path / "q.json"), Evidence(QUEST, CURRENT, RunReport()))
    assert found["run"] == {
        "completed": True,
        "problem": "",
        "collection_errors": [],
        "outcomes": {},
        "duration": 0.0,
    }


def test_l1_evidence_needs_the_current_function(tmp_path: Path) -> None:
    with pytest.raises(AssertionError):
        l1_evidence(_ctx(tmp_path / "q.json"), Evidence(QUEST, None, RunReport()))


def _options_ctx(policy: object) -> Any:
    return SimpleNamespace(options=SimpleNamespace(policy=policy))


def test_planned_operators_of_the_policy() -> None:
    policy = GatePolicy(operators=("compare.negate", "body.skip"))
    assert planned_operators(_options_ctx(policy)) == ("compare.negate", "body.skip")
    assert planned_operators(_options_ctx(GatePolicy(operators=()))) == ()


def test_planned_operators_without_a_policy() -> None:
    assert planned_operators(_options_ctx(None)) is None
