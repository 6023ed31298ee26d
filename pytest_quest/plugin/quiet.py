"""pytest's terminal for quest commands that run no test: no header, no "no tests ran" line.

The header and ``no tests ran`` line only hide what the command says.  The
reporter stays pytest's own (warnings, ``--color`` keep working).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

import pytest

from pytest_quest.core.errors import QuestUsageError


# pytest marks TerminalReporter final for typing; subclassing it to leave out
# two parts keeps everything else of pytest's terminal (warnings, markup, -q).
class QuietReporter(pytest.TerminalReporter):  # type: ignore[misc]
    """pytest's terminal reporter without the session header and the final statistics line."""

    @property
    def showheader(self) -> bool:
        return False

    def summary_stats(self) -> None:
        return None


def use_quiet_reporter(config: pytest.Config, file: TextIO | None = None) -> None:
    """Replace pytest's terminal reporter with a quiet one writing to `file` (default: stdout)."""
    old = config.pluginmanager.get_plugin("terminalreporter")
    if old is None:
        return  # -p no:terminal: nothing is printed anyway
    config.pluginmanager.unregister(old)
    # Warnings recorded so far (a deprecated ini name) reach it too: pytest
    # replays its historic warning hook to a plugin registered late.
    config.pluginmanager.register(QuietReporter(config, file), "terminalreporter")


def is_quiet(config: pytest.Config) -> bool:
    return isinstance(config.pluginmanager.get_plugin("terminalreporter"), QuietReporter)


def check_positional_paths(config: pytest.Config) -> None:
    """Each positional path must exist, as pytest's collection demands (else exit 4).

    Commands that run no test skip collection, which is where pytest checks them.
    """
    if config.getoption("pyargs", default=False):
        return  # module names, not paths
    invocation = Path(str(config.invocation_params.dir))
    for arg in config.getoption("file_or_dir", default=None) or []:
        path = str(arg).split("::")[0]
        if not os.path.exists(invocation / path):
            raise QuestUsageError(f"file or directory not found: {arg}")
