"""pytest-quest: turn a test suite into per-function coverage quests, judged by a gate.

The public names: the data model, the gate and the ratchet file.
"""

from __future__ import annotations

from pytest_quest.core.errors import QuestError, QuestUsageError, RatchetFileError
from pytest_quest.core.gate import Evidence, GateResult, judge
from pytest_quest.core.model import Fact, FunctionFacts, Quest, Ratchet, State, Verdict
from pytest_quest.engine.store import RatchetStore

__all__ = [
    "Evidence",
    "Fact",
    "FunctionFacts",
    "GateResult",
    "Quest",
    "QuestError",
    "QuestUsageError",
    "Ratchet",
    "RatchetFileError",
    "RatchetStore",
    "State",
    "Verdict",
    "judge",
]
