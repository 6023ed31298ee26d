"""The MCP tools' runs: the command line a tool starts, the scan tool, the status resource, a stopped child."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason='the MCP SDK is not installed (pip install "pytest-quest[mcp]")')

import anyio

from pytest_quest.mcp import server as server_module
from pytest_quest.mcp.commands import ToolResult
from pytest_quest.mcp.server import QuestTools, _version, build_server, run_child

if sys.version_info < (3, 11):  # anyio's backport
    from exceptiongroup import BaseExceptionGroup


def _fake_python(tmp_path: Path, answer: str, status: int = 0) -> str:
    """A 'python' that records its arguments and prints `answer` (a JSON text)."""
    script = tmp_path / "fake-python"
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > "{tmp_path}/argv"\n'
        f"printf '%s' '{answer}'\n"
        f"exit {status}\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return str(script)


def test_a_tool_runs_pytest_with_the_persons_arguments_then_the_tools(tmp_path: Path) -> None:
    python = _fake_python(tmp_path, '{"command": "next", "quest": null}', status=0)
    tools = QuestTools(tmp_path, python, ["-p", "no:cacheprovider"])
    result = anyio.run(tools.run, "quest_next", {"quest_id": "a.py::f", "since": None})
    assert result == ToolResult({"command": "next", "quest": None}, 0, False)
    assert (tmp_path / "argv").read_text().splitlines() == [
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--quest",
        "next",
        "--quest-format",
        "json",
        "--quest-id=a.py::f",
    ]


def test_a_tool_run_answering_an_error_object_is_an_error(tmp_path: Path) -> None:
    python = _fake_python(tmp_path, '{"command": "submit", "error": "no quest"}', status=4)
    result = anyio.run(QuestTools(tmp_path, python).run, "quest_submit", {})
    assert result == ToolResult({"command": "submit", "error": "no quest"}, 4, True)


def test_an_unknown_tool_is_refused_without_a_command_name(tmp_path: Path) -> None:
    result = anyio.run(QuestTools(tmp_path, "/nonexistent/python").run, "quest_reopen", {})
    assert result.exitcode == 4 and result.error
    assert result.data["command"] is None
    assert result.data["error"].startswith("unknown tool 'quest_reopen' (tools: quest_scan, ")


def test_the_scan_tool_and_the_status_resource_run_their_commands(tmp_path: Path) -> None:
    python = _fake_python(tmp_path, '{"command": "scan", "b": 1, "a": [2]}')
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    server = build_server(QuestTools(tmp_path, python), version="9")

    async def called() -> tuple[Any, list[str], Any, list[str]]:
        scanned = await server.call_tool("quest_scan", {"paths": ["tests/unit"]})
        scan_argv = (tmp_path / "argv").read_text().splitlines()
        status = list(await server.read_resource("quest://status"))
        return scanned, scan_argv, status, (tmp_path / "argv").read_text().splitlines()

    scanned, scan_argv, status, status_argv = anyio.run(called)
    assert scanned.is_error is False
    assert scanned.structured_content == {"command": "scan", "b": 1, "a": [2]}
    assert json.loads(scanned.content[0].text) == {"command": "scan", "b": 1, "a": [2]}
    assert scan_argv == ["-m", "pytest", "--quest", "scan", "--quest-format", "json", "tests/unit"]
    assert [item.content for item in status] == [
        '{\n  "a": [\n    2\n  ],\n  "b": 1,\n  "command": "scan"\n}'
    ]
    assert status_argv == ["-m", "pytest", "--quest-status", "--quest-format", "json"]


def test_version_is_the_installed_distributions() -> None:
    from importlib import metadata

    assert _version() == metadata.version("pytest-quest")


class _Stream:
    def __init__(self, chunks: list[bytes], error: BaseException | None = None) -> None:
        self.chunks = chunks
        self.error = error

    def __aiter__(self) -> _Stream:
        return self

    async def __anext__(self) -> bytes:
        if self.chunks:
            return self.chunks.pop(0)
        if self.error is not None:
            raise self.error
        raise StopAsyncIteration


class _Process:
    """A process that ends when told: at `wait`, at `terminate` (unless it ignores it), at `kill`."""

    def __init__(
        self, stdout: _Stream, stderr: _Stream, *, ended: bool, ignores_term: bool = False
    ) -> None:
        self.stdout, self.stderr = stdout, stderr
        self.returncode: int | None = 0 if ended else None
        self.ignores_term = ignores_term
        self.calls: list[str] = []

    async def wait(self) -> int:
        self.calls.append("wait")
        while self.returncode is None:
            await anyio.sleep(0.01)
        return self.returncode

    def terminate(self) -> None:
        self.calls.append("terminate")
        if not self.ignores_term:
            self.returncode = -15

    def kill(self) -> None:
        self.calls.append("kill")
        self.returncode = -9

    async def aclose(self) -> None:
        self.calls.append("aclose")


def _opened(monkeypatch: pytest.MonkeyPatch, process: _Process) -> list[tuple[Any, ...]]:
    seen: list[tuple[Any, ...]] = []

    async def open_process(argv: list[str], **options: Any) -> _Process:
        seen.append((argv, options))
        return process

    monkeypatch.setattr(anyio, "open_process", open_process)
    return seen


def test_run_child_collects_both_streams(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    process = _Process(_Stream([b"a", b"b"]), _Stream([b"e"]), ended=True)
    seen = _opened(monkeypatch, process)
    done = anyio.run(run_child, ["x", "y"], tmp_path)
    assert (done.args, done.returncode, done.stdout, done.stderr) == (["x", "y"], 0, b"ab", b"e")
    assert seen == [
        (
            ["x", "y"],
            {
                "cwd": tmp_path,
                "stdin": subprocess.DEVNULL,
                "stdout": subprocess.PIPE,
                "stderr": subprocess.PIPE,
            },
        )
    ]
    assert process.calls == ["wait", "aclose"]


def test_run_child_of_a_failure_after_the_child_ended_only_closes_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    process = _Process(_Stream([], OSError("pipe broke")), _Stream([]), ended=True)
    _opened(monkeypatch, process)
    with pytest.raises(BaseExceptionGroup) as caught:
        anyio.run(run_child, ["x"], tmp_path)
    assert [str(error) for error in caught.value.exceptions] == ["pipe broke"]
    assert process.calls == ["wait", "aclose"]


def test_run_child_kills_a_child_that_ignores_sigterm(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    process = _Process(
        _Stream([], OSError("pipe broke")), _Stream([]), ended=False, ignores_term=True
    )
    _opened(monkeypatch, process)
    monkeypatch.setattr(server_module, "TERMINATE_GRACE", 0.05)
    with pytest.raises(BaseExceptionGroup):
        anyio.run(run_child, ["x"], tmp_path)
    assert process.calls == ["wait", "terminate", "wait", "kill", "wait", "aclose"]
    assert process.returncode == -9


def test_run_child_terminates_a_running_child(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    process = _Process(_Stream([], OSError("pipe broke")), _Stream([]), ended=False)
    _opened(monkeypatch, process)
    with pytest.raises(BaseExceptionGroup):
        anyio.run(run_child, ["x"], tmp_path)
    assert process.calls == ["wait", "terminate", "wait", "aclose"]
    assert process.returncode == -15
