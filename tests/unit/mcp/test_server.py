"""pytest_quest/mcp/server.py in-process: the tools as the SDK lists them, an argument refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason='the MCP SDK is not installed (pip install "pytest-quest[mcp]")')

import anyio

from pytest_quest.mcp.server import QuestTools, build_server, tool_result


def test_the_server_lists_four_tools_and_the_status_resource(tmp_path: Path) -> None:
    server = build_server(QuestTools(tmp_path, "python"), version="1")

    async def listed() -> tuple[list[str], list[str], dict[str, object]]:
        tools = await server.list_tools()
        resources = await server.list_resources()
        schema = next(t for t in tools if t.name == "quest_check").input_schema
        return [t.name for t in tools], [str(r.uri) for r in resources], schema

    names, uris, schema = anyio.run(listed)
    assert sorted(names) == ["quest_check", "quest_next", "quest_status", "quest_submit"]
    assert uris == ["quest://status"]
    assert set(schema["properties"]) == {"since", "require_pass", "paths"}  # type: ignore[call-overload]


def test_a_refused_argument_is_an_error_result_without_running_pytest(tmp_path: Path) -> None:
    tools = QuestTools(tmp_path, "/nonexistent/python")  # never started: the argument is refused first
    result = anyio.run(tools.run, "quest_submit", {"quest_id": "--quest-accept=a.py::f"})
    assert result.error and result.exitcode == 4
    assert result.data["command"] == "submit" and "may not start with '-'" in result.data["error"]
    shown = tool_result(result)
    assert shown.is_error and json.loads(shown.content[0].text) == result.data  # type: ignore[union-attr]
    assert shown.structured_content == result.data
