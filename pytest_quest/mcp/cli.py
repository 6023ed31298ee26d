"""``pytest-quest-mcp``: the console script starting the MCP server over stdio (docs/mcp.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

INSTALL_HINT = 'pytest-quest-mcp needs the MCP SDK: pip install "pytest-quest[mcp]"'


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="pytest-quest-mcp",
        description="pytest-quest's agent loop as MCP tools over stdio (docs/mcp.md).",
        epilog="Arguments after -- are passed to every pytest run (set by you, never by the agent).",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=Path.cwd(),
        help="the project's root (default: the current folder)",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the Python that runs pytest, with the project's dependencies (default: this one)",
    )
    parser.add_argument("pytest_args", nargs="*", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """The console script: serve over stdio until the client closes the channel."""
    options = parse_args(sys.argv[1:] if argv is None else argv)
    root = options.root.resolve()
    if not root.is_dir():
        print(f"pytest-quest-mcp: --root {root} is not a folder", file=sys.stderr)
        return 2
    handed = [arg for arg in options.pytest_args if arg.startswith("--quest")]
    if handed:
        # The tools choose the quest options; a person action must never ride along.
        print(
            f"pytest-quest-mcp: quest options are not passed through: {' '.join(handed)}",
            file=sys.stderr,
        )
        return 2
    try:
        # The SDK is an optional extra: imported here, so a missing one gets a hint.
        from pytest_quest.mcp.server import QuestTools, build_server  # noqa: PLC0415
    except ImportError as exc:
        print(f"{INSTALL_HINT} ({exc})", file=sys.stderr)
        return 1
    build_server(QuestTools(root, options.python, options.pytest_args)).run("stdio")
    return 0
