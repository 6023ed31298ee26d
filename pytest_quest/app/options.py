"""The quest options as plain values, and the one check of each option value by its kind."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.policy import GatePolicy

COMMANDS = ("scan", "next", "submit", "status", "check", "audit", "export", "combine")
FORMATS = ("text", "json")
VERIFY_MODES = ("on", "off", "auto")
MUTANT_MODES = ("on", "strict", "off")
SINCE_COMMANDS = ("next", "status", "check", "export")
"""The commands ``--quest-since REF`` limits to the functions changed since the ref."""

MAX_COUNT = 1000
"""The largest count an option takes (tries, questions, a threshold)."""

MAX_SECONDS = 7 * 24 * 3600.0
"""The longest time an option takes: one week."""

COUNT_RANGE = f"allowed: a whole number from 1 to {MAX_COUNT}"
SECONDS_RANGE = f"allowed: more than 0 and at most {MAX_SECONDS:g} seconds (one week)"


@dataclass
class QuestOptions:
    command: str | None
    sources: list[Path]
    quest_file: Path
    max_tries: int
    format: str
    quest_id: str | None
    timeout: float
    lock_timeout: float
    strict: bool
    reopen: str | None
    accept: str | None
    export_to: str | None
    export_force: bool
    mutants: bool
    verify: str
    measure_out: str | None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Gate step 4's rule when `mutants` (core/policy.py `MUTANT_RULES`): "on" or "strict".
    mutants_rule: str = "on"
    verifier_cmds: list[str] = field(default_factory=list)
    verify_questions: int = 3
    verify_threshold: int | None = None
    verify_timeout: float = 300.0
    verify_exclude: list[str] = field(default_factory=list)
    #: The option names set on the command line or in the ini file (not defaults);
    #: None (a caller building options itself): every value is asked for.
    given: frozenset[str] | None = None
    #: ``--quest-policy KEY=VALUE`` (the person action changing the gate policy).
    policy_changes: list[str] = field(default_factory=list)
    #: ``--quest-since DATE_OR_REF`` (audit: only quests that passed since then;
    #: next, status, check, export: only functions changed since the git ref).
    since: str | None = None
    #: ``--quest-require-pass`` (check: every function changed since the ref must be PASS).
    require_pass: bool = False
    #: The gate policy this run judges under (set by app/policy.py for submit).
    policy: GatePolicy | None = None
    # Person actions beside reopen and accept: exclude a quest; the reason of any.
    exclude: str | None = None
    reason: str | None = None
    # submit: the surviving mutants disputed as equivalent (ids, comma separated).
    dispute: str | None = None
    # check: the base ratchet to re-judge new PASS quests against (a git ref, or a file).
    base_ref: str | None = None
    base_file: str | None = None
    # scan, check: write this job's shard here instead of the ratchet (app/shard.py).
    shard_out: Path | None = None
    # scan, check: run every test (no incremental selection), and where the run record is.
    full: bool = False
    run_data: Path | None = None
    # combine: the shard folders (its positional arguments).
    shards: list[Path] = field(default_factory=list)

    @property
    def json(self) -> bool:
        return self.format == "json"


def _shown(value: object) -> str:
    """A value as a message quotes it: text in quotes, escaped, cut at 40 characters."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_count(value: object, *, high: int = MAX_COUNT) -> int:
    """A whole number from 1 to `high`, from text or an int; ValueError names the range."""
    allowed = f"allowed: a whole number from 1 to {high}"
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:  # not a number, or too many digits to convert
            pass
    if number is None:
        raise ValueError(f"{_shown(value)} is not a whole number ({allowed})")
    if number < 1:
        raise ValueError(f"{_shown(number)} must be 1 or more ({allowed})")
    if number > high:
        raise ValueError(f"{_shown(number)} is more than {high} ({allowed})")
    return number


def parse_seconds(value: object) -> float:
    """A finite time in seconds, more than 0 and at most a week; ValueError names the range."""
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an int too large for a float
            number = math.inf
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            pass
    if number is None:
        raise ValueError(f"{_shown(value)} is not a number of seconds ({SECONDS_RANGE})")
    if not math.isfinite(number):
        raise ValueError(f"{_shown(value)} is not a finite number of seconds ({SECONDS_RANGE})")
    if number <= 0:
        raise ValueError(f"{number:g} must be more than 0 seconds ({SECONDS_RANGE})")
    if number > MAX_SECONDS:
        raise ValueError(f"{number:g} seconds is more than one week ({SECONDS_RANGE})")
    return number


def parse_choice(value: object, choices: tuple[str, ...], what: str) -> str:
    """One of `choices`; a near miss is answered with "did you mean"."""
    text = str(value)
    if text in choices:
        return text
    message = f"unknown {what} {_shown(text)} (choose from {', '.join(choices)})"
    close = difflib.get_close_matches(text, choices, n=1)
    if close:
        message += f"; did you mean {close[0]}?"
    raise ValueError(message)


def suggest_quest_ids(given: str, ids: Iterable[str]) -> str:
    """``; did you mean ID?`` for an unknown quest id (up to three ids), or "" when none is close.

    The function's name is compared within its file (a whole-id comparison
    would find every function of a long path close); a name alone, or a file
    that is not there, is compared with every function's name, then every id.
    """
    if not given.strip():
        return ""
    known = list(ids)
    file, sep, name = given.rpartition("::")
    names: dict[str, list[str]] = {}
    for qid in known:
        _, _, qname = qid.rpartition("::")
        names.setdefault(qname, []).append(qid)
    in_file = {
        qname: [q for q in found if q.startswith(file + "::")] for qname, found in names.items()
    }
    in_file = {qname: found for qname, found in in_file.items() if found}
    found: list[str] = []
    for pool in ([in_file] if sep and in_file else []) + [names]:
        close = difflib.get_close_matches(name, list(pool), n=3, cutoff=0.6)
        found = [qid for qname in close for qid in pool[qname]]
        if found:
            break
    if not found and not (sep and in_file):
        found = difflib.get_close_matches(given, known, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(found[:3])}?" if found else ""


def parse_text(value: object, what: str) -> str:
    """A non-empty id, path or pattern with no NUL character."""
    text = str(value)
    if not text.strip():
        raise ValueError(f"expected a {what}, got an empty value")
    if "\0" in text:
        raise ValueError(f"{_shown(text)}: a {what} cannot hold a NUL character")
    return text


_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})")


def parse_quest_id(value: object) -> str:
    """A quest id; one copied from a console that shows what its encoding lacks as a
    backslash escape (``gr\\xfc\\xdf``) is read back as the id it shows: an id holds
    no backslash of its own (core/grammar.py), so an escape there is never literal."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1)[1:], 16)), parse_text(value, "quest id"))


def check_since_option(command: str | None, since: str | None, require_pass: bool) -> None:
    """Usage errors for ``--quest-since``/``--quest-require-pass`` on a command they do not fit."""
    if require_pass and command != "check":
        raise QuestUsageError("--quest-require-pass is an option of `pytest --quest check`")
    if since and command not in (*SINCE_COMMANDS, "audit"):
        raise QuestUsageError(
            "--quest-since is an option of next, status, check, export (a git ref) and audit "
            "(a date or a git ref)"
        )


def check_shard_options(command: str | None, shard_out: object, check_only: list[str]) -> None:
    """Usage errors for ``--quest-shard-out`` on a command it does not fit (docs/ci.md).

    `check_only` names the check's own options given (``--quest-base``...):
    with a shard they belong to the combine, which runs the check.
    """
    if not shard_out:
        return
    if command not in ("scan", "check"):
        raise QuestUsageError(
            "--quest-shard-out is an option of `pytest --quest scan` and `pytest --quest check`"
        )
    if check_only:
        raise QuestUsageError(
            f"{check_only[0]} belongs to `pytest --quest combine`, which runs the check on "
            "the shards; a job with --quest-shard-out only measures its part of the suite"
        )
