"""The ratchet file (quest.json): its schema as msgspec Structs, its one reader, its writer.

Every command reads the file through the Structs below, and every defect is
reported by one error path naming the field (``quests['ID'].tries: must not
be negative``).

`loads`: a file as the writer lays it out is decoded by msgspec straight
into the Structs; a command that writes also proves it is in canonical form
(which refuses a key written twice and lets `render` reuse untouched
quests' bytes), a showing command only counts its lines.  Any other file
goes through the strict parser, `migrate`, and the same Structs.  The rules
no type says are checked once, on the Structs.  Why so: docs/performance.md,
"Decoding" and "Reading only what a command needs".

Adding a field to a quest: give it a default in `QuestS`, a field in
`core.model.Quest`, copy it in `_quests` (or keep it in ``extra``, typed by
`EXTRA_TYPES`, which needs no change here), and write it in
``engine/records.py`` (left out at its default) and `quest_to_dict`.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
import weakref
from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, Raw, Struct, UnsetType

from pytest_quest.core import grammar
from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State, branch_fact, line_fact
from pytest_quest.core.policy import PolicyError
from pytest_quest.core.policy import from_dict as policy_from_dict
from pytest_quest.engine import layout
from pytest_quest.engine.records import quest_record
from pytest_quest.engine.store_help import paused_gc

SCHEMA_VERSION = 2

_BIG = 10**grammar.MAX_DIGITS  # an integer of more than MAX_DIGITS digits is refused
Count = Annotated[int, Meta(ge=0, lt=_BIG)]
Int = Annotated[int, Meta(gt=-_BIG, lt=_BIG)]


# -- the schema ---------------------------------------------------------------------


class FactS(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    check: str
    field: str
    expected: str
    actual: str
    message: str = ""


class EventS(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    at: str
    action: str
    verdict: str = ""
    by: str = ""
    note: str = ""
    reason: str = ""
    fingerprint: str = ""


class QuestS(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """A quest as version 2 stores it (``engine/records.py``): defaults left out."""

    file: str
    qualname: str
    lines: tuple[Int, Int]
    fingerprint: str
    state: State = State.TODO
    tries: Count = 0
    statements: Count = 0
    branches: Count = 0
    missing_lines: list[Int] = []
    missing_branches: list[tuple[Int, Int]] = []
    excluded_lines: list[Int] = []
    covering_tests: list[Count] = []  # indexes into the file's `tests`
    facts: list[FactS] | UnsetType = UNSET  # left out: derived from the missing lines and branches
    issued_at: str = ""
    passed_at: str = ""
    baseline: bool = False
    history: list[EventS] = []
    extra: dict[str, Any] = {}


class HeadS(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """The file's fields; `tests` is decoded on its own (`_Table`), `quests` always written."""

    schema: int
    tool: str | UnsetType = UNSET
    active: str | None = None
    scanned_at: str = ""
    coverage_config: dict[str, Any] = {}
    test_files: dict[str, str] = {}
    test_paths: list[str] = []
    excluded_functions: list[str] = []
    removed: list[dict[str, str]] = []
    policy: dict[str, Any] | UnsetType = UNSET
    policy_history: list[dict[str, str]] = []
    tests: Raw | UnsetType = UNSET
    quests: dict[str, QuestS] | UnsetType = UNSET


class _RawS(Struct):
    """The file with each quest's text, and the tests table's, as found (for the writer)."""

    tests: Raw
    quests: dict[str, Raw]


_DECODE = msgspec.json.Decoder(HeadS)
_DECODE_RAW = msgspec.json.Decoder(_RawS)
_TABLE = msgspec.json.Decoder(list[str])
_ENCODE = msgspec.json.Encoder(order="sorted")

# The typed fields of `Quest` kept in its ``extra`` object, with the JSON types each
# takes.  A value of another type (a hand edit) stays in `Quest.extra` as found.
EXTRA_TYPES: dict[str, tuple[type, ...]] = {
    "issued_seal": (str,),
    "last_run_seconds": (int, float),
    "mutation_seconds": (int, float),
    "verification": (dict,),
    "passed_policy": (str,),
    "config_digest": (str,),
    "partial_lines": (list,),
    "unwitnessed": (list,),
    "sandbox": (str,),
}
_TYPED_MUTABLE = tuple(key for key, kinds in EXTRA_TYPES.items() if set(kinds) & {dict, list})
# Dotted Python identifiers in ASCII; anything else is judged by `grammar.qualname_problem`.
_QUALNAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", re.ASCII).fullmatch
RESTORE = "restore it from version control, or delete it and run `pytest --quest scan`"


# -- writing ------------------------------------------------------------------------


def quest_to_dict(quest: Quest) -> dict[str, Any]:
    """Every field of `quest` (version 1's record, what `guard` and `dumps_v1` show)."""
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
        "test_paths": list(ratchet.test_paths),
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
    """`dumps` as bytes: the quests left as read are written as the bytes read."""
    with paused_gc():
        full = ratchet_to_dict(replace(ratchet, quests={}))
        del full["quests"]
        header = {
            key: value
            for key, value in full.items()
            if key not in layout.TOP_DEFAULTS or value != layout.TOP_DEFAULTS[key]
        }
        reused = render(ratchet, header, quest_record, _ENCODE_STD)
        if reused is not None:
            return reused
        used = dict.fromkeys(name for q in ratchet.quests.values() for name in q.covering_tests)
        table = layout.table_order(ratchet.test_table, used)
        index = {name: position for position, name in enumerate(table)}
        quests = {qid: quest_record(quest, index) for qid, quest in ratchet.quests.items()}
        ratchet.test_table = table
        return layout.render(header, table, quests).encode("utf-8")


_ENCODE_STD = json.JSONEncoder(sort_keys=True, allow_nan=False).encode


def _kept_table(
    origin: Origin, kept: dict[str, QuestS], changed: dict[str, Quest]
) -> tuple[list[str], dict[str, int]] | None:
    """The tests table as read with the changed quests' new names appended, and each
    name's index; None when more than a quarter of it would be unused (`layout.table_order`,
    counted on the indexes): the table is then rebuilt sorted."""
    names = origin.names
    if len(kept) == len(origin.pristine):
        used = set(origin.used())
    else:
        used = set().union(*(s.covering_tests for s in kept.values()))
    position = origin.positions() if changed else {}
    new_names: dict[str, None] = {}
    for quest in changed.values():
        for name in quest.covering_tests:
            at = position.get(name)
            if at is None:
                new_names[name] = None
            else:
                used.add(at)
    if names and len(names) - len(used) > layout.UNUSED_SHARE * len(names):
        return None
    table = names + sorted(new_names)
    index = position
    if new_names:
        index = {**position, **{name: len(names) + n for n, name in enumerate(sorted(new_names))}}
    return table, index


def render(ratchet: Ratchet, header: dict[str, Any], record: Any, encode: Any) -> bytes | None:
    """The version-2 bytes of `ratchet`, the quests left as read written as the bytes read.

    A quest whose fields equal those read (its `Origin`) keeps its bytes; a
    verdict rewrites one line.  `record(quest, index)` and `encode` make a
    changed quest's line as ``layout.render`` does.  None when `ratchet` was
    not read for writing from a file in the writer's form, or the tests table
    is renumbered: the caller renders everything.
    """
    origin: Origin | None = vars(ratchet).get("_origin")
    if origin is None:
        return None
    names = origin.names
    if ratchet.test_table != names:
        return None
    pristine = origin.pristine
    # A quest whose fields equal those read (its Struct and the table its lists wait in
    # included) is encoded by the bytes read, whatever object it is.
    changed: dict[str, Quest] = {
        qid: quest
        for qid, quest in ratchet.quests.items()
        if (found := pristine.get(qid)) is None or quest.__dict__ != found
    }
    encoded = [b"{\n"] + [
        f"{encode(key)}: {encode(header[key])},\n".encode() for key in sorted(header)
    ]
    encoded.append(b'"tests": ')
    if not changed and len(ratchet.quests) == len(pristine):
        # Nothing changed: the bytes read.  (Their table is kept: the writer never
        # leaves more than a quarter of it unused, `layout.table_order`.)
        if origin.data.startswith(b"".join(encoded)):
            return origin.data
    kept: dict[str, QuestS] = {
        qid: pristine[qid]["_s"] for qid in ratchet.quests if qid not in changed
    }
    laid = _kept_table(origin, kept, changed)
    if laid is None:
        return None  # rebuilt sorted: every quest's indexes change
    table, index = laid
    raws = origin.raw()
    rows = [
        _ENCODE.encode(qid) + b": " + raws[qid]
        if qid in kept
        else f"{encode(qid)}: {encode(record(changed[qid], index))}".encode()
        for qid in sorted(ratchet.quests)
    ]
    # Bytes are reused as found only when laid out as this writer lays them out (one
    # quest a line); a hand-indented file, read by its content, is written afresh.
    if any(b"\n" in row for row in rows):
        return None
    added = "".join(f",\n{encode(name)}" for name in table[len(names) :])
    if names and _one_a_line(origin.tests_raw, names):  # appended names: after the old ones
        parts = [*encoded, origin.tests_raw[:-2], added.encode(), b'\n],\n"quests": {']
    else:
        listed = "".join(f"\n{encode(name)}," for name in table)[:-1] + "\n" if table else ""
        parts = [*encoded, f'[{listed}],\n"quests": {{'.encode()]
    if rows:
        parts += [b"\n", b",\n".join(rows), b"\n"]
    parts.append(b"}\n}\n")
    ratchet.test_table = table
    return b"".join(parts)


def _one_a_line(raw: bytes, names: list[str]) -> bool:
    """Whether `raw`, the tests table as read, is laid out one name a line and nothing else.

    Its content is the table's (proven on reading); its whitespace is then only
    that layout when it is as long as the compact encoding plus one newline
    after ``[`` and each comma and before ``]``, all of them there.
    """
    if not names:
        return raw == b"[]"
    return (
        len(raw) == len(_ENCODE.encode(names)) + len(names) + 1
        and raw.count(b",\n") == len(names) - 1
        and raw.startswith(b"[\n")
        and raw.endswith(b"\n]")
    )


def dumps_v1(ratchet: Ratchet) -> str:
    """The version-1 text (indented, every field), as pytest-quest wrote it before version 2."""
    data = ratchet_to_dict(ratchet)
    data["schema"] = 1
    return json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"


# -- reading ------------------------------------------------------------------------


class _Fail:
    """Makes the `RatchetFileError` naming a field of the file at `path`."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, where: str, problem: str, fix: str = RESTORE) -> RatchetFileError:
        return RatchetFileError(self.path, f"{where}: {problem}", fix)


class _Irregular(Exception):
    """The file is not as the writer writes it: read it by the strict parser instead."""


def loads(text: str | bytes, path: str = "quest.json", *, lazy: bool = False) -> Ratchet:
    """The ratchet in `text`; `RatchetFileError` naming the field at fault on any defect.

    `lazy`: for a command that only shows the file (no proof of the canonical
    form, no copy kept for the writer; a defect in the tests table is named
    when a quest's tests are first used).
    """
    with paused_gc():
        found = _fast(text, path, lazy, None)
        return found if found is not None else _checked(text, _Fail(path))


def view(text: bytes, path: str, table: memoryview | None = None) -> Ratchet | None:
    """`loads(text, lazy=True)` for a file as the writer lays it out; None for any other.

    `table`: the tests table's text when `text` holds none of its own
    (``view_cache.one_file``), decoded only when a quest's tests are used.
    """
    with paused_gc():
        return _fast(text, path, True, table)


# The last file read for writing, while a ratchet read from it lives: the same bytes read
# again (a locked update after a load) are not decoded and checked again.
_LAST: list[weakref.ref[Origin]] = []


def _fast(text: str | bytes, path: str, lazy: bool, table: memoryview | None) -> Ratchet | None:
    """The ratchet of a file as the writer lays it out (None: any other file, or a defect
    the strict parser names better); the rules no type says raise, naming the field."""
    last = _LAST[0]() if _LAST and not lazy else None
    if last is not None and (text is last.data or text == last.data):
        return _ratchet(last.doc, _copies(last), last.table.names or [], last)
    if not text.isascii():  # the writer escapes every other character
        return None
    data = text if isinstance(text, bytes) else text.encode("ascii")
    try:
        doc = _DECODE.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    quests = doc.quests
    if doc.schema != SCHEMA_VERSION or doc.tests is UNSET or quests is UNSET:
        return None
    fail = _Fail(path)
    names = _Table(table if table is not None else doc.tests, fail)
    try:
        if lazy:
            if not _laid_out(data, doc, quests):
                return None
            origin = None
        else:
            if not _canonical(data, doc, names.get(), quests):
                return None
            origin = Origin(data, doc, names)
        built = _quests(quests, names, fail, origin)
        ratchet = _ratchet(doc, built, names.names if origin else None, origin, fail, names)
    except _Irregular:
        return None
    if origin is not None:
        _LAST[:] = [weakref.ref(origin)]
    return ratchet


def _checked(text: str | bytes, fail: _Fail) -> Ratchet:
    """The ratchet of any file the strict parser reads, every defect named."""
    data = strict_parse_file(text, fail.path)
    if not isinstance(data, dict):
        raise fail("top level", "expected a JSON object")
    if "schema" not in data:
        raise fail("schema", "missing field")
    schema = data["schema"]
    if type(schema) is not int:
        raise fail("schema", f"expected an integer, found {type(schema).__name__}")
    if schema > SCHEMA_VERSION:
        raise fail(
            "schema",
            f"version {schema} is newer than this pytest-quest understands ({SCHEMA_VERSION})",
            "upgrade pytest-quest",
        )
    data = migrate(data, schema, fail)
    head = {key: value for key, value in data.items() if key not in ("tests", "quests")}
    doc = _convert(head, HeadS, "", fail)
    tests = _convert(data.get("tests", []), list[str], "tests", fail)
    if "quests" not in data:
        raise fail("quests", "missing field")
    found = data["quests"]
    if type(found) is not dict:
        raise fail("quests", f"expected an object, found {type(found).__name__}")
    names = _Table(None, fail, tests)
    quests = {
        qid: _convert(record, QuestS, f"quests[{qid!r}]", fail, tests)
        for qid, record in found.items()
    }
    doc.quests = quests
    return _ratchet(doc, _quests(quests, names, fail, None), tests, None, fail, names)


def _convert(value: Any, kind: Any, where: str, fail: _Fail, tests: list[str] | None = None) -> Any:
    """`value` (parsed JSON) as `kind`; a `RatchetFileError` naming the field when it is not."""
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        raise fail(*_named(str(exc), where, value, kind, tests or [])) from None


_KINDS = {
    "int": "an integer",
    "str": "a string",
    "bool": "a boolean",
    "array": "a list",
    "object": "an object",
    "null": "null",
    "float": "a number",
}
_FOUND = {"array": "list", "object": "dict", "null": "NoneType"}


def _named(message: str, where: str, value: Any, kind: Any, tests: list[str]) -> tuple[str, ...]:
    """msgspec's `message` about `value` (read as `kind` at `where`): the field and problem."""
    problem, _, at = message.partition(" - at `$")
    at = at.rstrip("`")
    field = (where + at) if where else at.lstrip(".")
    if re.match(r"\.lines\b", at):
        return f"{where}.lines", "expected [first, last] with 1 <= first <= last"
    pair = re.match(r"\.missing_branches\[\d+\]", at)
    if pair:
        return f"{where}{pair.group()}", "expected a [from, to] pair"
    index = re.match(r"\.covering_tests\[(\d+)\]", at)
    if index:
        entry = value["covering_tests"][int(index.group(1))]
        return (
            f"{where}{index.group()}",
            f"expected an index into `tests` (0 to {len(tests) - 1}), "
            f"found {json.dumps(entry)[:40]}",
        )
    entries = re.match(r"\.(removed|policy_history)\[\d+\]", at)
    if entries:
        return entries.group()[1:], "expected an object of strings"
    if at == ".active":
        return "active", "expected a quest id or null"
    if at.startswith(".test_files[...]"):
        name = next(k for k, v in value["test_files"].items() if type(v) is not str)
        return f"test_files[{name!r}]", "expected a string"
    words = re.match(r"Object (missing required|contains unknown) field `(\w+)`", problem)
    if words:
        named = f"{field}.{words.group(2)}" if field else words.group(2)
        if words.group(1) == "missing required":
            return named, "missing field"
        struct = kind
        if at:
            struct = FactS if re.search(r"\.facts\[\d+\]$", at) else EventS
        known = ", ".join(sorted(struct.__struct_fields__))
        return (
            named,
            f"unknown field (known: {known})",
            "remove or rename it; if a newer pytest-quest wrote it, upgrade pytest-quest",
        )
    if problem.startswith("Invalid enum value"):
        allowed = ", ".join(state.value for state in State)
        return field, f"unknown state {problem.split(' ', 3)[3]} (allowed: {allowed})"
    if re.match(r"Expected `int` >= 0$", problem):
        return field, "must not be negative"
    types = re.match(r"Expected `([^`]*)`, got `(\w+)`", problem)
    if types:
        expected = " or ".join(_KINDS.get(name, name) for name in types.group(1).split(" | "))
        found = _FOUND.get(types.group(2), types.group(2))
        return field or "top level", f"expected {expected}, found {found}"
    return field or "top level", problem[:1].lower() + problem[1:]


class _Table:
    """The file's tests table, decoded from its text when first needed (a showing command)."""

    __slots__ = ("fail", "names", "raw")

    def __init__(self, raw: Raw | memoryview | None, fail: _Fail, names: list[str] | None = None):
        self.raw, self.fail = raw, fail
        self.names: list[str] | None = None
        if names is not None:
            self.checked(names)

    def get(self) -> list[str]:
        if self.names is None:
            try:
                names = _TABLE.decode(self.raw)  # type: ignore[arg-type]
            except msgspec.ValidationError as exc:
                raise self.fail(*_named(str(exc), "tests", None, list[str], [])) from None
            self.checked(names)
        return self.names  # type: ignore[return-value]

    def checked(self, names: list[str]) -> None:
        if len(set(names)) != len(names):
            seen: set[str] = set()
            for index, name in enumerate(names):
                if name in seen:
                    raise self.fail(f"tests[{index}]", f"{name!r} appears twice")
                seen.add(name)
        self.names = names


class Origin:
    """The bytes a ratchet was read from, what was decoded, and what the writer reuses."""

    __slots__ = (
        "__weakref__",
        "data",
        "deep",
        "doc",
        "index",
        "pristine",
        "quests_raw",
        "table",
        "tests_raw",
        "used_indexes",
    )

    def __init__(self, data: bytes, doc: HeadS, table: _Table) -> None:
        self.data = data
        self.doc = doc
        self.table = table
        #: Each quest's fields as read (never handed out: copies are).
        self.pristine: dict[str, dict[str, Any]] = {}
        self.deep: set[str] = set()  # the quests whose fields hold containers: copied deeply
        self.quests_raw: dict[str, Raw] | None = None
        self.tests_raw: bytes = b""
        self.index: dict[str, int] | None = None
        self.used_indexes: set[int] | None = None

    @property
    def names(self) -> list[str]:
        return self.table.names or []

    def positions(self) -> dict[str, int]:
        """Each name of the tests table read, to its index."""
        if self.index is None:
            self.index = dict(zip(self.names, range(len(self.names))))
        return self.index

    def used(self) -> set[int]:
        """The indexes into the tests table that some quest read uses (not to be changed)."""
        if self.used_indexes is None:
            found = (fields["_s"].covering_tests for fields in self.pristine.values())
            self.used_indexes = set().union(*found)
        return self.used_indexes

    def raw(self) -> dict[str, Raw]:
        if self.quests_raw is None:
            found = _DECODE_RAW.decode(self.data)
            self.quests_raw, self.tests_raw = found.quests, bytes(found.tests)
        return self.quests_raw


def _ratchet(
    doc: HeadS,
    quests: dict[str, Quest],
    table: list[str] | None,
    origin: Origin | None,
    fail: _Fail | None = None,
    names: _Table | None = None,
) -> Ratchet:
    """The ratchet of `doc` with `quests`, its own copy of every field; the file's rules checked
    when `fail` is given (a first read)."""
    policy = None
    if doc.policy is not UNSET:
        try:
            policy = policy_from_dict(doc.policy)
        except PolicyError as exc:
            assert fail is not None
            key, sep, problem = str(exc).partition(": ")
            if sep and " " not in key:
                raise fail(f"policy.{key}", problem) from None
            raise fail("policy", str(exc)) from None
    if fail is not None:
        if doc.active is not None and doc.active not in quests:
            raise fail("active", f"names {doc.active!r}, which is not a quest")
        for name in doc.test_files:
            if grammar.file_problem(name):
                raise fail(f"test_files[{name!r}]", grammar.file_problem(name))
        for index, name in enumerate(doc.test_paths):
            if name != "." and grammar.file_problem(name):
                raise fail(f"test_paths[{index}]", grammar.file_problem(name))
        for index, qid in enumerate(doc.excluded_functions):
            if grammar.id_problem(qid):
                raise fail(f"excluded_functions[{index}]", grammar.id_problem(qid))
        if not _bounded(doc.coverage_config) or not (doc.policy is UNSET or _bounded(doc.policy)):
            raise _Irregular
    ratchet = Ratchet(
        policy=policy,
        policy_history=copy.deepcopy(doc.policy_history),
        quests=quests,
        active=doc.active,
        coverage_config=copy.deepcopy(doc.coverage_config),
        test_files=dict(doc.test_files),
        test_paths=list(doc.test_paths),
        removed=copy.deepcopy(doc.removed),
        excluded_functions=list(doc.excluded_functions),
        scanned_at=doc.scanned_at,
    )
    if table is not None:
        ratchet.test_table = list(table)
    else:  # decoded only if something asks for it
        assert names is not None
        del vars(ratchet)["test_table"]
        vars(ratchet)["_pending_table"] = names.get
    if origin is not None:
        vars(ratchet)["_origin"] = origin  # what the writer reuses (`render`)
    return ratchet


def _copies(origin: Origin) -> dict[str, Quest]:
    """The quests of `origin` as read, again: new objects, nothing shared a change could alter."""
    out: dict[str, Quest] = {}
    new = Quest.__new__
    for qid, snapshot in origin.pristine.items():
        fields = snapshot.copy()
        extra = fields["extra"]
        fields["extra"] = {**extra} if extra else {}
        quest = new(Quest)
        quest.__dict__ = fields
        out[qid] = quest
    for qid in origin.deep:
        fields, snapshot = out[qid].__dict__, origin.pristine[qid]
        fields["extra"] = copy.deepcopy(snapshot["extra"])
        for key in _TYPED_MUTABLE:
            if key in snapshot:
                fields[key] = copy.deepcopy(snapshot[key])
    return out


def _canonical(data: bytes, doc: HeadS, tests: list[str], quests: dict[str, QuestS]) -> bool:
    """Whether `data` without whitespace is the encoding of `doc` (head, tests, then quests)."""
    raw, doc.tests, doc.quests = doc.tests, UNSET, UNSET
    try:
        head = _ENCODE.encode(doc)
    finally:
        doc.tests, doc.quests = raw, quests
    compact = msgspec.json.format(data, indent=-1)
    pieces = (head[:-1], b',"tests":', _ENCODE.encode(tests), b',"quests":', _ENCODE.encode(quests))
    at = 0
    for piece in pieces:  # compared in place: no copy of a 60 MB text
        if not compact.startswith(piece, at):
            return False
        at += len(piece)
    return compact.endswith(b"}") and at + 1 == len(compact)


def _default(field: msgspec.structs.FieldInfo) -> Any:
    if field.default_factory is not msgspec.NODEFAULT:
        return field.default_factory()
    return object() if field.required else field.default  # a required field: always written


# Each field of the file but `tests` and `quests` (always written), with its default.
_HEAD_DEFAULTS = [
    (field.name, _default(field))
    for field in msgspec.structs.fields(HeadS)
    if field.name not in ("tests", "quests")
]


def _laid_out(data: bytes, doc: HeadS, quests: dict[str, QuestS]) -> bool:
    """Whether `data` has the writer's lines: one per field of the file and one per quest.

    A quest written twice (a decoder keeps the last one) adds a line, as does a
    field of the file written twice or a default spelled out.  A field written
    twice inside one quest's line is not seen: the file is shown with its last
    value, and every command that writes refuses it (docs/reliability.md).
    """
    # The writer leaves out a field at its default (the Struct's).
    fields = sum(bool(getattr(doc, name) != default) for name, default in _HEAD_DEFAULTS)
    table = data.find(b'\n"tests": [')
    rows = data.find(b'"quests": {', table)
    if table < 0 or rows < 0:
        return False
    # Before the table: "{" and every field but the last one's line end; from the quests:
    # a line per quest, the line ends around them, and "}" twice.
    lines = data.count(b"\n", 0, table) + data.count(b"\n", rows)
    return lines == fields + (len(quests) + 1 if quests else 0) + 2


def _bounded(value: Any) -> bool:
    """Whether every integer in `value` has at most MAX_DIGITS digits (floats are finite)."""
    kind = type(value)
    if kind is int:
        return bool(-_BIG < value < _BIG)
    if kind is float:
        return math.isfinite(value)
    if kind is dict:
        return all(_bounded(item) for item in value.values())
    if kind is list:
        return all(_bounded(item) for item in value)
    return True


def _check_quest(qid: str, s: QuestS, size: int | None, good_files: set[str], fail: _Fail) -> None:
    """The rules of one quest no type says: its lines, names, id, PASS record, test indexes."""
    first, last = s.lines
    file, qualname = s.file, s.qualname
    if not 1 <= first <= last:
        raise fail(f"quests[{qid!r}].lines", "expected [first, last] with 1 <= first <= last")
    if file not in good_files:
        if grammar.file_problem(file):
            raise fail(f"quests[{qid!r}].file", grammar.file_problem(file))
        good_files.add(file)
    if not _QUALNAME(qualname) and grammar.qualname_problem(qualname):
        raise fail(f"quests[{qid!r}].qualname", grammar.qualname_problem(qualname))
    if qid != f"{file}::{qualname}" and not _twin(qid, file, qualname):
        raise fail(
            f"quests[{qid!r}]",
            f"id does not match file {file!r} and qualname {qualname!r} "
            f"(expected {file}::{qualname}, or with @2, @3... for a twin)",
        )
    if s.state is State.PASS and not (
        s.passed_at
        and s.fingerprint
        and s.covering_tests
        and not s.missing_lines
        and not s.missing_branches
    ):
        _pass_rules(qid, s, fail)
    if size is not None and s.covering_tests and max(s.covering_tests) >= size:
        _index_fault(qid, s.covering_tests, size, fail)


def _extra_fields(
    s: QuestS, fields: dict[str, Any], origin: Origin | None
) -> tuple[dict[str, Any], bool]:
    """`s.extra` into `fields` (typed keys) and `fields["extra"]` (the rest).

    Returns the extra as read (for the writer's snapshot) and whether it holds
    containers, copied deep.
    """
    rest: dict[str, Any] = {}
    kept: dict[str, Any] = {}
    fields["extra"] = rest
    deep = False
    for key, value in s.extra.items():
        kind = type(value)
        copied = value
        if kind is dict or kind is list:
            if not _bounded(value):
                raise _Irregular
            if origin is not None:  # the copy read, and one kept to compare: no sharing
                value, copied, deep = copy.deepcopy(value), copy.deepcopy(value), True
        elif kind is int and not -_BIG < value < _BIG:
            raise _Irregular
        if kind in EXTRA_TYPES.get(key, ()):
            fields[key] = value
            kept[key] = copied
        else:
            rest[key] = value
            kept.setdefault("extra", {})[key] = copied
    return kept, deep


def _quests(
    quests: dict[str, QuestS], table: _Table, fail: _Fail, origin: Origin | None
) -> dict[str, Quest]:
    """Each quest as a `Quest` whose lists wait for first use, the rules no type says checked.

    One pass, written for speed (50,000 quests): the decoder has checked the types.
    """
    size = len(table.names) if table.names is not None else None
    pending = functools.partial(_decode, table)  # `Quest.__getattr__`'s hook, one for all
    good_files: set[str] = set()
    out: dict[str, Quest] = {}
    new = Quest.__new__
    todo = State.TODO
    for qid, s in quests.items():
        _check_quest(qid, s, size, good_files, fail)
        first, last = s.lines
        fields = {
            "id": qid,
            "file": s.file,
            "qualname": s.qualname,
            "first": first,
            "last": last,
            "fingerprint": s.fingerprint,
            "_pending": pending,
            "_s": s,
        }
        # A field at its default is left to the class's (fewer to copy and compare).
        if s.state is not todo:
            fields["state"] = s.state
        if s.tries:
            fields["tries"] = s.tries
        if s.statements:
            fields["statements"] = s.statements
        if s.branches:
            fields["branches"] = s.branches
        if s.issued_at:
            fields["issued_at"] = s.issued_at
        if s.passed_at:
            fields["passed_at"] = s.passed_at
        if s.baseline:
            fields["baseline"] = True
        kept, deep = _extra_fields(s, fields, origin)
        if origin is not None:
            snapshot = fields.copy()  # what the writer compares, to find the quests left as read
            snapshot["extra"] = {}
            snapshot.update(kept)
            origin.pristine[qid] = snapshot
            if deep:
                origin.deep.add(qid)
        quest = new(Quest)
        quest.__dict__ = fields
        out[qid] = quest
    return out


def _pass_rules(qid: str, s: QuestS, fail: _Fail) -> None:
    """The PASS rule `s` breaks, named: a PASS must carry what the gate saw when it passed."""
    where = f"quests[{qid!r}]"
    if not s.passed_at:
        raise fail(f"{where}.passed_at", "a PASS quest must record when it passed")
    if not s.fingerprint:
        raise fail(f"{where}.fingerprint", "a PASS quest must record its fingerprint")
    if not s.covering_tests:
        raise fail(f"{where}.covering_tests", "a PASS quest must record the tests that cover it")
    if s.missing_lines or s.missing_branches:
        raise fail(where, "a PASS quest cannot have missing lines or branches")


def _index_fault(qid: str, indexes: list[int], size: int, fail: _Fail) -> None:
    at = next(n for n, index in enumerate(indexes) if index >= size)
    raise fail(
        f"quests[{qid!r}].covering_tests[{at}]",
        f"expected an index into `tests` (0 to {size - 1}), found {indexes[at]}",
    )


def _twin(qid: str, file: str, qualname: str) -> bool:
    base = f"{file}::{qualname}@"
    ordinal = qid[len(base) :]
    return (
        qid.startswith(base)
        and ordinal.isdigit()
        and ordinal.isascii()
        and not ordinal.startswith("0")
        and int(ordinal) >= 2
    )


def _decode(table: _Table, quest: Quest, name: str) -> None:
    """`Quest.__getattr__`'s hook: a list field built from the quest's Struct on first use."""
    values = quest.__dict__
    s: QuestS = values["_s"]
    # A value set before the first use stays: it is the newer one.
    if name == "covering_tests":
        names = table.get()
        if s.covering_tests and max(s.covering_tests) >= len(names):
            _index_fault(quest.id, s.covering_tests, len(names), table.fail)
        values.setdefault("covering_tests", [names[i] for i in s.covering_tests])
        return
    lines = list(s.missing_lines)
    arcs = [(a, b) for a, b in s.missing_branches]
    values.setdefault("missing_lines", lines)
    values.setdefault("missing_branches", arcs)
    values.setdefault("excluded_lines", list(s.excluded_lines))
    if s.facts is UNSET:
        facts = [line_fact(s.file, line) for line in lines]
        facts += [branch_fact(s.file, arc) for arc in arcs]
    else:
        facts = [Fact(f.check, f.field, f.expected, f.actual, f.message) for f in s.facts]
    values.setdefault("facts", facts)
    values.setdefault(
        "history",
        [
            Event(e.at, e.action, e.verdict, e.by, e.note, e.reason, e.fingerprint)
            for e in s.history
        ],
    )


# -- the strict parser, and older versions ------------------------------------------


def migrate(data: dict[str, Any], schema: int, fail: Callable[..., Exception]) -> dict[str, Any]:
    """An older file's parsed JSON brought up to `SCHEMA_VERSION`, one version at a time.

    Each step of `MIGRATIONS` turns version ``n`` into ``n + 1``, in memory: a
    read never rewrites the file, the next write (under the lock) stores the
    current version.
    """
    if schema < 1:
        raise fail("schema", f"unknown version {schema} (versions start at 1)", RESTORE)
    while schema < SCHEMA_VERSION:
        step = MIGRATIONS.get(schema)
        if step is None:
            raise fail(
                "schema",
                f"version {schema} is older than this pytest-quest can read "
                f"(it reads {SCHEMA_VERSION})",
                RESTORE,
            )
        try:
            migrated = step(dict(data))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise fail(
                "schema",
                f"migrating from version {schema} to {schema + 1} failed: "
                f"{type(exc).__name__}: {exc}",
            ) from None
        if not isinstance(migrated, dict):
            raise fail(
                "schema", f"migrating from version {schema} to {schema + 1} gave no JSON object"
            )
        data = migrated
        schema += 1
        data["schema"] = schema
    return data


#: Schema migrations: ``MIGRATIONS[n]`` turns version ``n``'s parsed JSON into ``n + 1``.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: layout.migrate_1_to_2,
}


def strict_parse_file(text: str | bytes, path: str) -> Any:
    """The ratchet file's text as parsed JSON; `RatchetFileError` for text that is not JSON."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            where = f"byte 0x{text[exc.start]:02x} at offset {exc.start}"
            raise RatchetFileError(path, f"not UTF-8 text ({where})", RESTORE) from None
    if not text.strip():
        raise RatchetFileError(path, "the file is empty", RESTORE)
    try:
        return strict_parse(text)
    except BadNumber as exc:
        raise RatchetFileError(path, f"{exc.where}: {exc.problem}", RESTORE) from None
    except DuplicateKey as exc:
        # Where the key appears as an object key for the second time.
        pattern = re.compile(re.escape(json.dumps(exc.key)) + r"\s*:")
        found = list(pattern.finditer(text))
        line = f" at line {text.count(chr(10), 0, found[1].start()) + 1}" if len(found) > 1 else ""
        raise RatchetFileError(
            path,
            f"duplicate key {exc.key!r}{line}: a quest id or a field appears twice in one object",
            "keep one of the two entries, or restore it from version control if unsure",
        ) from None
    except (ValueError, RecursionError) as exc:
        where = ""
        if isinstance(exc, json.JSONDecodeError):
            where = f" at line {exc.lineno} column {exc.colno}"
        raise RatchetFileError(path, f"not valid JSON{where}", RESTORE) from None


class DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class BadNumber(ValueError):
    """A refused number, with the path of its field."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


class _Refused:
    """A number the parser refuses, kept in place until its field is named."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # at C speed; the loop below only runs to name a duplicate
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return result


def strict_parse(text: str) -> Any:
    """`text` parsed as data from a stranger: `DuplicateKey`, `BadNumber` (NaN, Infinity,
    beyond a float, more than MAX_DIGITS digits, named by path) or `ValueError` (not JSON)."""
    refused: list[_Refused] = []

    def refuse(problem: str) -> _Refused:
        refused.append(_Refused(problem))
        return refused[-1]

    def parse_int(literal: str) -> int | _Refused:
        if len(literal) > grammar.MAX_DIGITS and grammar.too_many_digits(literal):
            digits = len(literal.lstrip("-"))
            return refuse(f"an integer of {digits} digits (at most {grammar.MAX_DIGITS})")
        return int(literal)

    def parse_float(literal: str) -> float | _Refused:
        value = float(literal)
        if not math.isfinite(value):
            return refuse(f"{literal[:40]} is beyond a finite number's range")
        return value

    def parse_constant(name: str) -> _Refused:
        return refuse(f"{name} is not a JSON number (only finite numbers are allowed)")

    data = json.loads(
        text,
        object_pairs_hook=_unique,
        parse_int=parse_int,
        parse_float=parse_float,
        parse_constant=parse_constant,
    )
    if refused:
        raise BadNumber(_where(data, refused[0], "") or "top level", refused[0].problem)
    return data


def _where(data: Any, mark: _Refused, path: str) -> str | None:
    """The path of `mark` in `data` (``quests['ID'].extra.x``, ``lines[0]``)."""
    if data is mark:
        return path
    if isinstance(data, dict):
        for key, value in data.items():
            # Objects whose keys are names (quest ids, file paths) are written ``[...]``.
            keyed = path in ("quests", "test_files")
            named = f"{path}[{key!r}]" if keyed else (f"{path}.{key}" if path else key)
            found = _where(value, mark, named)
            if found is not None:
                return found
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found = _where(value, mark, f"{path}[{index}]")
            if found is not None:
                return found
    return None
