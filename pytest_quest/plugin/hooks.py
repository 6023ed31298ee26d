"""pytest hooks of pytest-quest: thin; the work is in ``session.py`` and ``app/``.

With no quest command given, the plugin registers nothing beyond its
options and costs nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Generator
from typing import TYPE_CHECKING, NoReturn

import pytest

from pytest_quest.core.errors import QuestError, QuestUsageError
from pytest_quest.core.platforms import unsupported_reason
from pytest_quest.plugin.options import add_options, measuring_child, raw_value
from pytest_quest.plugin.rootdir import misread_value_message
from pytest_quest.report.escape import encodable

if TYPE_CHECKING:
    from pytest_quest.engine.measure import Measurement

SESSIONLESS_COMMANDS = ("status", "next")
# Commands that decide in a clean judge, their suite run in its child (plugin/check_judge.py).
JUDGED_COMMANDS = ("check", "scan", "audit")

_measurer_key: pytest.StashKey[Measurement] = pytest.StashKey()
# The exit status of a clean judge run for an in-process ``pytest.main()`` caller.
_judged_key: pytest.StashKey[tuple[int, str, str]] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl
def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_quest.plugin import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def _early_command(early_config: pytest.Config) -> str | None:
    namespace = early_config.known_args_namespace
    channel = getattr(namespace, "quest_channel", None)
    if channel:
        # A gate child: what it is for comes from its judge, not from argv.
        from pytest_quest.plugin import child_channel

        role = child_channel.open_channel(str(channel)).get("role")
        return "_measure" if role == "measure" else None
    command = getattr(namespace, "quest", None)
    if command is None:
        try:
            command = early_config.getini("quest") or None
        except ValueError:
            command = None
    return command


@pytest.hookimpl(wrapper=True, specname="pytest_load_initial_conftests")
def pytest_load_initial_conftests_core(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None, object, object]:
    """Before pytest-cov starts its tracer (in this hook, whatever the plugins' order): a core
    that keeps per-test contexts, for a measuring quest command that borrows it; pytest-cov
    switched off for a command that runs no test here (its empty measurement would warn
    and its report, of an old data file under ``--cov-append``, bury the command's lines)."""
    command = _early_command(early_config)
    if command in ("scan", "check", "audit"):
        from pytest_quest.plugin.pytest_cov import pytest_cov_requested, use_tracing_core

        if pytest_cov_requested(early_config):
            use_tracing_core()
    elif _runs_no_test_here(early_config, command):
        # What --no-cov does: pytest-cov reads it from this namespace when it starts.
        early_config.known_args_namespace.no_cov = True
    return (yield)


def _runs_no_test_here(early_config: pytest.Config, command: str | None) -> bool:
    """A quest command that runs no test in this process: a report, a merge, a person action.

    ``submit``, ``check``, ``scan`` and ``combine`` hand over to the clean judge first
    (plugin/judge.py); the judge runs no test either.
    """
    if command in ("status", "next", "export", "combine"):
        return True
    namespace = early_config.known_args_namespace
    return command is None and any(
        getattr(namespace, name, None)
        for name in (
            "quest_status",
            "quest_reopen",
            "quest_accept",
            "quest_exclude",
            "quest_policy",
        )
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    # Measuring starts here, before conftests import the code under test
    # (as pytest-cov does); module-level lines would be lost otherwise.
    command = _early_command(early_config)
    if command is not None:
        _refuse_unsupported_platform(command, _early_json(early_config))
    misread = misread_value_message(early_config, args)
    if misread is not None:
        _usage_error(QuestUsageError(misread), command, _early_json(early_config))
    # check, scan (a shard's job too) and audit decide in the clean judge, their suite run
    # in its child (app/check_run.py); submit and combine run no test there.
    if command in ("submit", "combine", *JUDGED_COMMANDS):
        _hand_over_to_judge(early_config)
        return
    if command != "_measure":
        return  # only the gate's measuring child measures
    from pytest_quest.plugin.pytest_cov import pytest_cov_requested

    if pytest_cov_requested(early_config):
        return  # one tracer per process: pytest-cov's is borrowed (pytest_cov.py)
    from pytest_quest.engine.guard import protect_from_env
    from pytest_quest.plugin.session import start_measuring

    protect_from_env()  # the gate's run: its tests cannot write the ratchet file
    try:
        measurer = start_measuring(early_config)
    except QuestError as exc:
        _usage_error(exc, command, _early_json(early_config))
    if measurer is not None:
        early_config.stash[_measurer_key] = measurer
        # Stopped where the session ends or an option is refused; a config ended any
        # other way (an API caller that parses and never configures) must not leave
        # this tracer running in its process, in place of whatever measured it before.
        early_config.add_cleanup(lambda: _discard_measurer(measurer))


def _discard_measurer(measurer: Measurement) -> None:
    """Stop `measurer` (a no-op when stopped already) and remove its private folder."""
    measurer.stop()
    if measurer.data_dir:
        shutil.rmtree(measurer.data_dir, ignore_errors=True)


def _hand_over_to_judge(early_config: pytest.Config) -> None:
    """Make sure the verdict is written by a process that loads no project code (plugin/judge.py).

    Runs before any conftest is imported.  This process becomes the judge
    when it provably is clean; otherwise it is replaced by a clean judge, or
    (inside a ``pytest.main()`` caller) runs one and relays its output.
    """
    from pytest_quest.plugin import judge

    reasons = judge.unclean_reasons(early_config)
    if not reasons:
        _become_judge()
        judge.restore_user_env(judge.handover())
        return
    if judge.handover() is not None:
        # Handed over already and still not clean: never exec again.
        raise pytest.UsageError("the clean judge could not start clean: " + "; ".join(reasons))
    if judge.is_main_program(early_config):
        judge.exec_judge(early_config)
    early_config.stash[_judged_key] = judge.run_judge(early_config)
    # This process judges nothing: it loads no conftest either.
    early_config.known_args_namespace.noconftest = True


def _become_judge() -> None:
    """The judge adopts its children's orphans and treats SIGTERM as Ctrl-C (nothing recorded)."""
    from pytest_quest.engine.processes import become_judge

    become_judge()
    _sigterm_is_ctrl_c()


def _sigterm_is_ctrl_c() -> None:
    """SIGTERM (a CI job cancelled, ``kill``) stops the command as Ctrl-C does: nothing recorded.

    pytest turns the KeyboardInterrupt into an interrupted session; the
    session's end says ``INTERRUPTED``, exits 2, kills the gate's children
    and removes the temporary data folder (plugin/session.py).
    """
    from pytest_quest.engine.sigterm import sigterm_is_ctrl_c

    sigterm_is_ctrl_c()


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    judged = config.stash.get(_judged_key, None)
    if judged is None:
        return _without_session(config)
    code, out, err = judged
    if code < 0:  # the judge was killed: no verdict, as for a gate child (core/environment.py)
        from pytest_quest.core.environment import ENVIRONMENT_EXIT, judge_killed

        cause = judge_killed(code)
        err, code = err + f"NO VERDICT: {cause}\n", ENVIRONMENT_EXIT
        if _early_json(config) and not out.strip():
            from pytest_quest.core.model import JSON_SCHEMA  # an error's output only

            data = {"schema": JSON_SCHEMA, "command": raw_value(config, "quest"), "error": cause}
            out = json.dumps(data, indent=2, sort_keys=True) + "\n"
    # The judge wrote UTF-8; this console may not take every character of it.
    sys.stderr.write(encodable(err, sys.stderr.encoding))
    sys.stderr.flush()
    sys.stdout.write(encodable(out, sys.stdout.encoding))
    sys.stdout.flush()
    return code


def _without_session(config: pytest.Config) -> int | None:
    """``status`` and ``next`` answer here, before any session starts (plugin/sessionless.py).

    They run no test and read only the ratchet (``next`` may write its active
    pointer): as ``pytest --version``, no other plugin is configured.
    """
    command = raw_value(config, "quest") or (
        "status" if raw_value(config, "quest_status") else None
    )
    if command not in SESSIONLESS_COMMANDS:
        return None
    if config.option.help or config.option.version or hasattr(config, "workerinput"):
        return None  # pytest answers first; an xdist worker runs what its controller sends
    json_mode = raw_value(config, "quest_format") == "json"
    _refuse_unsupported_platform(command, json_mode)
    from pytest_quest.plugin import sessionless

    try:
        return sessionless.run(config)
    except QuestError as exc:
        _usage_error(exc, command, json_mode)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if _judged_key in config.stash:
        return
    command = raw_value(config, "quest") or (
        "status" if raw_value(config, "quest_status") else None
    )
    if (
        command is None
        and not measuring_child(config)
        and not raw_value(config, "quest_reopen")
        and not raw_value(config, "quest_accept")
        and not raw_value(config, "quest_policy")
        and not raw_value(config, "quest_exclude")
    ):
        return
    _refuse_unsupported_platform(command, raw_value(config, "quest_format") == "json")
    from pytest_quest.plugin.options import resolve
    from pytest_quest.plugin.quiet import check_positional_paths, use_quiet_reporter
    from pytest_quest.plugin.session import QuestSession

    try:
        options = resolve(config)
        # check, scan: the judge runs no test itself; its child's output is shown as it ran.
        quiet = options.command != "_measure"
        if options.command != "_measure":
            check_positional_paths(config)
    except QuestError as exc:
        measurer = config.stash.get(_measurer_key, None)
        if measurer is not None:
            _discard_measurer(measurer)
        _usage_error(exc, command, raw_value(config, "quest_format") == "json")
    measurer = config.stash.get(_measurer_key, None)
    from pytest_quest.plugin import pytest_cov, xdist

    needs_measurer = measurer is None and options.command == "_measure"
    if needs_measurer and pytest_cov.pytest_cov_requested(config):
        try:
            measurer = pytest_cov.borrow_pytest_cov(config, options.sources)
        except QuestError as exc:
            raise pytest.UsageError(str(exc)) from None
    session = QuestSession(config, options, measurer)
    config.pluginmanager.register(session, "quest-session")
    xdist.register(config, session)
    if quiet:
        # No test runs here: no session header, no "no tests ran" line.
        use_quiet_reporter(config, sys.stderr if options.json else None)
    elif options.json:
        _terminal_to_stderr(config)


def _refuse_unsupported_platform(command: str | None, json_mode: bool) -> None:
    """Exit 4 with a clear message on a system the judge cannot run on (core/platforms.py)."""
    reason = unsupported_reason(sys.platform)
    if reason is not None:
        _usage_error(QuestUsageError(reason), command, json_mode)


def _early_json(early_config: pytest.Config) -> bool:
    namespace = early_config.known_args_namespace
    return (getattr(namespace, "quest_format", None) or _ini(early_config)) == "json"


def _ini(early_config: pytest.Config) -> str:
    try:
        return str(early_config.getini("quest_format"))
    except ValueError:
        return ""


def _usage_error(exc: QuestError, command: str | None, json_mode: bool) -> NoReturn:
    """Stop with pytest's usage error (exit 4); in JSON mode stdout still gets its one object."""
    from pytest_quest.report.escape import github_json, github_plain, in_github_actions, visible

    if json_mode:
        from pytest_quest.app.options import COMMANDS
        from pytest_quest.core.model import JSON_SCHEMA

        data = {
            "schema": JSON_SCHEMA,
            "command": command if command in COMMANDS else None,
            "error": str(exc),
        }
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        sys.stdout.write(github_json(text) if in_github_actions(os.environ) else text)
        sys.stdout.flush()
    message = visible(str(exc))  # one line, no control character of a stranger's
    raise pytest.UsageError(
        github_plain(message) if in_github_actions(os.environ) else message
    ) from None


def _terminal_to_stderr(config: pytest.Config) -> None:
    """In JSON mode stdout carries one JSON object: pytest's own output goes to stderr."""
    old = config.pluginmanager.get_plugin("terminalreporter")
    if old is None:
        return
    config.pluginmanager.unregister(old)
    config.pluginmanager.register(pytest.TerminalReporter(config, sys.stderr), "terminalreporter")
