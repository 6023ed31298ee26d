"""The mutation child's start: its instructions read, and its fresh run held, as early as it can.

A ``-p`` plugin is handed the config before the entry-point plugins load
(`pytest_plugin_registered`).  When the instructions are already in the
channel they are read there and the held fresh run (plugin/fresh_kill.py) is
started, overlapping those plugins' imports; otherwise all of it is done in
`pytest_load_initial_conftests`, before any conftest.
"""

from __future__ import annotations

import os
import select
from collections.abc import Sequence

import pytest

from pytest_quest.engine import remote_mutant
from pytest_quest.engine.guard import protect_from_env
from pytest_quest.engine.remote_mutant import RemoteMutants
from pytest_quest.plugin import child_channel, fresh_kill
from pytest_quest.plugin.fresh_kill import ROLE as FRESH_ROLE
from pytest_quest.plugin.rewrite import leave_sources_unrewritten

# The mutants in the processes the tests start (engine/remote_mutant.py), when on.
REMOTE: list[RemoteMutants] = []
# Variables through which another coverage configuration would take the tests' processes.
_REMOTE_CLEARED = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_FILE", "COVERAGE_RCFILE")
# Whether this process's start was done (once: by the first of the two hooks that could).
_BEGUN: list[bool] = []


def channel_argument(args: Sequence[str]) -> str:
    """The ``--quest-channel`` value of a command line (before any ``--``), or ""."""
    for index, arg in enumerate(args):
        if arg == "--":
            return ""
        if arg == "--quest-channel" and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith("--quest-channel="):
            return arg.partition("=")[2]
    return ""


def _ready(argument: str) -> bool:
    """Whether the judge's instructions can be read now (a held fresh run's cannot: not yet)."""
    if child_channel.opened():
        return True
    try:
        read_fd = int(argument.split(",")[1])
        readable, _, _ = select.select([read_fd], [], [], 0)
    except (ValueError, IndexError, OSError):
        return False  # read where it always was: any error is reported there
    return bool(readable)


def begin(argument: str, config: pytest.Config, *, early: bool) -> None:
    """Read the instructions and start what this role starts before any conftest (once).

    `early`: from `pytest_plugin_registered`, before the entry-point plugins
    load: only a mutation child whose instructions are there already starts
    then; a fresh run always waits for `pytest_load_initial_conftests` (a
    held one reads its instructions only when it is resumed).
    """
    if _BEGUN or (early and not _ready(argument)):
        return
    instructions = child_channel.open_channel(argument)
    role = instructions.get("role")
    if early and role != "check":
        return
    _BEGUN.append(True)
    sources = instructions.get("sources")
    if isinstance(sources, list):  # a fresh run gets its mutation child's
        fresh_kill.SOURCES[:] = [str(source) for source in sources]
    leave_sources_unrewritten(config, fresh_kill.SOURCES)
    if role == FRESH_ROLE:
        protect_from_env()
        if instructions.get("resume"):
            fresh_kill.resume_here()
        remote_mutant.first_in_line()
        fresh_kill.IMPORTED_BEFORE[:] = [remote_mutant.imported_before()]
    if role == "check":
        protect_from_env()
        folder = instructions.get("remote_dir")
        if instructions.get("subprocesses", True) and isinstance(folder, str) and folder:
            overlay = instructions.get("overlay")
            _start_remote(folder, overlay if isinstance(overlay, str) else "")
        fresh_kill.START_ENV.update(os.environ)
        if REMOTE:
            fresh_kill.park_early(instructions, config)


def _start_remote(folder: str, overlay: str = "") -> None:
    """Before any conftest: the tests' processes will read our rcfile at start-up.

    `overlay`: the project's root where the judge's sandbox made it a throwaway
    layer: the mutants are written into its files too (engine/ondisk.py).
    """
    remote = RemoteMutants(folder, overlay)
    REMOTE[:] = [remote]
    for name in _REMOTE_CLEARED:
        os.environ.pop(name, None)
    os.environ["COVERAGE_PROCESS_START"] = remote.rcfile


def finish() -> None:
    """At the end of the child: the held fresh run stopped, the remote mutants' files removed."""
    left = fresh_kill.unpark()
    if left is not None:
        left.stop()
    for remote in REMOTE:
        remote.close()
    REMOTE.clear()
