"""The ratchet file's JSON: quests and ratchets to and from dicts, validation, migration.

Version 2 is laid out one quest per line, sorted (``engine/layout.py``), so a
diff in review shows exactly which quests changed; version 1 is still read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pytest_quest.core import grammar
from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State, branch_fact, line_fact
from pytest_quest.core.policy import PolicyError
from pytest_quest.core.policy import from_dict as policy_from_dict
from pytest_quest.engine import codec_fast, codec_help, codec_reuse, layout, strict_json
from pytest_quest.engine.records import quest_record

SCHEMA_VERSION = 2


# -- serialization -------------------------------------------------------------


def quest_to_dict(quest: Quest) -> dict[str, Any]:
    data: dict[str, Any] = {
        "file": quest.file,
        "qualname": quest.qualname,
        "lines": [quest.first, quest.last],
        "fingerprint": quest.fingerprint,
        "state": quest.state.value,
        "tries": quest.tries,
        "statements": quest.statements,
        "branches": quest.branches,
        "missing_lines": list(quest.missing_lines),
        "missing_branches": [list(arc) for arc in quest.missing_branches],
        "excluded_lines": list(quest.excluded_lines),
        "covering_tests": list(quest.covering_tests),
        "facts": [fact.to_dict() for fact in quest.facts],
        "issued_at": quest.issued_at,
        "passed_at": quest.passed_at,
        "baseline": quest.baseline,
        "history": [event.to_dict() for event in quest.history],
    }
    extra = quest.extra_record()
    if extra:
        data["extra"] = extra
    return data


def ratchet_to_dict(ratchet: Ratchet) -> dict[str, Any]:
    data = {
        "schema": SCHEMA_VERSION,
        "tool": "pytest-quest",
        "active": ratchet.active,
        "scanned_at": ratchet.scanned_at,
        "coverage_config": ratchet.coverage_config,
        "test_files": dict(sorted(ratchet.test_files.items())),
        "excluded_functions": sorted(ratchet.excluded_functions),
        "removed": ratchet.removed,
        "quests": {qid: quest_to_dict(ratchet.quests[qid]) for qid in sorted(ratchet.quests)},
    }
    # Written once known: a file from before policies were recorded stays as it was.
    if ratchet.policy is not None:
        data["policy"] = ratchet.policy.stored()
    if ratchet.policy_history:
        data["policy_history"] = ratchet.policy_history
    return data


def dumps(ratchet: Ratchet) -> str:
    """The version-2 text of `ratchet` (``engine/layout.py``); raises ValueError on NaN."""
    return dump_bytes(ratchet).decode("utf-8")


def dump_bytes(ratchet: Ratchet) -> bytes:
    """`dumps` as bytes: the quests left as read (``codec_fast``) are the bytes read."""
    with codec_help.paused_gc():
        return _dumps(ratchet)


def _dumps(ratchet: Ratchet) -> bytes:
    full = ratchet_to_dict(replace(ratchet, quests={}))
    del full["quests"]
    header = {
        key: value
        for key, value in full.items()
        if key not in layout.TOP_DEFAULTS or value != layout.TOP_DEFAULTS[key]
    }
    reused = codec_reuse.render(ratchet, header, quest_record, _ENCODE)
    if reused is not None:
        return reused
    used = dict.fromkeys(name for q in ratchet.quests.values() for name in q.covering_tests)
    table = layout.table_order(ratchet.test_table, used)
    index = {name: position for position, name in enumerate(table)}
    quests = {qid: quest_record(quest, index) for qid, quest in ratchet.quests.items()}
    ratchet.test_table = table
    return layout.render(header, table, quests).encode("utf-8")


_ENCODE = json.JSONEncoder(sort_keys=True, allow_nan=False).encode


def dumps_v1(ratchet: Ratchet) -> str:
    """The version-1 text (indented, every field), as pytest-quest wrote it before version 2."""
    data = ratchet_to_dict(ratchet)
    data["schema"] = 1
    return json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"


# -- validation ----------------------------------------------------------------


_MISSING = object()


class _Validator:
    """Reads a parsed ratchet file, raising `RatchetFileError` naming the field at fault."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, problem: str, fix: str = "") -> RatchetFileError:
        return RatchetFileError(
            self.path,
            f"{where}: {problem}",
            fix or "restore it from version control, or delete it and run `pytest --quest scan`",
        )

    def get(self, obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
        # Fast path (10,000 quests are 200,000 calls): a value of exactly the
        # wanted type passes every check below (a bool is never exactly int).
        value = obj.get(key, _MISSING)
        if type(value) is kind:
            return value
        field = f"{where}.{key}" if where else key
        if key not in obj:
            raise self.fail(field, "missing field")
        value = obj[key]
        expected = f"expected {codec_help.kind_name(kind)}"
        # bool is an int subclass; never accept one where a number is meant.
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.fail(field, expected)
        if not isinstance(value, kind):
            raise self.fail(field, f"{expected}, found {type(value).__name__}")
        return value

    def int_list(self, obj: dict[str, Any], key: str, where: str) -> list[int]:
        values = self.get(obj, key, list, where)
        if all(type(value) is int for value in values):
            return list(values)
        for index, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.fail(f"{where}.{key}[{index}]", "expected an integer")
        return list(values)

    def str_list(self, obj: dict[str, Any], key: str, where: str) -> list[str]:
        values = self.get(obj, key, list, where)
        if all(type(value) is str for value in values):
            return list(values)
        for index, value in enumerate(values):
            if not isinstance(value, str):
                raise self.fail(f"{where}.{key}[{index}]", "expected a string")
        return list(values)

    def ids(self, obj: dict[str, Any], key: str) -> list[str]:
        values = self.str_list(obj, key, "")
        for index, value in enumerate(values):
            if grammar.id_problem(value):
                raise self.fail(f"{key}[{index}]", grammar.id_problem(value))
        return values

    def known_keys(self, obj: dict[str, Any], allowed: frozenset[str], where: str) -> None:
        # A field this version does not know would be silently dropped by the
        # next write: refuse it instead (a typo, or a file from a newer tool).
        if allowed.issuperset(obj):
            return
        unknown = sorted(set(obj) - allowed)
        raise self.fail(
            f"{where}.{unknown[0]}" if where else unknown[0],
            f"unknown field (known: {', '.join(sorted(allowed))})",
            "remove or rename it; if a newer pytest-quest wrote it, upgrade pytest-quest",
        )

    def optional_str(self, obj: dict[str, Any], key: str, where: str) -> str:
        if key not in obj:
            return ""
        return str(self.get(obj, key, str, where))

    def count(self, obj: dict[str, Any], key: str, where: str) -> int:
        value: int = self.get(obj, key, int, where)
        if value < 0:
            raise self.fail(f"{where}.{key}", "must not be negative")
        return value

    def state_and_lines(self, data: dict[str, Any], where: str) -> tuple[State, list[int]]:
        """A quest's state and its [first, last] lines, each checked."""
        state_text = self.get(data, "state", str, where)
        try:
            state = State(state_text)
        except ValueError:
            allowed = ", ".join(s.value for s in State)
            raise self.fail(f"{where}.state", f"unknown state {state_text!r} (allowed: {allowed})")
        lines = self.int_list(data, "lines", where)
        if len(lines) != 2 or lines[0] > lines[1] or lines[0] < 1:
            raise self.fail(f"{where}.lines", "expected [first, last] with 1 <= first <= last")
        return state, lines

    def quest_v2(self, qid: str, stored: Any, table: list[str]) -> Quest:
        """A version-2 record: defaults filled in, test indexes resolved, facts derived."""
        where = f"quests[{qid!r}]"
        if not isinstance(stored, dict):
            raise self.fail(where, "expected an object")
        record, fault = layout.expand_quest(stored, table)
        if fault:
            raise self.fail(f"{where}.{fault[0]}", fault[1])
        derive = "facts" not in record
        if derive:
            record["facts"] = []
        quest = self.quest(qid, record)
        if derive:
            quest.facts = [line_fact(quest.file, line) for line in quest.missing_lines]
            quest.facts += [branch_fact(quest.file, arc) for arc in quest.missing_branches]
        return quest

    def quest(self, qid: str, data: Any) -> Quest:
        where = f"quests[{qid!r}]"
        if not isinstance(data, dict):
            raise self.fail(where, "expected an object")
        self.known_keys(data, _QUEST_KEYS, where)
        state, lines = self.state_and_lines(data, where)
        branches_raw = self.get(data, "missing_branches", list, where)
        missing_branches: list[tuple[int, int]] = []
        for index, arc in enumerate(branches_raw):
            if (
                not isinstance(arc, list)
                or len(arc) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in arc)
            ):
                raise self.fail(f"{where}.missing_branches[{index}]", "expected a [from, to] pair")
            missing_branches.append((arc[0], arc[1]))
        facts = []
        for index, fact in enumerate(self.get(data, "facts", list, where)):
            fwhere = f"{where}.facts[{index}]"
            if not isinstance(fact, dict):
                raise self.fail(fwhere, "expected an object")
            self.known_keys(fact, _FACT_KEYS, fwhere)
            for key in ("check", "field", "expected", "actual"):
                self.get(fact, key, str, fwhere)
            self.optional_str(fact, "message", fwhere)
            facts.append(Fact.from_dict(fact))
        history = []
        for index, event in enumerate(self.get(data, "history", list, where)):
            ewhere = f"{where}.history[{index}]"
            if not isinstance(event, dict):
                raise self.fail(ewhere, "expected an object")
            self.known_keys(event, _EVENT_KEYS, ewhere)
            history.append(
                Event(
                    at=self.get(event, "at", str, ewhere),
                    action=self.get(event, "action", str, ewhere),
                    verdict=self.optional_str(event, "verdict", ewhere),
                    by=self.optional_str(event, "by", ewhere),
                    note=self.optional_str(event, "note", ewhere),
                    reason=self.optional_str(event, "reason", ewhere),
                    fingerprint=self.optional_str(event, "fingerprint", ewhere),
                )
            )
        tries = self.count(data, "tries", where)
        extra = data.get("extra", {})
        if not isinstance(extra, dict):
            raise self.fail(f"{where}.extra", f"expected an object, found {type(extra).__name__}")
        typed, rest = _split_extra(extra)
        quest = Quest(
            id=qid,
            file=self.get(data, "file", str, where),
            qualname=self.get(data, "qualname", str, where),
            first=lines[0],
            last=lines[1],
            fingerprint=self.get(data, "fingerprint", str, where),
            state=state,
            tries=tries,
            statements=self.count(data, "statements", where),
            branches=self.count(data, "branches", where),
            missing_lines=self.int_list(data, "missing_lines", where),
            missing_branches=missing_branches,
            excluded_lines=self.int_list(data, "excluded_lines", where),
            covering_tests=self.str_list(data, "covering_tests", where),
            facts=facts,
            issued_at=self.get(data, "issued_at", str, where),
            passed_at=self.get(data, "passed_at", str, where),
            baseline=self.get(data, "baseline", bool, where),
            history=history,
            extra=rest,
            **typed,
        )
        for name in ("file", "qualname"):
            problem = getattr(grammar, f"{name}_problem")(getattr(quest, name))
            if problem:
                raise self.fail(f"{where}.{name}", problem)
        if not _id_matches(qid, quest.file, quest.qualname):
            raise self.fail(
                where,
                f"id does not match file {quest.file!r} and qualname {quest.qualname!r} "
                f"(expected {quest.file}::{quest.qualname}, or with @2, @3... for a twin)",
            )
        if state is State.PASS:
            # A PASS must carry what the gate saw when it passed.
            if not quest.passed_at:
                raise self.fail(f"{where}.passed_at", "a PASS quest must record when it passed")
            if not quest.fingerprint:
                raise self.fail(f"{where}.fingerprint", "a PASS quest must record its fingerprint")
            if not quest.covering_tests:
                raise self.fail(
                    f"{where}.covering_tests", "a PASS quest must record the tests that cover it"
                )
            if quest.missing_lines or quest.missing_branches:
                raise self.fail(where, "a PASS quest cannot have missing lines or branches")
        return quest

    def ratchet(self, data: Any) -> Ratchet:
        if not isinstance(data, dict):
            raise self.fail("top level", "expected a JSON object")
        schema = self.get(data, "schema", int, "")
        if schema != SCHEMA_VERSION:
            if schema > SCHEMA_VERSION:
                raise self.fail(
                    "schema",
                    f"version {schema} is newer than this pytest-quest understands "
                    f"({SCHEMA_VERSION})",
                    "upgrade pytest-quest",
                )
            data = migrate(data, schema, self)
        self.known_keys(data, _RATCHET_KEYS, "")
        quests_raw = self.get(data, "quests", dict, "")
        data = {**layout.TOP_DEFAULTS, **data}
        active = data.get("active")
        if active is not None and not isinstance(active, str):
            raise self.fail("active", "expected a quest id or null")
        table = self.str_list(data, "tests", "")
        if len(set(table)) != len(table):
            seen: set[str] = set()
            for index, name in enumerate(table):
                if name in seen:
                    raise self.fail(f"tests[{index}]", f"{name!r} appears twice")
                seen.add(name)
        quests = {qid: self.quest_v2(qid, entry, table) for qid, entry in quests_raw.items()}
        if active is not None and active not in quests:
            raise self.fail("active", f"names {active!r}, which is not a quest")
        test_files = self.get(data, "test_files", dict, "")
        for name, digest in test_files.items():
            if not isinstance(digest, str) or grammar.file_problem(name):
                raise self.fail(
                    f"test_files[{name!r}]", grammar.file_problem(name) or "expected a string"
                )
        removed = self.get(data, "removed", list, "")
        for index, entry in enumerate(removed):
            if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
                raise self.fail(f"removed[{index}]", "expected an object of strings")
        policy = None
        if "policy" in data:
            try:
                policy = policy_from_dict(data["policy"])
            except PolicyError as exc:
                raise self.fail(*codec_help.policy_fault(str(exc))) from None
        history = data.get("policy_history", [])
        if not isinstance(history, list):
            raise self.fail("policy_history", "expected a list")
        for index, entry in enumerate(history):
            if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
                raise self.fail(f"policy_history[{index}]", "expected an object of strings")
        ratchet = Ratchet(
            policy=policy,
            policy_history=list(history),
            quests=quests,
            active=active,
            coverage_config=self.get(data, "coverage_config", dict, ""),
            test_files=dict(test_files),
            removed=list(removed),
            excluded_functions=self.ids(data, "excluded_functions"),
            scanned_at=self.get(data, "scanned_at", str, ""),
        )
        ratchet.test_table = table
        return ratchet


# The typed fields of `Quest` kept in its ``extra`` object (engine/codec_fast.py).
_EXTRA_TYPES = codec_fast.EXTRA_TYPES


def _split_extra(extra: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The typed fields found in a quest's ``extra`` object, and everything else."""
    typed: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in extra.items():
        # Exact types, as `json.loads` makes them: a boolean is no number.
        if type(value) in _EXTRA_TYPES.get(key, ()):
            typed[key] = value
        else:
            rest[key] = value
    return typed, rest


def _id_matches(qid: str, file: str, qualname: str) -> bool:
    """Whether `qid` is the id `make_quest_id` gives `file` and `qualname` (any ordinal)."""
    base = f"{file}::{qualname}"
    if qid == base:
        return True
    ordinal = qid[len(base) + 1 :]
    return (
        qid.startswith(base + "@")
        and ordinal.isdigit()
        and ordinal.isascii()
        and not ordinal.startswith("0")
        and int(ordinal) >= 2
    )


# The fields this version writes are the fields it accepts: derived from the
# serializer itself, so a field added there is accepted here too.
_RATCHET_KEYS = frozenset(ratchet_to_dict(Ratchet())) | {"policy", "policy_history", "tests"}
_QUEST_KEYS = frozenset(
    quest_to_dict(Quest(id="", file="", qualname="", first=1, last=1, fingerprint=""))
) | {"extra"}
_FACT_KEYS = frozenset(Fact("", "", "", "", message="m").to_dict())
_EVENT_KEYS = frozenset(
    Event(at="", action="", verdict="v", by="b", note="n", reason="r", fingerprint="f").to_dict()
)


def migrate(data: dict[str, Any], schema: int, validator: _Validator) -> dict[str, Any]:
    """Bring an older ratchet file's parsed JSON up to `SCHEMA_VERSION`, one version at a time.

    Each step of `MIGRATIONS` turns version ``n`` into ``n + 1``; a defect the
    step trips over is reported as a `RatchetFileError` naming the step.
    Migrating happens in memory: a read never rewrites the file, the next
    write (under the lock) stores the current version.
    """
    return codec_help.run_migrations(data, schema, validator.fail, SCHEMA_VERSION, MIGRATIONS)


#: Schema migrations: ``MIGRATIONS[n]`` turns the parsed JSON of a version
#: ``n`` file into version ``n + 1``.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: layout.migrate_1_to_2,
}


def loads(text: str | bytes, path: str = "quest.json") -> Ratchet:
    """Parse and validate the ratchet file's text; raise `RatchetFileError` on any defect.

    A file as pytest-quest writes it is read by `codec_fast.read`; anything
    else (or any defect) by the field-by-field reader, which names the field.
    """
    with codec_help.paused_gc():
        fast = codec_fast.read(text)
        return fast if fast is not None else _Validator(path).ratchet(parsed(text, path))


def parsed(text: str | bytes, path: str = "quest.json") -> Any:
    """The ratchet file's text as parsed JSON; `RatchetFileError` for text that is not JSON."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RatchetFileError(
                path,
                f"not UTF-8 text (byte 0x{text[exc.start]:02x} at offset {exc.start})",
                _RESTORE,
            ) from None
    if not text.strip():
        raise RatchetFileError(path, "the file is empty", _RESTORE)
    try:
        data = strict_json.parse(text)
    except strict_json.BadNumber as exc:
        raise RatchetFileError(path, f"{exc.where}: {exc.problem}", _RESTORE) from None
    except strict_json.DuplicateKey as exc:
        raise RatchetFileError(
            path,
            f"duplicate key {exc.key!r}{codec_help.second_occurrence(text, exc.key)}: a quest id or a "
            "field appears twice in one object",
            "keep one of the two entries, or restore it from version control if unsure",
        ) from None
    except (ValueError, RecursionError) as exc:
        where = ""
        if isinstance(exc, json.JSONDecodeError):
            where = f" at line {exc.lineno} column {exc.colno}"
        raise RatchetFileError(path, f"not valid JSON{where}", _RESTORE) from None
    return data


_RESTORE = "restore it from version control, or delete it and run `pytest --quest scan`"


__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "dump_bytes", "dumps", "dumps_v1", "loads", "migrate"]
__all__ += ["parsed"]
__all__ += ["quest_to_dict", "ratchet_to_dict"]
