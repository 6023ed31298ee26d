"""The clean judge: ``submit`` hands over to a pytest process that loads no project code.

See docs/judge.md, "The trust boundary": what runs where, how it is enforced, its limits.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_quest.plugin.loaded import pytest_cov_loaded, xdist_loaded

# Carries the user's invocation into the judge: its arguments (for the
# children's -p/-o options), the plugin environment it had, and what it loaded.
HANDOVER_ENV = "PYTEST_QUEST_JUDGE"
# The user's plugin environment: cleared for the judge, given back to its children.
PLUGIN_ENV = ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")
# Plugins a clean judge may hold: pytest's own and pytest-quest's.
_OWN_PREFIXES = ("_pytest.", "pytest_quest.")
_OWN_MODULES = ("pytest", "_pytest", "pytest_quest")


@dataclass
class Handover:
    """What the user's process knew that the judge cannot see (it loads no plugin)."""

    args: list[str]
    env: dict[str, str | None] = field(default_factory=dict)
    has_xdist: bool = False
    has_cov: bool = False
    workers: int = 1  # xdist's ``-n``, resolved: audit's mutation children run that many at once


def unclean_reasons(early_config: pytest.Config) -> list[str]:
    """Why this process could run project code; empty when it provably cannot (from facts only)."""
    reasons = []
    if not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        reasons.append("plugin autoload is on")
    for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        if os.environ.get(name):
            reasons.append(f"{name} is set")
    if not getattr(early_config.known_args_namespace, "noconftest", False):
        reasons.append("conftest files would be loaded")
    try:
        if early_config.getini("addopts"):
            reasons.append("the ini file's addopts are in effect")
    except ValueError:
        pass
    manager = early_config.pluginmanager
    try:
        if manager.has_plugin("python_path") and early_config.getini("pythonpath"):
            reasons.append("the ini file's pythonpath would put project folders on sys.path")
    except ValueError:
        pass
    if manager.list_plugin_distinfo():
        reasons.append("a plugin was loaded from a distribution's entry point")
    for name, plugin in manager.list_name_plugin():
        if plugin is None or _is_own(plugin):
            continue
        reasons.append(f"plugin {name!r} is loaded")
    return reasons


def _is_own(plugin: object) -> bool:
    name = plugin.__name__ if isinstance(plugin, types.ModuleType) else type(plugin).__module__
    return name in _OWN_MODULES or name.startswith(_OWN_PREFIXES)


def is_main_program(early_config: pytest.Config) -> bool:
    """Whether pytest is this process's program (not a ``pytest.main()`` call inside another)."""
    return [str(a) for a in early_config.invocation_params.args] == sys.argv[1:]


def judge_options(early_config: pytest.Config, args: list[str]) -> list[str]:
    """`args` less the options the clean judge does not know (those of other plugins).

    The option table of this process (its plugins loaded) tells how many
    values an option takes; a fresh one with pytest's and pytest-quest's
    options only tells which the judge understands.  An option unknown to
    both (a conftest's) is dropped alone.
    """
    from _pytest.config import get_config

    from pytest_quest.plugin.options import add_options

    class QuestOptions:
        def pytest_addoption(self, parser: pytest.Parser) -> None:
            add_options(parser)

    clean = get_config()
    clean.pluginmanager.register(QuestOptions(), "quest")
    known = _option_actions(clean._parser)
    full = _option_actions(early_config._parser)
    kept: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            kept += args[index:]
            break
        if not arg.startswith("-") or arg == "-" or arg in ("-p", "-o") or arg.startswith("-p"):
            kept.append(arg)
            index += 1
            continue
        name, attached = (
            (arg.split("=", 1)[0], True) if arg.startswith("--") and "=" in arg else (arg, False)
        )
        if not arg.startswith("--") and len(arg) > 2:
            name, attached = arg[:2], True
        action = known.get(name) or full.get(name)
        takes = action is not None and action.nargs != 0 and not attached
        if takes and action is not None and action.nargs == "?":
            # An optional value (``--cov [SOURCE]``) is taken only when one follows.
            takes = index + 1 < len(args) and not args[index + 1].startswith("-")
        width = 2 if takes and index + 1 < len(args) else 1
        if name in known:
            kept += args[index : index + width]
        index += width
    return kept


def _option_actions(parser: Any) -> dict[str, Any]:
    """argparse's table of option strings (pytest 9: ``optparser``; before: ``_getparser()``)."""
    argparser = getattr(parser, "optparser", None) or parser._getparser()
    return dict(argparser._option_string_actions)


def suite_args(config: pytest.Config, args: list[str]) -> list[str]:
    """`args` less pytest-quest's own options: the pytest run ``check``'s child makes of the suite.

    pytest-quest's options (this process knows them all) and their values go;
    everything else stays as the user gave it, the project's own options included.
    """
    actions = _option_actions(config._parser)
    kept: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            return kept + args[index:]
        name = arg.split("=", 1)[0]
        if not name.startswith("--quest"):
            kept.append(arg)
            index += 1
            continue
        action = actions.get(name)
        takes = action is not None and action.nargs != 0 and "=" not in arg
        index += 2 if takes else 1
    return kept


def judge_args(args: list[str]) -> list[str]:
    """The clean judge's command line: the user's arguments less every plugin they load."""
    kept: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "-p" and index + 1 < len(args):
            if args[index + 1].startswith("no:"):
                kept += [arg, args[index + 1]]
            index += 2
            continue
        if arg.startswith("-p") and len(arg) > 2:
            if arg[2:].lstrip("=").startswith("no:"):
                kept.append(arg)
            index += 1
            continue
        if arg in ("-o", "--override-ini") and index + 1 < len(args):
            if not args[index + 1].startswith("addopts="):
                kept += [arg, args[index + 1]]
            index += 2
            continue
        if arg.startswith("--override-ini=addopts="):
            index += 1
            continue
        kept.append(arg)
        index += 1
    # -P: the current folder is not put on sys.path (a project's `pytest.py` is not imported).
    safe = ["-P"] if sys.version_info >= (3, 11) else []
    return [
        sys.executable,
        *safe,
        "-m",
        "pytest",
        "-p",
        "pytest_quest.plugin.hooks",
        "--noconftest",
        "-p",
        "no:cacheprovider",
        # The ini file's pythonpath would put the project's folders on sys.path.
        "-p",
        "no:python_path",
        *kept,
        "-o",
        "addopts=",
    ]


def judge_env(early_config: pytest.Config, args: list[str]) -> dict[str, str]:
    """The judge's environment: autoload off, no plugin variables, the handover for its children."""
    env = dict(os.environ)
    manager = early_config.pluginmanager
    handover = {
        "args": args,
        "env": {name: os.environ.get(name) for name in PLUGIN_ENV},
        "has_xdist": xdist_loaded(manager),
        "has_cov": pytest_cov_loaded(manager),
        "workers": _workers(early_config),
    }
    for name in PLUGIN_ENV:
        env.pop(name, None)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env[HANDOVER_ENV] = json.dumps(handover)
    return env


def handover() -> Handover | None:
    """What the user's process handed to this judge (None when it was started clean by hand)."""
    raw = os.environ.get(HANDOVER_ENV)
    if not raw:
        return None
    try:
        data: dict[str, Any] = json.loads(raw)
        return Handover(
            args=[str(a) for a in data["args"]],
            env={str(k): (None if v is None else str(v)) for k, v in data["env"].items()},
            has_xdist=bool(data.get("has_xdist")),
            has_cov=bool(data.get("has_cov")),
            workers=_positive(data.get("workers")),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _workers(early_config: pytest.Config) -> int:
    """xdist's ``-n`` as the user gave it; ``auto`` and ``logical`` as many as this process may use."""
    value: Any = getattr(early_config.known_args_namespace, "numprocesses", None)
    if value in ("auto", "logical"):
        given = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
        value = int(given) if given.isdigit() else len(os.sched_getaffinity(0))
    return _positive(value)


def _positive(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else 1


def restore_user_env(given: Handover | None) -> None:
    """Give the judge's children the plugin environment the user had (the judge has loaded its own)."""
    if given is None:
        return
    for name in PLUGIN_ENV:
        value = given.env.get(name)
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def exec_judge(early_config: pytest.Config) -> None:
    """Replace this process with the clean judge (never returns)."""
    args = [str(a) for a in early_config.invocation_params.args]
    command = judge_args(judge_options(early_config, args))
    env = judge_env(early_config, args)
    # pytest captures this process's output while it starts: the judge gets the real one.
    capture = early_config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.stop_global_capturing()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(command[0], command, env)


def run_judge(early_config: pytest.Config) -> tuple[int, str, str]:
    """Run the clean judge as a child of an in-process ``pytest.main()`` caller.

    Returns its exit status, stdout and stderr, for the caller to relay.
    The caller's own process is outside the trust boundary (docs/judge.md).
    """
    args = [str(a) for a in early_config.invocation_params.args]
    command = judge_args(judge_options(early_config, args))
    env = judge_env(early_config, args)
    process = subprocess.Popen(
        command,
        cwd=str(early_config.invocation_params.dir),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = process.communicate()
    except BaseException:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        raise
    return (
        process.returncode,
        out.decode("utf-8", errors="replace"),
        err.decode("utf-8", errors="replace"),
    )
