"""The quest options' table: each option's flags, ini type, default, parser and help."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import pytest

from pytest_quest.app.options import (
    COMMANDS,
    COUNT_RANGE,
    FORMATS,
    MUTANT_MODES,
    SECONDS_RANGE,
    VERIFY_MODES,
    parse_choice,
    parse_count,
    parse_quest_id,
    parse_seconds,
    parse_text,
)

# pytest 8.4 types "int" and "float" ini values; older versions keep them strings
# (parse_count and parse_seconds read both).
_TYPED = tuple(int(part) for part in pytest.version_tuple[:2]) >= (8, 4)
_INT = "int" if _TYPED else "string"
_FLOAT = "float" if _TYPED else "string"

_LIST = 'allowed: a list of strings, as in quest_source = ["src/shop"]'
_ALLOWED = {
    "int": COUNT_RANGE,
    "float": SECONDS_RANGE,
    # pytest's native [tool.pytest] table takes a list (never a string) for these.
    "paths": _LIST,
    "linelist": _LIST,
}
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
        parse=parse_quest_id,
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
        default=30.0,
        parse=parse_seconds,
        metavar="SECONDS",
        help="seconds to wait for the ratchet file's lock (default 30)",
    ),
    _option(
        "--quest-strict",
        ini_type="bool",
        default=False,
        action="store_true",
        help="check: functions missing from the ratchet fail the check",
    ),
    _option(
        "--quest-base",
        ini_type=None,
        parse=partial(parse_text, what="git ref"),
        metavar="REF",
        help="check: re-judge every PASS new since the ratchet file at this git ref",
    ),
    _option(
        "--quest-base-file",
        ini_type=None,
        parse=partial(parse_text, what="path"),
        metavar="PATH",
        help="check: re-judge every PASS new since this copy of the ratchet file",
    ),
    _option(
        "--quest-shard-out",
        ini_type=None,
        parse=partial(parse_text, what="path"),
        metavar="DIR",
        help="scan, check: write this CI job's measured part of the suite to DIR (a shard "
        "for `--quest combine DIR...`) instead of the ratchet file",
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
        help=(
            "next, status, check, export: only functions changed since this git ref; "
            "audit: only quests that passed since this ISO date or git ref's commit date"
        ),
    ),
    _option(
        "--quest-require-pass",
        ini_type=None,
        default=False,
        action="store_true",
        help="check: fail unless every function changed since --quest-since is PASS",
    ),
    _option(
        "--quest-exclude",
        ini_type=None,
        parse=partial(parse_text, what="quest id"),
        metavar="ID",
        help="person action: take a quest out of the work (dead or untestable code)",
    ),
    _option(
        "--quest-reason",
        ini_type=None,
        parse=partial(parse_text, what="reason"),
        metavar="TEXT",
        help="person actions and --quest-dispute: why (required; recorded with who and when)",
    ),
    _option(
        "--quest-dispute",
        ini_type=None,
        parse=partial(parse_text, what="mutant id or line"),
        metavar="MUTANT_ID|LINE",
        help="submit: dispute a surviving mutant as equivalent, or a line (N, path:N) or "
        "branch (N->M) as unreachable (with --quest-reason); never PASS: REVIEW if no "
        "test of the suite kills the mutant (nor sees it return otherwise) or reaches "
        "the line, else refused (a try)",
    ),
    _option(
        "--quest-export-to",
        ini_type="string",
        parse=partial(parse_text, what="path"),
        metavar="PATH",
        help="export: the report file (.json, .csv, .md, .sarif or .html)",
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
        help=(
            "gate step 4, the mutation check (default on: a surviving mutant fails "
            "only with a witness call; strict: every survivor fails)"
        ),
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
    _option(
        "--quest-full",
        ini_type="bool",
        default=False,
        action="store_true",
        help="scan, check: run every test, not only those a change since the last run can affect",
    ),
    _option(
        "--quest-run-data",
        ini_type="string",
        parse=partial(parse_text, what="path"),
        metavar="PATH",
        help="scan, check: the record of the last run (default: .quest/quest.json.run.gz beside the ratchet file)",
    ),
]

_BY_NAME = {option.name: option for option in _OPTIONS}


def add_ini_names(parser: pytest.Parser) -> None:
    """Register every quest ini option (and each old name still read) with `parser`."""
    for option in _OPTIONS:
        if option.ini_type is not None:
            ini_help = option.help
            if option.metavar is not None and option.metavar.startswith("{"):
                ini_help = f"one of {option.metavar}: {ini_help}"
            parser.addini(option.name, ini_help, type=option.ini_type, default=option.default)  # type: ignore[arg-type]
    for old, new in DEPRECATED_INI.items():
        parser.addini(old, f"deprecated name of {new}", type="linelist", default=[])
