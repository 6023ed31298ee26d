"""``status`` and ``next`` without a pytest session, as ``pytest --version`` runs.

They run no test and read only the ratchet, so they answer from
``pytest_cmdline_main`` before pytest configures its plugins: no session,
no collection, no other plugin's session hooks (on 10,000 quests that floor
cost more than reading the file).  Output, exit statuses and errors are the
session's (plugin/session.py): the same use cases, the same escaping.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import TextIO

import pytest
from _pytest.config import create_terminal_writer

from pytest_quest.app.context import Terminal
from pytest_quest.app.environment import interrupted_done
from pytest_quest.core.errors import QuestError
from pytest_quest.plugin.options import resolve
from pytest_quest.plugin.quiet import check_positional_paths
from pytest_quest.plugin.session import QuestSession
from pytest_quest.report.ci import in_github_actions
from pytest_quest.report.escape import github_json, visible
from pytest_quest.report.json import Output, dumps, envelope, error_output


def run(config: pytest.Config) -> int:
    """Run the command, write what it says as the session would, return its exit status."""
    recorder = _Warnings()
    # pytest replays the warnings of its configuration to a plugin registered late.
    config.pluginmanager.register(recorder, "quest-sessionless-warnings")
    options = resolve(config)  # a QuestError here is the caller's usage error
    check_positional_paths(config)
    session = QuestSession(config, options, None)
    view = terminal(config)
    try:
        output = session.run_command(view)
    except QuestError as exc:
        output = error_output(str(exc), int(pytest.ExitCode.USAGE_ERROR))
    except KeyboardInterrupt:
        done = interrupted_done(session.store.writes, session.store.marks)
        output = Output(
            {"error": f"interrupted: {done}"},
            [f"INTERRUPTED: {done}; run the command again"],
            int(pytest.ExitCode.INTERRUPTED),
        )
    output.data = envelope(options.command, output.data)
    write(session, output, markup=view.markup)
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


def terminal(config: pytest.Config) -> Terminal:
    """The terminal pytest's reporter would have drawn on (plugin/session.py terminal())."""
    if config.pluginmanager.is_blocked("terminal"):
        return Terminal(ascii=True)  # -p no:terminal: plain lines
    writer = create_terminal_writer(config, sys.stdout)
    plain = (
        not sys.stdout.isatty()
        or bool(os.environ.get("NO_COLOR"))
        or os.environ.get("TERM") == "dumb"
    )
    return Terminal(markup=writer.hasmarkup, width=writer.fullwidth, ascii=plain)


def write(session: QuestSession, output: Output, *, markup: bool) -> None:
    """stderr lines, then the text (or the one JSON object) on stdout."""

    if output.stderr:
        for line in session.safe_lines(output.stderr, markup=False):
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
    if session.options.json:
        text = dumps(output.data)
        sys.stdout.write(github_json(text) if in_github_actions(os.environ) else text)
    else:
        for line in session.safe_lines(output.lines, markup=markup):
            sys.stdout.write(line + "\n")
    sys.stdout.flush()


__all__ = ["run", "terminal", "write"]
