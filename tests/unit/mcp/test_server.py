"""pytest_quest/mcp/server.py in-process: the tools as the SDK lists them, an argument refused."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason='the MCP SDK is not installed (pip install "pytest-quest[mcp]")')

import anyio

from pytest_quest.mcp.server import QuestTools, build_server, run_child, tool_result


def test_the_server_lists_five_tools_and_the_status_resource(tmp_path: Path) -> None:
    server = build_server(QuestTools(tmp_path, "python"), version="1")

    async def listed() -> tuple[list[str], list[str], dict[str, object]]:
        tools = await server.list_tools()
        resources = await server.list_resources()
        schema = next(t for t in tools if t.name == "quest_check").input_schema
        return [t.name for t in tools], [str(r.uri) for r in resources], schema

    names, uris, schema = anyio.run(listed)
    assert sorted(names) == [
        "quest_check",
        "quest_next",
        "quest_scan",
        "quest_status",
        "quest_submit",
    ]
    assert uris == ["quest://status"]
    assert set(schema["properties"]) == {"since", "require_pass", "paths"}  # type: ignore[call-overload]


def test_every_parameter_of_every_tool_is_described(tmp_path: Path) -> None:
    """An agent reads the input schema only: each parameter says what it takes."""
    server = build_server(QuestTools(tmp_path, "python"), version="1")
    tools = anyio.run(server.list_tools)
    parameters = {
        (tool.name, name): spec
        for tool in tools
        for name, spec in tool.input_schema["properties"].items()
    }
    assert len(parameters) == 10
    undescribed = [key for key, spec in parameters.items() if len(spec.get("description", "")) < 20]
    assert not undescribed, undescribed
    scan = next(tool for tool in tools if tool.name == "quest_scan")
    assert set(scan.input_schema["properties"]) == {"paths"}


def test_a_refused_argument_is_an_error_result_without_running_pytest(tmp_path: Path) -> None:
    tools = QuestTools(
        tmp_path, "/nonexistent/python"
    )  # never started: the argument is refused first
    result = anyio.run(tools.run, "quest_submit", {"quest_id": "--quest-accept=a.py::f"})
    assert result.error and result.exitcode == 4
    assert result.data["command"] == "submit" and "may not start with '-'" in result.data["error"]
    shown = tool_result(result)
    assert shown.is_error and json.loads(shown.content[0].text) == result.data  # type: ignore[union-attr]
    assert shown.structured_content == result.data


def test_a_child_runs_with_its_output_captured_and_no_stdin(tmp_path: Path) -> None:
    code = "import sys; print(sys.stdin.read() == ''); print('err', file=sys.stderr); sys.exit(3)"
    done = anyio.run(run_child, [sys.executable, "-c", code], tmp_path)
    assert (done.returncode, done.stdout.split(), done.stderr.split()) == (3, [b"True"], [b"err"])


def test_a_cancelled_call_stops_its_child_with_sigterm(tmp_path: Path) -> None:
    marker, ready = tmp_path / "stopped", tmp_path / "ready"
    code = (
        "import signal, sys, time\n"
        f"signal.signal(signal.SIGTERM, lambda *_: (open({str(marker)!r}, 'w').write('TERM'), sys.exit(2)))\n"
        f"open({str(ready)!r}, 'w').close()\n"
        "time.sleep(60)\n"
    )

    async def cancelled() -> float:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(run_child, [sys.executable, "-c", code], tmp_path)
                while not ready.exists():
                    await anyio.sleep(0.05)
                started = time.monotonic()
                group.cancel_scope.cancel()
        return time.monotonic() - started

    elapsed = anyio.run(cancelled)
    # Stopped by SIGTERM at once, not by the SIGKILL 30 seconds later.
    assert marker.read_text() == "TERM" and elapsed < 20
