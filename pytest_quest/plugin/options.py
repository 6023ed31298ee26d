"""pytest's side of the quest options: registration, ini twins and `resolve()`.

A command-line value wins over the ini value, which wins over the default.
The ini name of an option is its flag without the dashes (``--quest-max-tries``:
``quest_max_tries``); person actions and internal options have no ini twin.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.app.options import (
    VERIFY_MODES,
    QuestOptions,
    check_shard_options,
    check_since_option,
    parse_choice,
    parse_count,
    parse_seconds,
)
from pytest_quest.core.errors import QuestError, QuestUsageError
from pytest_quest.core.policy import GatePolicy
from pytest_quest.core.policy import from_dict as policy_from_dict
from pytest_quest.engine.incremental import default_path
from pytest_quest.plugin.option_table import (
    _ALLOWED,
    _BY_NAME,
    _OPTIONS,
    DEPRECATED_INI,
    _Option,
    add_ini_names,
)

PERSON_COMMANDS = ("reopen", "accept", "exclude")
"""The person actions on one quest, each its own option (``--quest-reopen ID``...)."""


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
    add_ini_names(parser)
    # Internal: a gate child's channel to its judge (two descriptor numbers);
    # not for people, so not in --help.
    group.addoption("--quest-channel", dest="quest_channel", help=argparse.SUPPRESS)
    group.addoption(
        "--quest-measure-only", dest="quest_measure_only", action="append", help=argparse.SUPPRESS
    )


def measuring_child(config: pytest.Config) -> str | None:
    """The channel argument when this process is the gate's measuring child, else None."""
    from pytest_quest.plugin import child_channel

    argument = config.getoption("quest_channel", default=None)
    if not argument or not child_channel.opened():
        return None
    return str(argument) if child_channel.instructions().get("role") == "measure" else None


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
        old = _ini(config, deprecated)
        if _given(old):
            config.issue_config_time_warning(
                pytest.PytestDeprecationWarning(
                    f"the ini option {deprecated} is deprecated: rename it {name}"
                ),
                stacklevel=2,
            )
        return old
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


def _command(values: dict[str, Any]) -> str | None:
    """The command the options name (--quest, --quest-status, a person's action, --quest-policy),
    the combinations that make no sense refused."""
    command = values["quest"]
    if values["quest_status"]:
        if command not in (None, "status"):
            raise QuestUsageError(f"--quest-status cannot be combined with --quest {command}")
        command = "status"
    person = [name for name in PERSON_COMMANDS if values[f"quest_{name}"]]
    if person:
        if command not in (None, "status"):
            raise QuestUsageError(
                "--quest-reopen/--quest-accept/--quest-exclude run on their own, without --quest"
            )
        if len(person) > 1:
            raise QuestUsageError(
                "use one of --quest-reopen, --quest-accept and --quest-exclude at a time"
            )
        command = person[0]
    if values["quest_policy"]:
        if command is not None or person:
            raise QuestUsageError(
                "--quest-policy runs on its own, without --quest or another action"
            )
        command = "policy"
    checking = "check" if command == "combine" else command  # combine may run a check
    if values["quest_base"] or values["quest_base_file"]:
        if values["quest_base"] and values["quest_base_file"]:
            raise QuestUsageError("use one of --quest-base and --quest-base-file at a time")
        if checking != "check":
            raise QuestUsageError(
                "--quest-base and --quest-base-file are options of `pytest --quest check`"
            )
    if values["quest_dispute"] and command != "submit":
        raise QuestUsageError("--quest-dispute is an option of `pytest --quest submit`")
    check_since_option(checking, values["quest_since"], bool(values["quest_require_pass"]))
    check_shard_options(command, values["quest_shard_out"], shard_check_options(values))
    return command  # type: ignore[no-any-return]


def resolve(config: pytest.Config) -> QuestOptions:
    """Read every quest option into a :class:`QuestOptions`; bad values are usage errors."""
    values = {option.name: _checked(config, option) for option in _OPTIONS}
    rootdir = Path(str(config.rootpath))
    command = _command(values)
    measure_out = measuring_child(config)
    if measure_out:
        command = "_measure"
    given_sources = values["quest_source"] or recorded_sources(config, rootdir)
    sources = [p if isinstance(p, Path) else Path(str(p)) for p in given_sources]
    sources = [p if p.is_absolute() else rootdir / p for p in sources]
    quest_file = Path(os.fspath(values["quest_file"]))
    if not quest_file.is_absolute():
        quest_file = rootdir / quest_file
    verify = _verify_mode(config, values["quest_verify"])
    invocation = Path(str(config.invocation_params.dir))
    positional = config.getoption("file_or_dir", default=None) or []
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
        mutants=values["quest_mutants"] != "off",
        mutants_rule=values["quest_mutants"],
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
        require_pass=bool(values["quest_require_pass"]),
        exclude=values["quest_exclude"],
        reason=values["quest_reason"],
        dispute=values["quest_dispute"],
        base_ref=values["quest_base"],
        base_file=values["quest_base_file"],
        shard_out=invocation / values["quest_shard_out"] if values["quest_shard_out"] else None,
        shards=[invocation / str(arg) for arg in positional] if command == "combine" else [],
        full=bool(values["quest_full"]),
        run_data=_run_data(values["quest_run_data"], rootdir, quest_file),
    )


def _run_data(given: Any, rootdir: Path, quest_file: Path) -> Path:
    """The run record's path: as given (relative to the rootdir), else beside the ratchet file."""
    if not given:
        return default_path(quest_file)
    path = Path(os.fspath(given))
    return path if path.is_absolute() else rootdir / path


def shard_check_options(values: dict[str, Any]) -> list[str]:
    """The check options given that a shard's job does not take (the combine does)."""
    flags = {"quest_base": "--quest-base", "quest_base_file": "--quest-base-file"}
    flags.update(quest_since="--quest-since", quest_require_pass="--quest-require-pass")
    return [flag for name, flag in flags.items() if values[name]]


def recorded_sources(early_config: pytest.Config, rootdir: Path) -> list[str]:
    """The sources the ratchet file's gate policy remembers from its scan ([] when none)."""
    policy = _recorded_policy(early_config, rootdir)
    return list(policy.sources) if policy is not None else []


def recorded_subprocesses(early_config: pytest.Config, rootdir: Path) -> bool:
    """Whether the recorded gate policy measures the processes the tests start (on when none)."""
    policy = _recorded_policy(early_config, rootdir)
    return policy.subprocesses if policy is not None else True


def _recorded_policy(early_config: pytest.Config, rootdir: Path) -> GatePolicy | None:
    name = getattr(early_config.known_args_namespace, "quest_file", None)
    if not name:
        name = early_config.getini("quest_file") or "quest.json"
    path = Path(os.fspath(name))
    if not path.is_absolute():
        path = rootdir / path
    try:
        stat = path.stat()
    except OSError:
        return None  # no file yet
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _RECORDED:
        # Only the policy is read here (start-up runs this twice); the command
        # validates the whole file and reports a broken one.
        from pytest_quest.engine.store_help import read_regular

        try:
            _RECORDED[key] = policy_from_dict(header_fields(read_regular(path)).get("policy"))
        except (OSError, ValueError, AttributeError, QuestError):  # a FIFO is never read
            _RECORDED[key] = None
    return _RECORDED[key]


_RECORDED: dict[tuple[str, int, int], GatePolicy | None] = {}


def header_fields(raw: bytes) -> Any:
    """The ratchet file's top-level fields but its tests and quests, parsed (start-up needs one).

    Version 2 writes them first, one a line, then ``"tests": [``: only that
    head is parsed (50,000 quests are 59 MB).  A file laid out otherwise, or
    naming ``"policy"`` after its head, is parsed whole.
    """
    end = raw.find(b'\n"tests": [')
    if (
        raw.startswith(b"{\n")
        and end > 0
        and raw[end - 1 : end] == b","
        and raw.find(b'"policy"', end) < 0
    ):
        try:
            head = json.loads(raw[: end - 1] + b"}")
        except ValueError:
            head = None
        if isinstance(head, dict):
            return head
    return json.loads(raw)


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
