"""Done means: a scripted agent that follows only `next`'s JSON brings
at least 20 quests of a project we did not write to PASS (semver 3.1.2, vendored
in tests/acceptance/projects/semver), and it never parses text.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_quest.core.model import JSON_SCHEMA
from tests.acceptance import json_agent
from tests.acceptance.semver_answers import ANSWERS, CI_ANSWERS

AGENT_SOURCE = Path(json_agent.__file__)

# What reading text would take: modules and str methods that cut or search output.
TEXT_MODULES = {"re", "shlex", "csv", "string", "textwrap", "fnmatch", "difflib"}
TEXT_METHODS = {
    "split",
    "rsplit",
    "splitlines",
    "partition",
    "rpartition",
    "find",
    "rfind",
    "index",
    "startswith",
    "endswith",
    "strip",
    "lstrip",
    "rstrip",
    "search",
    "fullmatch",
    "findall",
    "readline",
    "readlines",
}


def test_every_answer_names_a_function_of_the_vendored_semver() -> None:
    assert set(CI_ANSWERS) <= set(ANSWERS)
    assert len(CI_ANSWERS) >= 20
    for quest_id, body in ANSWERS.items():
        path, qualname = quest_id.split("::")
        text = (json_agent.SEMVER / path).read_text(encoding="utf-8")
        assert f"def {qualname.split('.')[-1].split('@')[0]}(" in text, quest_id
        assert "assert" in body, quest_id
        compile(body, quest_id, "exec")


def test_the_vendored_project_says_where_it_comes_from() -> None:
    readme = (json_agent.SEMVER / "README.md").read_text(encoding="utf-8")
    assert "semver 3.1.2" in readme
    assert "BSD-3-Clause" in readme
    assert (
        (json_agent.SEMVER / "LICENSE.txt")
        .read_text(encoding="utf-8")
        .startswith("Copyright (c) 2013, Konstantine Rybnikov")
    )


def test_the_agent_reads_no_text() -> None:
    """The agent's module imports nothing that reads text and calls no str method that
    cuts or searches it; json.loads is its one parser."""
    tree = ast.parse(AGENT_SOURCE.read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert not imported & TEXT_MODULES
    called = {
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    }
    assert not called & TEXT_METHODS
    parsers = {
        f"{node.func.value.id}.{node.func.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.attr in {"loads", "load", "literal_eval"}
    }
    assert parsers == {"json.loads"}


@pytest.mark.slow
def test_agent_brings_20_semver_quests_to_pass_from_json_alone(tmp_path: Path) -> None:
    answers = {quest_id: ANSWERS[quest_id] for quest_id in CI_ANSWERS}
    run = json_agent.run_agent(json_agent.SEMVER, tmp_path / "semver", answers)
    summary = run.summary()
    # Every command printed one JSON object of the schema, and the agent read nothing else.
    assert all("schema" in step["keys"] and "command" in step["keys"] for step in run.transcript)
    assert run.scan["schema"] == run.status["schema"] == JSON_SCHEMA
    # The scan left more TODO quests than the agent has answers for: it had to pass over some.
    assert summary["scan"]["todo"] >= 25
    assert run.skipped and not set(run.skipped) & set(answers)
    # Each answer was submitted once, and PASSed, with `remaining` going down by one.
    assert sorted(step["id"] for step in run.submits) == sorted(answers)
    not_pass = [step for step in run.submits if step["verdict"] != "PASS"]
    assert not not_pass, not_pass
    assert all(step["remaining_after"] == step["remaining_before"] - 1 for step in run.submits)
    # The final status JSON: at least 20 quests that were TODO at the scan are PASS.
    assert len(summary["passed"]) >= 20
    assert summary["passed"] == sorted(answers)
    assert summary["counts"]["PASS"] == run.scan["counts"]["PASS"] + len(answers)
    assert summary["remaining"] == summary["scan"]["todo"] - len(answers) > 0
