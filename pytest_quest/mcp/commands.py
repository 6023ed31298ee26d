"""What the MCP tools run: a ``pytest --quest ... --quest-format json`` command line, checked first.

No MCP SDK here (server.py is the glue).  Each tool runs pytest in a child
process in the rootdir, so the judge's trust boundary holds as on the command
line; no person action can be built from a tool's arguments.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_quest.core.model import JSON_SCHEMA

#: The tools and the quest command each runs (``--quest-status`` for status).
TOOLS = {
    "quest_scan": "scan",
    "quest_next": "next",
    "quest_submit": "submit",
    "quest_status": "status",
    "quest_check": "check",
}
MAX_ARGUMENT = 1000
"""The longest id, ref or path a tool takes."""


class ArgumentError(ValueError):
    """A tool argument that is not what the tool takes; the message names it."""


@dataclass(frozen=True)
class Invocation:
    """A checked tool call: the pytest arguments after ``python -m pytest``."""

    command: str
    args: list[str]


@dataclass
class ToolResult:
    """The command's JSON object, its exit status, and whether it is an error."""

    data: dict[str, Any]
    exitcode: int
    error: bool = False


def _text(name: str, value: object, *, dash: bool = False) -> str:
    if not isinstance(value, str):
        raise ArgumentError(f"{name}: expected a string, got {type(value).__name__}")
    if not value.strip():
        raise ArgumentError(f"{name}: expected a non-empty string")
    if len(value) > MAX_ARGUMENT:
        raise ArgumentError(f"{name}: longer than {MAX_ARGUMENT} characters")
    if any(ord(char) < 32 for char in value):
        raise ArgumentError(f"{name}: control characters are not allowed")
    if value.startswith("-") and not dash:
        raise ArgumentError(f"{name}: may not start with '-' (it would read as an option)")
    return value


def quest_id(value: object) -> str:
    """A quest id, ``FILE::QUALNAME`` (``@N`` for a twin), as `status` lists them."""
    text = _text("quest_id", value)
    if "::" not in text:
        raise ArgumentError(
            f"quest_id {text!r}: expected FILE::QUALNAME (quest_status lists the ids)"
        )
    return text


_MUTANT_IDS = re.compile(r"m[0-9a-f]{8}(,m[0-9a-f]{8})*")


def mutant_ids(value: object) -> str:
    """Surviving mutants' ids as a FAIL fact names them (`m1a2b3c4d`, comma separated)."""
    text = _text("dispute", value).replace(" ", "")
    if not _MUTANT_IDS.fullmatch(text):
        raise ArgumentError(
            f"dispute {text!r}: expected mutant ids as the facts give them (m1a2b3c4d, comma "
            "separated)"
        )
    return text


def git_ref(value: object) -> str:
    return _text("since", value)


def test_path(value: object, root: Path) -> str:
    """A path relative to the project root that stays inside it (a test file or folder)."""
    text = _text("paths", value)
    path = Path(text.split("::", 1)[0])
    if path.is_absolute():
        raise ArgumentError(f"paths: {text!r} must be relative to the project root")
    resolved = (root / path).resolve()
    if resolved != root.resolve() and root.resolve() not in resolved.parents:
        raise ArgumentError(f"paths: {text!r} is outside the project root")
    if not resolved.exists():
        raise ArgumentError(f"paths: {text!r} does not exist under the project root")
    return text


def invocation(tool: str, arguments: dict[str, Any], root: Path) -> Invocation:
    """The checked command line of `tool` called with `arguments`; ArgumentError otherwise."""
    if tool not in TOOLS:
        raise ArgumentError(f"unknown tool {tool!r} (tools: {', '.join(TOOLS)})")
    command = TOOLS[tool]
    allowed = {
        "quest_scan": {"paths"},
        "quest_next": {"quest_id", "since"},
        "quest_submit": {"quest_id", "dispute", "reason"},
        "quest_status": {"since"},
        "quest_check": {"since", "require_pass", "paths"},
    }[tool]
    given = {key: value for key, value in arguments.items() if value is not None}
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise ArgumentError(f"{tool} takes {', '.join(sorted(allowed))}; not {', '.join(unknown)}")
    args = ["--quest-status"] if command == "status" else ["--quest", command]
    args += ["--quest-format", "json"]
    if "quest_id" in given:
        args.append(f"--quest-id={quest_id(given['quest_id'])}")
    if "since" in given:
        args.append(f"--quest-since={git_ref(given['since'])}")
    if ("dispute" in given) != ("reason" in given):
        raise ArgumentError(
            "dispute and reason go together: the mutant ids and why no input can "
            "tell them from the function"
        )
    if "dispute" in given:
        args.append(f"--quest-dispute={mutant_ids(given['dispute'])}")
        # Joined to its option by `=`: a reason may start with a dash.
        args.append(f"--quest-reason={_text('reason', given['reason'], dash=True)}")
    if given.get("require_pass") is not None:
        if not isinstance(given["require_pass"], bool):
            raise ArgumentError("require_pass: expected true or false")
        if given["require_pass"]:
            args.append("--quest-require-pass")
    paths = given.get("paths") or []
    if not isinstance(paths, list):
        raise ArgumentError("paths: expected a list of paths relative to the project root")
    args += [test_path(path, root) for path in paths]
    return Invocation(command, args)


def result_of(command: str, completed: subprocess.CompletedProcess[bytes]) -> ToolResult:
    """The JSON object the command printed; an error object of the same shape when there is none."""
    stderr = completed.stderr.decode("utf-8", errors="replace").splitlines()[-5:]
    try:
        data = json.loads(completed.stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        data = None
    if not isinstance(data, dict):
        message = (
            f"pytest exited {completed.returncode} without printing one JSON object; "
            "its stderr ends with: " + " | ".join(stderr)
        )
        return ToolResult(error_object(command, message), completed.returncode, True)
    return ToolResult(data, completed.returncode, "error" in data)


def error_object(command: str | None, message: str) -> dict[str, Any]:
    """An error in the shape of the command line's (``docs/json-schema.md``)."""
    return {"schema": JSON_SCHEMA, "command": command, "error": message}


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True)
