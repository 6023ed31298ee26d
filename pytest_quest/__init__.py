"""pytest-quest: turn a test suite into per-function coverage quests, judged by a gate.

The public names: the data model, the gate and the ratchet file.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_quest.core.errors import QuestError, QuestUsageError, RatchetFileError
    from pytest_quest.core.gate import Evidence, GateResult, judge
    from pytest_quest.core.model import Fact, FunctionFacts, Quest, Ratchet, State, Verdict
    from pytest_quest.engine.store import RatchetStore

# Imported on first use (PEP 562): pytest imports this package to load the plugin,
# and a command that needs none of these should not pay for them at start-up.
_HOMES = {
    "QuestError": "core.errors",
    "QuestUsageError": "core.errors",
    "RatchetFileError": "core.errors",
    "Evidence": "core.gate",
    "GateResult": "core.gate",
    "judge": "core.gate",
    "Fact": "core.model",
    "FunctionFacts": "core.model",
    "Quest": "core.model",
    "Ratchet": "core.model",
    "State": "core.model",
    "Verdict": "core.model",
    "RatchetStore": "engine.store",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pytest_quest' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"pytest_quest.{home}"), name)
    globals()[name] = value
    return value


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
