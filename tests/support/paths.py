"""Where the repository's files are, for tests that read or copy them."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
EXAMPLE_PROJECT = ROOT / "example_project"
RATCHET = ROOT / "quest.json"
VERIFIERS = Path(__file__).resolve().parent / "verifiers"
AGENT_LOOP = ROOT / "tests" / "acceptance" / "agent_loop.py"
