"""``status`` and ``next`` without a pytest session, as ``pytest --version`` runs.

They run no test, so they answer from ``pytest_cmdline_main`` before pytest
configures its plugins: a session cost more than reading the file.  Output,
exit statuses and errors are the session's (plugin/session.py).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import pytest
from _pytest.config import create_terminal_writer

from pytest_quest.app.context import Context, RunData
from pytest_quest.engine.store import RatchetStore
from pytest_quest.engine.store_help import paused_gc
from pytest_quest.plugin.invocation import answered, build_context, safe_lines, writer_terminal
from pytest_quest.plugin.options import resolve
from pytest_quest.plugin.quiet import check_positional_paths
from pytest_quest.report.escape import github_json, in_github_actions, visible
from pytest_quest.report.json import Output, dumps


def use_case(command: str) -> Callable[[Context], Output]:
    """The use case of `command`, importing only its own module."""
    if command == "next":
        from pytest_quest.app.next import next_quest

        return next_quest
    from pytest_quest.app.status import status

    return status


def run(config: pytest.Config) -> int:
    """Run the command, write what it says as the session would, return its exit status."""
    # A read makes a million objects and no cycle: the collector's passes over them, once
    # it is on again, cost more than the command (it is on again for an in-process caller).
    with paused_gc():
        return _run(config)


def _run(config: pytest.Config) -> int:
    recorder = _Warnings()
    # pytest replays the warnings of its configuration to a plugin registered late.
    config.pluginmanager.register(recorder, "quest-sessionless-warnings")
    options = resolve(config)  # a QuestError here is the caller's usage error
    check_positional_paths(config)
    store = RatchetStore(options.quest_file, options.lock_timeout, Path(str(config.rootpath)))
    view = writer_terminal(config)

    def command() -> Output:
        context = build_context(config, options, store=store, run=RunData(), view=view)
        return use_case(str(options.command))(context)

    output = answered(options.command, store, command)
    write(output, json_mode=options.json, markup=view.markup)
    recorder.summary(config, sys.stderr if options.json else sys.stdout)
    return output.exitcode


class _Warnings:
    """The configuration's warnings (a deprecated ini name...), shown as pytest's summary would."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def pytest_warning_recorded(self, warning_message: warnings.WarningMessage) -> None:
        category = warning_message.category.__name__
        line = f"{category}: {warning_message.message}"
        if line not in self.seen:
            self.seen.append(line)

    def summary(self, config: pytest.Config, file: TextIO) -> None:
        if not self.seen or config.pluginmanager.is_blocked("terminal"):
            return
        writer = create_terminal_writer(config, file)
        writer.sep("=", "warnings summary", yellow=True)
        for line in self.seen:
            writer.line(f"  {visible(line)}")
        writer.flush()


def write(output: Output, *, json_mode: bool, markup: bool) -> None:
    """stderr lines, then the text (or the one JSON object) on stdout."""
    if output.stderr:
        for line in safe_lines(output.stderr, markup=False):
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
    if json_mode:
        text = dumps(output.data)
        sys.stdout.write(github_json(text) if in_github_actions(os.environ) else text)
    else:
        sys.stdout.write("".join(line + "\n" for line in safe_lines(output.lines, markup=markup)))
    sys.stdout.flush()
