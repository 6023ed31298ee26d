"""In-process contexts for the use cases of app/: a project folder's options, store and tests.

The commands that run no test (status, next, export, the person actions) are tested
through app/ with these, without a pytest process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_quest.app.context import Context, RunData
from pytest_quest.app.options import QuestOptions
from pytest_quest.engine.store import RatchetStore
from pytest_quest.engine.testfiles import FileSearch


def quest_options(root: Path, command: str, **changes: Any) -> QuestOptions:
    """The options of `command` for the project in `root` (src/pkg, quest.json, JSON output)."""
    values: dict[str, Any] = {
        "command": command,
        "sources": [root / "src" / "pkg"],
        "quest_file": root / "quest.json",
        "max_tries": 3,
        "format": "json",
        "quest_id": None,
        "timeout": 60.0,
        "lock_timeout": 5.0,
        "strict": False,
        "reopen": None,
        "accept": None,
        "export_to": None,
        "export_force": False,
        "mutants": True,
        "verify": "off",
        "measure_out": None,
    }
    values.update(changes)
    return QuestOptions(**values)


def app_context(root: Path, command: str, run: RunData | None = None, **changes: Any) -> Context:
    """A use case's context in `root`, as the plugin would give it, run from `root`."""
    options = quest_options(root, command, **changes)
    return Context(
        options=options,
        rootdir=root,
        store=RatchetStore(options.quest_file, options.lock_timeout),
        invocation_dir=root,
        tests=FileSearch(roots=[root / "tests"]),
        run=run or RunData(),
    )
