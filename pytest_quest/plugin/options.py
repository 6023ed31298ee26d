"""Command-line and ini options: every option has an ini twin.

A command-line value wins over the ini value, which wins over the default.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.app.options import COMMANDS, FORMATS, MUTANT_MODES, VERIFY_MODES, QuestOptions
from pytest_quest.core.errors import QuestUsageError



def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be 1 or more")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value:g} must be more than 0 seconds")
    return value


def _choice(choices: tuple[str, ...], what: str) -> Any:
    def parse(text: str) -> str:
        if text not in choices:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {text!r} (choose from {', '.join(choices)})"
            )
        return text

    return parse


# name, cli flags, ini type, default, cli type, action, help
_OPTIONS: list[tuple[str, tuple[str, ...], str, Any, Any, str, str]] = [
    (
        "quest",
        ("--quest",),
        "string",
        None,
        _choice(COMMANDS, "quest command"),
        "store",
        "run a quest command: " + ", ".join(COMMANDS),
    ),
    (
        "quest_status",
        ("--quest-status",),
        "bool",
        False,
        None,
        "store_true",
        "show the quests' progress (same as --quest status); runs no test",
    ),
    (
        "quest_source",
        ("--quest-source",),
        "paths",
        [],
        None,
        "append",
        "the code under test (repeatable); default: coverage.py's [run] source",
    ),
    (
        "quest_file",
        ("--quest-file",),
        "string",
        "quest.json",
        None,
        "store",
        "the ratchet file (default: quest.json in pytest's rootdir)",
    ),
    (
        "quest_max_tries",
        ("--quest-max-tries",),
        "string",
        "3",
        _positive_int,
        "store",
        "failed submissions a quest allows before it is DONE (default 3)",
    ),
    (
        "quest_format",
        ("--quest-format",),
        "string",
        "text",
        _choice(FORMATS, "format"),
        "store",
        "output format: text or json (one JSON object on stdout)",
    ),
    (
        "quest_id",
        ("--quest-id",),
        "string",
        None,
        None,
        "store",
        "act on this quest instead of the active one (next, submit)",
    ),
    (
        "quest_timeout",
        ("--quest-timeout",),
        "string",
        "600",
        _positive_float,
        "store",
        "seconds one gate run may take before it is stopped (REVIEW)",
    ),
    (
        "quest_lock_timeout",
        ("--quest-lock-timeout",),
        "string",
        "5",
        _positive_float,
        "store",
        "seconds to wait for the ratchet file's lock",
    ),
    (
        "quest_strict",
        ("--quest-strict",),
        "bool",
        False,
        None,
        "store_true",
        "check: functions missing from the ratchet fail the check",
    ),
    (
        "quest_reopen",
        ("--quest-reopen",),
        "string",
        None,
        None,
        "store",
        "person action: put a REVIEW or DONE quest back to TODO",
    ),
    (
        "quest_accept",
        ("--quest-accept",),
        "string",
        None,
        None,
        "store",
        "person action: settle a REVIEW quest as PASS",
    ),
    (
        "quest_export_to",
        ("--quest-export-to",),
        "string",
        None,
        None,
        "store",
        "export: the report file (.json, .csv, .md or .sarif)",
    ),
    (
        "quest_export_force",
        ("--quest-export-force",),
        "bool",
        False,
        None,
        "store_true",
        "export: overwrite an existing report file",
    ),
    (
        "quest_mutants",
        ("--quest-mutants",),
        "string",
        "on",
        _choice(MUTANT_MODES, "mode"),
        "store",
        "gate step 4, the mutation check: on (default) or off",
    ),
    (
        "quest_verify",
        ("--quest-verify",),
        "string",
        "auto",
        _choice(VERIFY_MODES, "mode"),
        "store",
        "L2 verification: on, off or auto (auto: PYTEST_QUEST_VERIFY, else ini, else off)",
    ),
    (
        "quest_verifier_cmds",
        ("--quest-verifier-cmd",),
        "linelist",
        [],
        None,
        "append",
        "L2: a verifier command reading the prompt on stdin (repeatable; no shell)",
    ),
    (
        "quest_verify_questions",
        ("--quest-verify-questions",),
        "string",
        "3",
        _positive_int,
        "store",
        "L2: how many yes/no questions each verifier answers (default 3, at most 6)",
    ),
    (
        "quest_verify_threshold",
        ("--quest-verify-threshold",),
        "string",
        None,
        _positive_int,
        "store",
        "L2: verifiers that must raise a finding for it to count (default: a majority)",
    ),
    (
        "quest_verify_timeout",
        ("--quest-verify-timeout",),
        "string",
        "300",
        _positive_float,
        "store",
        "L2: seconds one verifier may take before it is stopped (REVIEW)",
    ),
    (
        "quest_verify_exclude",
        ("--quest-verify-exclude",),
        "linelist",
        [],
        None,
        "append",
        "L2: quest ids or path globs not to verify (repeatable)",
    ),
]


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("quest", "pytest-quest: per-function coverage quests")
    for name, flags, ini_type, default, cli_type, action, help_text in _OPTIONS:
        # No argparse `type=`: values are checked in `resolve()`, with the same
        # messages, so that a bad value still gets a JSON answer under
        # --quest-format json (argparse would exit before any plugin code runs).
        kwargs: dict[str, Any] = {"dest": name, "help": help_text, "action": action}
        # None means "not given": the ini value (or its default) applies.
        kwargs["default"] = None
        group.addoption(*flags, **kwargs)
        ini_default = default
        if ini_type == "paths":
            ini_default = []
        parser.addini(name, help_text, type=ini_type, default=ini_default)  # type: ignore[arg-type]
    group.addoption(
        "--quest-measure-out",
        dest="quest_measure_out",
        default=None,
        help="internal: the gate's measuring run writes its facts to this file",
    )
    group.addoption(
        "--quest-measure-only",
        dest="quest_measure_only",
        action="append",
        default=None,
        help="internal: the measuring run analyzes only these source files",
    )


def raw_value(config: pytest.Config, name: str) -> Any:
    """The option `name`: command line first, then the ini file, then the default."""
    value = config.getoption(name, default=None)
    if value is not None and value != []:
        return value
    return config.getini(name)


def _given_on_command_line(config: pytest.Config, name: str) -> bool:
    value = config.getoption(name, default=None)
    return value is not None and value != []


def _convert(name: str, value: Any, convert: Any, flag: str = "") -> Any:
    if convert is None or not isinstance(value, str):
        return value
    try:
        return convert(value)
    except argparse.ArgumentTypeError as exc:
        where = f"argument {flag}" if flag else f"ini option {name}"
        raise QuestUsageError(f"{where}: {exc}") from None


def _verify_mode(config: pytest.Config, given: str) -> str:
    """``on``/``off``: the command line, else PYTEST_QUEST_VERIFY, else the ini option, else off.

    ``auto`` (the default) defers to the next source, so CI can switch
    verification with the environment variable without editing the config.
    """
    cli = config.getoption("quest_verify", default=None)
    if cli in ("on", "off"):
        return str(cli)
    env = os.environ.get("PYTEST_QUEST_VERIFY", "").strip().lower()
    if env not in ("", "on", "off", "auto"):
        raise QuestUsageError(
            f"PYTEST_QUEST_VERIFY={env!r}: expected on, off or auto (or leave it unset)"
        )
    if env in ("on", "off"):
        return env
    ini = _convert("quest_verify", config.getini("quest_verify"), _choice(VERIFY_MODES, "mode"))
    return str(ini) if ini in ("on", "off") else "off"


def resolve(config: pytest.Config) -> QuestOptions:
    """Read every quest option into a :class:`QuestOptions`; bad values are usage errors."""
    values = {
        name: _convert(
            name,
            raw_value(config, name),
            cli_type,
            flags[0] if _given_on_command_line(config, name) else "",
        )
        for name, flags, _, _, cli_type, _, _ in _OPTIONS
    }
    rootdir = Path(str(config.rootpath))
    command = values["quest"]
    if values["quest_status"]:
        if command not in (None, "status"):
            raise QuestUsageError(f"--quest-status cannot be combined with --quest {command}")
        command = "status"
    if values["quest_reopen"] or values["quest_accept"]:
        if command not in (None, "status"):
            raise QuestUsageError("--quest-reopen/--quest-accept run on their own, without --quest")
        if values["quest_reopen"] and values["quest_accept"]:
            raise QuestUsageError("use one of --quest-reopen and --quest-accept at a time")
        command = "reopen" if values["quest_reopen"] else "accept"
    measure_out = config.getoption("quest_measure_out", default=None)
    if measure_out:
        command = "_measure"
    sources = [p if isinstance(p, Path) else Path(str(p)) for p in (values["quest_source"] or [])]
    sources = [p if p.is_absolute() else rootdir / p for p in sources]
    quest_file = Path(os.fspath(values["quest_file"]))
    if not quest_file.is_absolute():
        quest_file = rootdir / quest_file
    verify = _verify_mode(config, values["quest_verify"])
    return QuestOptions(
        command=command,
        sources=sources,
        quest_file=quest_file,
        max_tries=int(values["quest_max_tries"]),
        format=values["quest_format"],
        quest_id=values["quest_id"] or None,
        timeout=float(values["quest_timeout"]),
        lock_timeout=float(values["quest_lock_timeout"]),
        strict=bool(values["quest_strict"]),
        reopen=values["quest_reopen"] or None,
        accept=values["quest_accept"] or None,
        export_to=values["quest_export_to"] or None,
        export_force=bool(values["quest_export_force"]),
        mutants=values["quest_mutants"] == "on",
        verify=verify,
        measure_out=measure_out,
        verifier_cmds=[
            str(c).strip() for c in values["quest_verifier_cmds"] or [] if str(c).strip()
        ],
        verify_questions=int(values["quest_verify_questions"]),
        verify_threshold=values["quest_verify_threshold"] or None,
        verify_timeout=float(values["quest_verify_timeout"]),
        verify_exclude=[str(p) for p in values["quest_verify_exclude"] or []],
    )


__all__ = ["COMMANDS", "QuestOptions", "add_options", "raw_value", "resolve"]
