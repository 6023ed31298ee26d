"""The MCP server: the agent loop as MCP tools over stdio (``pip install "pytest-quest[mcp]"``).

Each tool returns the JSON object of ``pytest --quest ... --quest-format json``
(docs/json-schema.md); commands.py builds the command line.  docs/mcp.md.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from pytest_quest.mcp.commands import (
    TOOLS,
    ArgumentError,
    ToolResult,
    dumps,
    error_object,
    invocation,
    result_of,
)

INSTRUCTIONS = """\
pytest-quest turns the project's functions that are not fully covered by passing tests into quests.
Start: when quest_next or quest_status answers that there is no ratchet file, call quest_scan once
(it runs the suite under coverage and records the quests in quest.json).
Loop: call quest_next (the active quest: facts, source with uncovered lines marked, an example
test), write or extend tests under the project's tests folder that execute every listed line and
branch AND check the results, then call quest_submit; repeat until quest_next returns "quest": null.
A deterministic gate decides: only "verdict": "PASS" settles a quest; read "facts" (file:line,
expected, actual) and fix what they name. A surviving mutant no input can tell from the function
may be disputed (quest_submit with dispute = its id and reason); a dispute of one a test kills, or
one seen returning otherwise, is refused and spends a try. Never edit the code under test,
coverage settings or quest.json. REVIEW and DONE quests wait for a person; no tool can settle
them."""

STATUS_URI = "quest://status"

# The tools' parameters, described for the agent (each lands in the tool's input schema).
QuestId = Annotated[
    str | None,
    Field(
        description="A quest id, FILE::QUALNAME (FILE::QUALNAME@N for a same-named twin), as "
        "quest_status lists them; default: the active quest"
    ),
]
Since = Annotated[
    str | None,
    Field(description="A git ref (branch, tag, commit): only functions changed since it"),
]
Paths = Annotated[
    list[str] | None,
    Field(
        description="Test files or folders, relative to the project root and inside it (a node "
        "id FILE::TEST too); default: the project's configured test paths"
    ),
]
Dispute = Annotated[
    str | None,
    Field(
        description="Surviving mutants' ids as a FAIL fact names them (m1a2b3c4d; comma "
        "separated for several), disputed as equivalent; needs reason"
    ),
]
Reason = Annotated[
    str | None,
    Field(description="Why no input can tell the disputed mutant from the function; needs dispute"),
]
RequirePass = Annotated[
    bool,
    Field(description="With since: the check fails unless every function changed since it is PASS"),
]
TERMINATE_GRACE = 30.0
"""Seconds a cancelled call's pytest has to stop after SIGTERM before SIGKILL."""


class QuestTools:
    """The tools' work, without the SDK: run pytest in `root` with a checked command line."""

    def __init__(self, root: Path, python: str, pytest_args: Sequence[str] = ()) -> None:
        self.root = root
        self.python = python
        self.pytest_args = list(pytest_args)

    async def run(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        try:
            called = invocation(tool, arguments, self.root)
        except ArgumentError as exc:
            # Exit 4, as the command line answers a usage error.
            return ToolResult(error_object(TOOLS.get(tool), str(exc)), 4, True)
        completed = await run_child(
            [self.python, "-m", "pytest", *self.pytest_args, *called.args], self.root
        )
        return result_of(called.command, completed)


async def run_child(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Run `argv` in `cwd`, its output captured; a cancelled call stops it as Ctrl-C would.

    stdin is the MCP channel: the child gets /dev/null.  On cancellation the
    child gets SIGTERM (pytest-quest stops, records nothing and reaps what its
    tests started: exit 2), then SIGKILL after `TERMINATE_GRACE` seconds.
    """
    process = await anyio.open_process(
        argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    output: dict[int, list[bytes]] = {1: [], 2: []}

    async def drain(stream: Any, key: int) -> None:
        async for chunk in stream:
            output[key].append(chunk)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(drain, process.stdout, 1)
            group.start_soon(drain, process.stderr, 2)
            await process.wait()
    except BaseException:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.terminate()
                with anyio.move_on_after(TERMINATE_GRACE):
                    await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.aclose()
        raise
    await process.aclose()
    code = process.returncode
    assert code is not None
    return subprocess.CompletedProcess(argv, code, b"".join(output[1]), b"".join(output[2]))


def tool_result(result: ToolResult) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=dumps(result.data))],
        structured_content=result.data,
        is_error=result.error,
        _meta={"pytest-quest/exit_status": result.exitcode},
    )


#: What each tool does, as its MCP description says it to the client.
_DESCRIPTIONS = {
    "quest_scan": (
        "Run the suite under coverage and record every function of the code under test in "
        "quest.json: each one not fully covered by passing tests is a quest (TODO), each "
        "fully covered one enters as PASS. The first call creates the file; a later one adds "
        "new functions and records removed ones, and never changes a PASS. The code under "
        "test is the project's configuration (quest_source, else coverage.py's [run] source). "
        "Returns the JSON object of `pytest --quest scan --quest-format json`."
    ),
    "quest_next": (
        "The quest to work on (made the active one; spends no try): what to cover, the facts, "
        "the function's source with uncovered lines marked, an example test. quest_id picks "
        "one (FILE::QUALNAME); since (a git ref) limits the choice to functions changed since "
        "it. Returns the JSON object of `pytest --quest next --quest-format json`."
    ),
    "quest_submit": (
        "Run the gate on the active quest (or quest_id) after writing tests: PASS locks it "
        "and shows the next quest, FAIL returns facts and spends a try, REVIEW waits for a "
        "person. dispute (a surviving mutant's id from the facts, comma separated for "
        "several) with reason (why no input can tell it from the function) disputes it as "
        "equivalent: never PASS; REVIEW for a person if no test of the suite kills it nor "
        "sees it return otherwise, else refused with the test or what it did (a try). "
        "Returns the JSON object of `pytest --quest submit --quest-format json`."
    ),
    "quest_status": (
        "Every quest with its state, the counts and what remains; changes nothing. since (a "
        "git ref) limits it to functions changed since then. Returns the JSON object of "
        "`pytest --quest-status --quest-format json`."
    ),
    "quest_check": (
        "The ratchet check: runs the suite under coverage and reports every PASS function "
        "that is no longer fully covered; writes nothing. paths: test files or folders "
        "relative to the project root; since + require_pass: every function changed since "
        "the git ref must be PASS. Returns the JSON object of "
        "`pytest --quest check --quest-format json`."
    ),
}


def build_server(tools: QuestTools, version: str | None = None) -> MCPServer[Any]:
    """The MCP server of `tools`: five tools and the status resource."""
    server: MCPServer[Any] = MCPServer(
        name="pytest-quest", instructions=INSTRUCTIONS, version=version or _version()
    )
    reading = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)

    @server.tool(
        name="quest_scan",
        structured_output=False,
        annotations=reading,
        description=_DESCRIPTIONS["quest_scan"],
    )
    async def quest_scan(paths: Paths = None) -> CallToolResult:
        return tool_result(await tools.run("quest_scan", {"paths": paths}))

    @server.tool(
        name="quest_next",
        structured_output=False,
        annotations=reading,
        description=_DESCRIPTIONS["quest_next"],
    )
    async def quest_next(quest_id: QuestId = None, since: Since = None) -> CallToolResult:
        return tool_result(await tools.run("quest_next", {"quest_id": quest_id, "since": since}))

    @server.tool(
        name="quest_submit",
        structured_output=False,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False),
        description=_DESCRIPTIONS["quest_submit"],
    )
    async def quest_submit(
        quest_id: QuestId = None, dispute: Dispute = None, reason: Reason = None
    ) -> CallToolResult:
        arguments = {"quest_id": quest_id, "dispute": dispute, "reason": reason}
        return tool_result(await tools.run("quest_submit", arguments))

    @server.tool(
        name="quest_status",
        structured_output=False,
        annotations=ToolAnnotations(read_only_hint=True),
        description=_DESCRIPTIONS["quest_status"],
    )
    async def quest_status(since: Since = None) -> CallToolResult:
        return tool_result(await tools.run("quest_status", {"since": since}))

    @server.tool(
        name="quest_check",
        structured_output=False,
        annotations=ToolAnnotations(read_only_hint=True),
        description=_DESCRIPTIONS["quest_check"],
    )
    async def quest_check(
        since: Since = None, require_pass: RequirePass = False, paths: Paths = None
    ) -> CallToolResult:
        arguments = {"since": since, "require_pass": require_pass, "paths": paths}
        return tool_result(await tools.run("quest_check", arguments))

    @server.resource(
        STATUS_URI,
        name="status",
        mime_type="application/json",
        description="The quests' status: the JSON object of `pytest --quest-status --quest-format json`.",
    )
    async def status() -> str:
        return dumps((await tools.run("quest_status", {})).data)

    return server


def _version() -> str:
    try:
        return metadata.version("pytest-quest")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        return "0"
