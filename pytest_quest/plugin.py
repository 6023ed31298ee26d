"""pytest hooks of pytest-quest: thin; the work is in ``commands.py``.

With no quest command given, the plugin registers nothing beyond its
options and costs nothing.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from pytest_quest.errors import QuestError
from pytest_quest.options import add_options, raw_value

MEASURING_COMMANDS = ("scan", "check", "audit", "_measure")

_measurer_key = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl
def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_quest import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def _early_command(early_config: pytest.Config) -> str | None:
    namespace = early_config.known_args_namespace
    if getattr(namespace, "quest_measure_out", None):
        return "_measure"
    command = getattr(namespace, "quest", None)
    if command is None:
        try:
            command = early_config.getini("quest") or None
        except ValueError:
            command = None
    return command


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    # Measuring starts here, before conftests import the code under test
    # (as pytest-cov does); module-level lines would be lost otherwise.
    command = _early_command(early_config)
    if command not in MEASURING_COMMANDS:
        return
    from pytest_quest.coexist import pytest_cov_requested

    if pytest_cov_requested(early_config):
        return  # one tracer per process: pytest-cov's is borrowed (coexist.py)
    from pytest_quest.commands import start_measuring

    if command == "_measure":
        # The gate's run: its tests cannot write the ratchet file (issue 4).
        from pytest_quest.mutants_gate import protect_from_env

        protect_from_env()
    try:
        measurer = start_measuring(early_config, command)
    except QuestError as exc:
        raise pytest.UsageError(str(exc)) from None
    if measurer is not None:
        early_config.stash[_measurer_key] = measurer


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    command = raw_value(config, "quest") or (
        "status" if raw_value(config, "quest_status") else None
    )
    if (
        command is None
        and not config.getoption("quest_measure_out", default=None)
        and not raw_value(config, "quest_reopen")
        and not raw_value(config, "quest_accept")
    ):
        return
    from pytest_quest.commands import QuestSession
    from pytest_quest.options import resolve

    try:
        options = resolve(config)
    except QuestError as exc:
        raise pytest.UsageError(str(exc)) from None
    measurer = config.stash.get(_measurer_key, None)
    from pytest_quest import coexist

    needs_measurer = measurer is None and options.command in MEASURING_COMMANDS
    if needs_measurer and coexist.pytest_cov_requested(config):
        try:
            measurer = coexist.borrow_pytest_cov(config, options.sources)
        except QuestError as exc:
            raise pytest.UsageError(str(exc)) from None
    session = QuestSession(config, options, measurer)
    config.pluginmanager.register(session, "quest-session")
    coexist.register(config, session)
    if options.json:
        _terminal_to_stderr(config)


def _terminal_to_stderr(config: pytest.Config) -> None:
    """In JSON mode stdout carries one JSON object: pytest's own output goes to stderr."""
    old = config.pluginmanager.get_plugin("terminalreporter")
    if old is None:
        return
    config.pluginmanager.unregister(old)
    config.pluginmanager.register(pytest.TerminalReporter(config, sys.stderr), "terminalreporter")


__all__ = ["pytest_addoption", "pytest_configure", "pytest_load_initial_conftests"]
