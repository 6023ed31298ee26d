"""Where the repository's files are, for tests that read or copy them."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
EXAMPLE_PROJECT = ROOT / "example_project"
RATCHET = ROOT / "quest.json"
VERIFIERS = Path(__file__).resolve().parent / "verifiers"
AGENT_LOOP = ROOT / "tests" / "acceptance" / "agent_loop.py"


def verifier_script(name: str, *args: object) -> str:
    """The command line of a fake verifier in tests/support/verifiers/."""
    return shlex.join([sys.executable, str(VERIFIERS / name), *map(str, args)])
