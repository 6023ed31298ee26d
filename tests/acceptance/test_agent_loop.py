"""The issue's "done means": a script that follows only `next`'s JSON and writes
tests brings example_project to zero remaining (``tests/agent_loop.py``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent / "agent_loop.py"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("quest_agent_loop", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_prepared_test_names_a_function_of_example_project() -> None:
    agent = load_script()
    source_root = agent.EXAMPLE_PROJECT
    for quest_id, body in agent.TESTS.items():
        path, qualname = quest_id.split("::")
        text = (source_root / path).read_text(encoding="utf-8")
        assert f"def {qualname.split('.')[-1].split('@')[0]}(" in text, quest_id
        assert "assert" in body, quest_id
        compile(body, quest_id, "exec")


@pytest.mark.slow
def test_agent_loop_brings_example_project_to_zero(tmp_path: Path) -> None:
    agent = load_script()
    summary = agent.run_loop(tmp_path / "example_project")
    assert summary["remaining"] == 0
    assert summary["counts"]["TODO"] == 0
    assert set(summary["states"].values()) == {"PASS"}, summary["states"]
    # The scan left work to do, and the loop did one PASS per TODO quest, in
    # the plugin's order, remaining going down by one each time.
    assert summary["scan"]["remaining"] == len(summary["steps"]) > 0
    remaining = [step["remaining_before"] for step in summary["steps"]]
    assert remaining == list(range(summary["scan"]["remaining"], 0, -1))
    assert all(step["verdict"] == "PASS" and step["exit"] == 0 for step in summary["steps"])
    assert [step["remaining_after"] for step in summary["steps"]] == [r - 1 for r in remaining]
