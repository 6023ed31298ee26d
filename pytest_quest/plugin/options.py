"""pytest's side of the quest options: registration, ini twins and `resolve()`.

A command-line value wins over the ini value, which wins over the default.
The ini name of an option is its flag without the dashes (``--quest-max-tries``:
``quest_max_tries``); person actions and internal options have no ini twin.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from pytest_quest.app.options import (
    COMMANDS,
    COUNT_RANGE,
    FORMATS,
    MUTANT_MODES,
    SECONDS_RANGE,
    VERIFY_MODES,
    QuestOptions,
    parse_choice,
    parse_count,
    parse_seconds,
    parse_text,
)
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.policy import from_dict as policy_from_dict

# pytest 8.4 types "int" and "float" ini values; before, they stay strings
# (parse_count and parse_seconds read both).
_TYPED = tuple(int(part) for part in pytest.version_tuple[:2]) >= (8, 4)
_INT = "int" if _TYPED else "string"
_FLOAT = "float" if _TYPED else "string"

_ALLOWED = {"int": COUNT_RANGE, "float": SECONDS_RANGE}
"""What a typed ini option takes, for the message when pytest cannot read its value."""

DEPRECATED_INI = {"quest_verifier_cmds": "quest_verifier_cmd"}
"""Old ini names still read, each with the name that replaces it."""


class _Option(NamedTuple):
    name: str  # the dest, and the ini name when `ini_type` is set
    flags: tuple[str, ...]
    ini_type: str | None  # None: no ini twin
    default: Any
    parse: Callable[[Any], Any] | None  # one value (or one item of a repeatable option)
    action: str
    help: str
    metavar: str | None


def _option(
    flag: str,
    *,
    help: str,
    ini_type: str | None,
    default: Any = None,
    parse: Callable[[Any], Any] | None = None,
    action: str = "store",
    metavar: str | None = None,
) -> _Option:
    """One option; its dest and ini name follow from its flag by the one rule."""
    name = flag.lstrip("-").replace("-", "_")
    return _Option(name, (flag,), ini_type, default, parse, action, help, metavar)


def _choices(choices: tuple[str, ...]) -> str:
    return "{" + ",".join(choices) + "}"


_OPTIONS: list[_Option] = [
    _option(
        "--quest",
        ini_type="string",
        parse=partial(parse_choice, choices=COMMANDS, what="quest command"),
        metavar=_choices(COMMANDS),
        help="run a quest command",
    ),
    _option(
        "--quest-status",
        ini_type="bool",
        default=False,
        action="store_true",
        help="show the quests' progress (same as --quest status); runs no test",
    ),
    _option(
        "--quest-source",
        ini_type="paths",
        default=[],
        parse=partial(parse_text, what="path"),
        action="append",
        metavar="PATH",
        help="the code under test (repeatable); default: coverage.py's [run] source",
    ),
    _option(
        "--quest-file",
        ini_type="string",
        default="quest.json",
        parse=partial(parse_text, what="path"),
        metavar="PATH",
        help="the ratchet file (default: quest.json in pytest's rootdir)",
    ),
    _option(
        "--quest-max-tries",
        ini_type=_INT,
        default=3,
        parse=parse_count,
        metavar="N",
        help="failed submissions a quest allows before it is DONE (default 3, at most 1000)",
    ),
    _option(
        "--quest-format",
        ini_type="string",
        default="text",
        parse=partial(parse_choice, choices=FORMATS, what="format"),
        metavar=_choices(FORMATS),
        help="output format (json: one JSON object on stdout)",
    ),
    _option(
        "--quest-id",
        ini_type="string",
        parse=partial(parse_text, what="quest id"),
        metavar="ID",
        help="act on this quest instead of the active one (next, submit)",
    ),
    _option(
        "--quest-timeout",
        ini_type=_FLOAT,
        default=600.0,
        parse=parse_seconds,
        metavar="SECONDS",
        help="seconds one gate run may take before it is stopped (REVIEW; default 600)",
    ),
    _option(
        "--quest-lock-timeout",
        ini_type=_FLOAT,
        default=5.0,
        parse=parse_seconds,
        metavar="SECONDS",
        help="seconds to wait for the ratchet file's lock (default 5)",
    ),
    _option(
        "--quest-strict",
        ini_type="bool",
        default=False,
        action="store_true",
        help="check: functions missing from the ratchet fail the check",
    ),
    _option(
        "--quest-reopen",
        ini_type=None,
        parse=partial(parse_text, what="quest id"),
        metavar="ID",
        help="person action: put a REVIEW or DONE quest back to TODO",
    ),
    _option(
        "--quest-accept",
        ini_type=None,
        parse=partial(parse_text, what="quest id"),
        metavar="ID",
        help="person action: settle a REVIEW quest as PASS",
    ),
    _option(
        "--quest-policy",
        ini_type=None,
        default=[],
        parse=partial(parse_text, what="KEY=VALUE"),
        action="append",
        metavar="KEY=VALUE",
        help="person action: change the gate policy recorded in the ratchet file (repeatable)",
    ),
    _option(
        "--quest-since",
        ini_type=None,
        parse=partial(parse_text, what="date or git ref"),
        metavar="DATE_OR_REF",
        help="audit: only quests that passed since this ISO date or git ref's commit date",
    ),
    _option(
        "--quest-export-to",
        ini_type="string",
        parse=partial(parse_text, what="path"),
        metavar="PATH",
        help="export: the report file (.json, .csv, .md or .sarif)",
    ),
    _option(
        "--quest-export-force",
        ini_type="bool",
        default=False,
        action="store_true",
        help="export: overwrite an existing report file",
    ),
    _option(
        "--quest-mutants",
        ini_type="string",
        default="on",
        parse=partial(parse_choice, choices=MUTANT_MODES, what="mode"),
        metavar=_choices(MUTANT_MODES),
        help="gate step 4, the mutation check (default on)",
    ),
    _option(
        "--quest-verify",
        ini_type="string",
        default="auto",
        parse=partial(parse_choice, choices=VERIFY_MODES, what="mode"),
        metavar=_choices(VERIFY_MODES),
        help="L2 verification (auto, the default: PYTEST_QUEST_VERIFY, else ini, else off)",
    ),
    _option(
        "--quest-verifier-cmd",
        ini_type="linelist",
        default=[],
        action="append",
        metavar="CMD",
        help="L2: a verifier command reading the prompt on stdin (repeatable; no shell)",
    ),
    _option(
        "--quest-verify-questions",
        ini_type=_INT,
        default=3,
        parse=parse_count,
        metavar="N",
        help="L2: how many yes/no questions each verifier answers (default 3; above 6: 6)",
    ),
    _option(
        "--quest-verify-threshold",
        ini_type=_INT,
        parse=parse_count,
        metavar="N",
        help="L2: verifiers that must raise a finding for it to count (default: a majority)",
    ),
    _option(
        "--quest-verify-timeout",
        ini_type=_FLOAT,
        default=300.0,
        parse=parse_seconds,
        metavar="SECONDS",
        help="L2: seconds one verifier may take before it is stopped (REVIEW; default 300)",
    ),
    _option(
        "--quest-verify-exclude",
        ini_type="linelist",
        default=[],
        parse=partial(parse_text, what="pattern"),
        action="append",
        metavar="PATTERN",
        help="L2: quest ids or path globs not to verify (repeatable)",
    ),
]

_BY_NAME = {option.name: option for option in _OPTIONS}


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("quest", "pytest-quest: per-function coverage quests")
    for option in _OPTIONS:
        # No argparse `type=` or `choices=`: values are checked in `resolve()`,
        # so that a bad value still gets a JSON answer under --quest-format json
        # (argparse would exit before any plugin code runs). None means "not
        # given": the ini value (or its default) applies.
        kwargs: dict[str, Any] = {
            "dest": option.name,
            "help": option.help,
            "action": option.action,
            "default": None,
        }
        if option.metavar is not None:
            kwargs["metavar"] = option.metavar
        group.addoption(*option.flags, **kwargs)
        if option.ini_type is not None:
            ini_help = option.help
            if option.metavar is not None and option.metavar.startswith("{"):
                ini_help = f"one of {option.metavar}: {ini_help}"
            parser.addini(option.name, ini_help, type=option.ini_type, default=option.default)  # type: ignore[arg-type]
    for old, new in DEPRECATED_INI.items():
        parser.addini(old, f"deprecated name of {new}", type="linelist", default=[])
    # Internal: the gate's measuring child run; not for people, so not in --help.
    group.addoption("--quest-measure-out", dest="quest_measure_out", help=argparse.SUPPRESS)
    group.addoption(
        "--quest-measure-only", dest="quest_measure_only", action="append", help=argparse.SUPPRESS
    )


def _given(value: Any) -> bool:
    return value is not None and value != []


def _ini(config: pytest.Config, name: str) -> Any:
    """The ini value of `name`; a value pytest cannot read as its type is a usage error."""
    try:
        value = config.getini(name)
    except (ValueError, TypeError, pytest.UsageError) as exc:
        option = _BY_NAME.get(name)
        allowed = _ALLOWED.get(option.ini_type or "") if option is not None else None
        hint = f" ({allowed})" if allowed else ""
        raise QuestUsageError(f"ini option {name}: {exc}{hint}") from None
    deprecated = next((old for old, new in DEPRECATED_INI.items() if new == name), None)
    if deprecated is not None and not _given(value):
        return _ini(config, deprecated)
    return value


def raw_value(config: pytest.Config, name: str) -> Any:
    """The option `name`: command line first, then the ini file, then the default.

    An ini value of the wrong type is pytest's usage error (exit 4).
    """
    value = config.getoption(name, default=None)
    option = _BY_NAME.get(name)
    if _given(value) or (option is not None and option.ini_type is None):
        return value
    try:
        return _ini(config, name)
    except QuestUsageError as exc:
        raise pytest.UsageError(str(exc)) from None


def _checked(config: pytest.Config, option: _Option) -> Any:
    """The value of `option`, checked by its kind; a bad value names the option."""
    value = config.getoption(option.name, default=None)
    if _given(value):
        where = f"argument {option.flags[0]}"
    elif option.ini_type is None:
        return None
    else:
        where = f"ini option {option.name}"
        value = _ini(config, option.name)
    if option.parse is None or value is None:
        return value
    try:
        if isinstance(value, list):
            return [option.parse(item) for item in value]
        return option.parse(value)
    except ValueError as exc:
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
    try:
        ini = parse_choice(config.getini("quest_verify"), VERIFY_MODES, "mode")
    except ValueError as exc:
        raise QuestUsageError(f"ini option quest_verify: {exc}") from None
    return ini if ini in ("on", "off") else "off"


def resolve(config: pytest.Config) -> QuestOptions:
    """Read every quest option into a :class:`QuestOptions`; bad values are usage errors."""
    values = {option.name: _checked(config, option) for option in _OPTIONS}
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
    if values["quest_policy"]:
        if command is not None or values["quest_reopen"] or values["quest_accept"]:
            raise QuestUsageError(
                "--quest-policy runs on its own, without --quest or another action"
            )
        command = "policy"
    measure_out = config.getoption("quest_measure_out", default=None)
    if measure_out:
        command = "_measure"
    given_sources = values["quest_source"] or recorded_sources(config, rootdir)
    sources = [p if isinstance(p, Path) else Path(str(p)) for p in given_sources]
    sources = [p if p.is_absolute() else rootdir / p for p in sources]
    quest_file = Path(os.fspath(values["quest_file"]))
    if not quest_file.is_absolute():
        quest_file = rootdir / quest_file
    verify = _verify_mode(config, values["quest_verify"])
    return QuestOptions(
        command=command,
        sources=sources,
        quest_file=quest_file,
        max_tries=parse_count(values["quest_max_tries"]),
        format=values["quest_format"],
        quest_id=values["quest_id"],
        timeout=parse_seconds(values["quest_timeout"]),
        lock_timeout=parse_seconds(values["quest_lock_timeout"]),
        strict=bool(values["quest_strict"]),
        reopen=values["quest_reopen"],
        accept=values["quest_accept"],
        export_to=values["quest_export_to"],
        export_force=bool(values["quest_export_force"]),
        mutants=values["quest_mutants"] == "on",
        verify=verify,
        measure_out=measure_out,
        verifier_cmds=[
            str(c).strip() for c in values["quest_verifier_cmd"] or [] if str(c).strip()
        ],
        verify_questions=parse_count(values["quest_verify_questions"]),
        verify_threshold=values["quest_verify_threshold"],
        verify_timeout=parse_seconds(values["quest_verify_timeout"]),
        verify_exclude=[str(p) for p in values["quest_verify_exclude"] or []],
        given=given_options(config),
        policy_changes=[str(c) for c in values["quest_policy"] or []],
        since=values["quest_since"],
    )


def recorded_sources(early_config: pytest.Config, rootdir: Path) -> list[str]:
    """The sources the ratchet file's gate policy remembers from its scan ([] when none)."""
    name = getattr(early_config.known_args_namespace, "quest_file", None)
    if not name:
        name = early_config.getini("quest_file") or "quest.json"
    path = Path(os.fspath(name))
    if not path.is_absolute():
        path = rootdir / path
    try:
        stat = path.stat()
    except OSError:
        return []  # no file yet
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _RECORDED:
        # Only the policy is read here (start-up runs this twice); the command
        # validates the whole file and reports a broken one.
        try:
            policy = policy_from_dict(json.loads(path.read_bytes()).get("policy"))
            _RECORDED[key] = list(policy.sources)
        except (OSError, ValueError, AttributeError):
            _RECORDED[key] = []
    return list(_RECORDED[key])


_RECORDED: dict[tuple[str, int, int], list[str]] = {}


def given_options(config: pytest.Config) -> frozenset[str]:
    """The options set on the command line or in the ini file (``-o`` too): a default is no request."""
    given = set()
    for option in _OPTIONS:
        if _given(config.getoption(option.name, default=None)):
            given.add(option.name)
        elif option.ini_type is not None:
            try:
                value = config.getini(option.name)
                if _given(value) and _normal(option, value) != _normal(option, option.default):
                    given.add(option.name)
            except (ValueError, TypeError, pytest.UsageError):
                given.add(option.name)  # a bad value is reported by `resolve`
    if os.environ.get("PYTEST_QUEST_VERIFY", "").strip().lower() in ("on", "off"):
        given.add("quest_verify")
    return frozenset(given)


def _normal(option: _Option, value: Any) -> Any:
    """`value` as `option` reads it, so an ini value equal to the default is no request."""
    if option.parse is None or value is None or isinstance(value, list):
        return value
    try:
        return option.parse(value)
    except ValueError:
        return value


__all__ = ["COMMANDS", "QuestOptions", "add_options", "raw_value", "resolve"]
