"""``python -m pytest_quest.mcp``: the same as the ``pytest-quest-mcp`` console script."""

from __future__ import annotations

import sys

from pytest_quest.mcp.cli import main

sys.exit(main())
