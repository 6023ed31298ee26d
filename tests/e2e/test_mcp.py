"""``pytest-quest-mcp`` end to end, driven by the MCP SDK's own client over stdio.

List the tools, call ``quest_next``, write a test, call ``quest_submit``, see
PASS; the results are the objects ``--quest-format json`` prints.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "mcp",
    reason='the MCP SDK is not installed (pip install "pytest-quest[mcp]"; the test extra has it)',
)

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.support.projects import CALC, SIGN, TEST_DOUBLE, TEST_SIGN, Project
from tests.support.runner import FAST, child_environ

pytestmark = pytest.mark.slow

TOOLS = {"quest_scan", "quest_next", "quest_submit", "quest_status", "quest_check"}


def server(root: Path) -> StdioServerParameters:
    # The pytest runs load pytest-quest and nothing else, as every child of this suite does.
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "pytest_quest.mcp", "--root", str(root), "--", *FAST],
        env=child_environ(),
        cwd=str(root),
    )


def structured(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.structured_content
    # The text content is the same object, for clients that read only text.
    assert json.loads(result.content[0].text) == data
    return data


@pytest.mark.children_measured
def test_an_agent_drives_a_quest_to_pass_over_mcp(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_double", TEST_DOUBLE)
    scanned, data = project.run_json("--quest", "scan")
    assert scanned.ret == 0 and data["added"] == [SIGN], data
    project.run_json("--quest", "next")  # picks the active quest (active_changed: true)
    # The steady answer, which quest_next (called after it) must give too.
    cli_next, expected_next = project.run_json("--quest", "next")
    cli_error, expected_error = project.run_json(
        "--quest", "next", "--quest-id", "src/pkg/calc.py::nope"
    )
    assert int(cli_error.ret) == 4
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with (
            stdio_client(server(project.path)) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            listed = await client.list_tools()
            seen["tools"] = {tool.name for tool in listed.tools}
            seen["next"] = await client.call_tool("quest_next", {})
            seen["unknown"] = await client.call_tool(
                "quest_next", {"quest_id": "src/pkg/calc.py::nope"}
            )
            seen["option"] = await client.call_tool("quest_next", {"quest_id": "--quest-accept=x"})
            seen["dispute"] = await client.call_tool(
                "quest_submit", {"dispute": "m00000000", "reason": "-x is x for no input"}
            )
            project.test("test_sign", TEST_SIGN)
            seen["submit"] = await client.call_tool("quest_submit", {})
            seen["status"] = await client.read_resource("quest://status")
            seen["check"] = await client.call_tool("quest_check", {"paths": ["tests"]})
            seen["outside"] = await client.call_tool("quest_check", {"paths": ["../"]})

    anyio.run(session)
    assert seen["tools"] == TOOLS  # and no person action among them
    # quest_next answers what `pytest --quest next --quest-format json` printed.
    assert not seen["next"].is_error
    assert structured(seen["next"]) == expected_next
    assert expected_next["quest"]["id"] == SIGN
    # A documented error is the same object, marked as an error.
    assert seen["unknown"].is_error and structured(seen["unknown"]) == expected_error
    assert seen["unknown"].meta == {"pytest-quest/exit_status": 4}
    option = structured(seen["option"])
    assert seen["option"].is_error and "may not start with '-'" in option["error"]
    assert option["schema"] == "pytest-quest/1" and option["command"] == "next"
    # A dispute reaches the submit: an id not of the function's plan is refused before any run.
    disputed = structured(seen["dispute"])
    assert seen["dispute"].is_error and "m00000000 is not a mutant of" in disputed["error"], (
        disputed
    )
    # The gate judged the test written between the calls: PASS.
    submitted = structured(seen["submit"])
    assert not seen["submit"].is_error and submitted["command"] == "submit"
    assert submitted["verdict"] == "PASS" and submitted["quest"]["id"] == SIGN, submitted
    assert submitted["remaining"] == 0 and submitted["next_quest"] is None
    assert project.ratchet()["quests"][SIGN]["state"] == "PASS"
    # The status resource is the status object.
    (contents,) = seen["status"].contents
    status = json.loads(contents.text)
    assert status["command"] == "status" and status["counts"]["PASS"] == 2
    checked = structured(seen["check"])
    assert checked["ok"] is True and checked["checked"] == 2
    assert (
        seen["outside"].is_error
        and "outside the project root" in structured(seen["outside"])["error"]
    )


def test_an_agent_starts_a_project_over_mcp_with_a_scan(project: Project) -> None:
    """No ratchet file yet: the status says so, quest_scan creates it, quest_next gives the quest."""
    project.source("calc", CALC)
    project.test("test_double", TEST_DOUBLE)
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with (
            stdio_client(server(project.path)) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            seen["before"] = await client.call_tool("quest_status", {})
            seen["scan"] = await client.call_tool("quest_scan", {"paths": ["tests"]})
            seen["next"] = await client.call_tool("quest_next", {})

    anyio.run(session)
    assert seen["before"].is_error and "pytest --quest scan" in structured(seen["before"])["error"]
    scanned = structured(seen["scan"])
    assert not seen["scan"].is_error and scanned["command"] == "scan", scanned
    assert scanned["added"] == [SIGN] and scanned["added_pass"] == ["src/pkg/calc.py::double"]
    assert structured(seen["next"])["quest"]["id"] == SIGN
