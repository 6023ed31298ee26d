"""The ratchet file read by a typed decoder in C (msgspec), and written back touching only changes.

The normal path for a file pytest-quest wrote.  `read` decodes the bytes
into msgspec Structs, whose types say what `codec.loads` checks field by
field (unknown fields refused, integers bounded, states named, lists of the
right kinds), then proves the text is in the writer's canonical form: the
file without its whitespace must equal the encoding of what was decoded.
That proof is what keeps the strict parser's refusals (``strict_json``): a
key twice in one object is dropped by a decoder and so missing from the
encoding; ``NaN`` is no JSON for msgspec either; a default spelled out, a
number written otherwise, keys out of order all differ too.  The rules no
type can say (lines in order, the PASS rules, names, test indexes in range,
long integers inside ``extra``) are checked on the decoded Structs.

Anything it does not accept, `read` hands back as None and the caller runs
the field-by-field reader (``engine/codec.py``): it accepts what this path
would not (a hand-indented file, a version-1 file, a default written out)
and names the field of every defect, with the messages it always gives.

A quest read here keeps its Struct (``_s``): its lists are decoded on first
use (as ``engine/codec_lazy.py`` does), and the writer
(``engine/codec_reuse.py``) writes an untouched quest back as the bytes it
was read from, so a write re-encodes only the quests that changed, and a
change of nothing gives the file's own bytes.
"""

from __future__ import annotations

import copy
import functools
import math
import re
import weakref
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from pytest_quest.core import grammar
from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State, branch_fact, line_fact
from pytest_quest.core.policy import PolicyError
from pytest_quest.core.policy import from_dict as policy_from_dict

_BIG = 10**grammar.MAX_DIGITS  # an integer of more than MAX_DIGITS digits is refused
Count = Annotated[int, Meta(ge=0, lt=_BIG)]
Int = Annotated[int, Meta(gt=-_BIG, lt=_BIG)]


class FactS(Struct, forbid_unknown_fields=True, omit_defaults=True):
    check: str
    field: str
    expected: str
    actual: str
    message: str = ""


class EventS(Struct, forbid_unknown_fields=True, omit_defaults=True):
    at: str
    action: str
    verdict: str = ""
    by: str = ""
    note: str = ""
    reason: str = ""
    fingerprint: str = ""


class QuestS(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A quest as version 2 stores it (``engine/records.py``): defaults left out."""

    file: str
    qualname: str
    lines: tuple[Int, Int]
    fingerprint: str
    state: Literal["PASS", "REVIEW", "DONE", "EXCLUDED", "TODO"] = "TODO"
    tries: Count = 0
    statements: Count = 0
    branches: Count = 0
    missing_lines: list[Int] = []
    missing_branches: list[tuple[Int, Int]] = []
    excluded_lines: list[Int] = []
    covering_tests: list[Count] = []
    facts: list[FactS] | UnsetType = UNSET  # left out: derived from the missing lines and branches
    issued_at: str = ""
    passed_at: str = ""
    baseline: bool = False
    history: list[EventS] = []
    extra: dict[str, Any] = {}


class HeadS(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """The file's fields; `tests` and `quests` are always written (UNSET here: refused)."""

    schema: int
    tool: str | UnsetType = UNSET
    active: str | None = None
    scanned_at: str = ""
    coverage_config: dict[str, Any] = {}
    test_files: dict[str, str] = {}
    excluded_functions: list[str] = []
    removed: list[dict[str, str]] = []
    policy: dict[str, Any] | UnsetType = UNSET
    policy_history: list[dict[str, str]] = []
    tests: list[str] | UnsetType = UNSET
    quests: dict[str, QuestS] | UnsetType = UNSET


class _RawS(Struct):
    """The file with each quest's text, and the tests table's, as found (for `render`)."""

    tests: msgspec.Raw
    quests: dict[str, msgspec.Raw]


_DECODE = msgspec.json.Decoder(HeadS)
_DECODE_RAW = msgspec.json.Decoder(_RawS)
_ENCODE = msgspec.json.Encoder(order="sorted")
_STATES = {state.value: state for state in State}
# The typed fields of `Quest` kept in its ``extra`` object, with the JSON types
# each takes.  A value of another type (a hand edit) stays in `Quest.extra` as
# found: reading and writing a file never changes it.
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
_MUTABLE = (dict, list)
# Fields of `Quest` whose class gives their default (TODO, 0, "", False): set when not.
_DEFAULTED = ("tries", "statements", "branches", "issued_at", "passed_at", "baseline")
_TYPED_MUTABLE = tuple(key for key, kinds in EXTRA_TYPES.items() if set(kinds) & {dict, list})
# Dotted Python identifiers, for the ASCII text this path reads (`grammar.qualname_problem`).
_QUALNAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", re.ASCII).fullmatch


class Origin:
    """The bytes a ratchet was read from, what was decoded, and what `render` reuses."""

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

    def __init__(self, data: bytes, doc: HeadS, table: list[str]) -> None:
        self.data: bytes = data
        self.doc = doc
        self.table = table
        #: Each quest's fields as read (never handed out: copies are), and whether
        #: they hold a container (copied deeply then).
        self.pristine: dict[str, dict[str, Any]] = {}
        self.deep: set[str] = set()  # the quests whose fields hold containers: copied deeply
        self.quests_raw: dict[str, msgspec.Raw] | None = None
        self.tests_raw: bytes = b""
        self.index: dict[str, int] | None = None
        self.used_indexes: set[int] | None = None

    def positions(self) -> dict[str, int]:
        """Each name of the tests table read, to its index."""
        if self.index is None:
            self.index = dict(zip(self.table, range(len(self.table))))
        return self.index

    def used(self) -> set[int]:
        """The indexes into the tests table that some quest read uses (not to be changed)."""
        if self.used_indexes is None:
            found = (fields["_s"].covering_tests for fields in self.pristine.values())
            self.used_indexes = set().union(*found)
        return self.used_indexes

    def raw(self) -> dict[str, msgspec.Raw]:
        if self.quests_raw is None:
            found = _DECODE_RAW.decode(self.data)
            self.quests_raw, self.tests_raw = found.quests, bytes(found.tests)
        return self.quests_raw


# The last file `read` accepted, while a ratchet read from it lives: the same bytes
# read again (a locked update after a load) are not decoded and checked again.
_LAST: list[weakref.ref[Origin]] = []


def read(text: bytes | str) -> Ratchet | None:
    """The ratchet in `text` when it is canonical and valid; None: let the full reader judge it."""
    last = _LAST[0]() if _LAST else None
    if last is not None and (text is last.data or text == last.data):
        return _ratchet(last, _copies(last))
    if not text.isascii():  # the writer escapes every other character
        return None
    data = text if isinstance(text, bytes) else text.encode("ascii")
    try:
        doc = _DECODE.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if doc.schema != 2 or doc.tests is UNSET or doc.quests is UNSET:
        return None
    tests, quests = doc.tests, doc.quests
    if not _canonical(data, doc, tests, quests):
        return None
    if not _head_ok(doc) or len(set(tests)) != len(tests):
        return None
    if doc.active is not None and doc.active not in quests:
        return None
    origin = Origin(data, doc, tests)
    built = _quests(quests, tests, origin)
    if built is None:
        return None
    ratchet = _ratchet(origin, built)
    if ratchet is not None:
        _LAST[:] = [weakref.ref(origin)]
    return ratchet


def _ratchet(origin: Origin, quests: dict[str, Quest]) -> Ratchet | None:
    """The ratchet of `origin`'s file with `quests`, its own copy of every field."""
    doc = origin.doc
    policy = None
    if doc.policy is not UNSET:
        try:
            policy = policy_from_dict(doc.policy)
        except PolicyError:
            return None
    ratchet = Ratchet(
        policy=policy,
        policy_history=copy.deepcopy(doc.policy_history),
        quests=quests,
        active=doc.active,
        coverage_config=copy.deepcopy(doc.coverage_config),
        test_files=dict(doc.test_files),
        removed=copy.deepcopy(doc.removed),
        excluded_functions=list(doc.excluded_functions),
        scanned_at=doc.scanned_at,
    )
    ratchet.test_table = list(origin.table)
    vars(ratchet)["_origin"] = origin  # what the writer reuses (engine/codec_reuse.py)
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
    doc.tests = doc.quests = UNSET
    try:
        head = _ENCODE.encode(doc)
    finally:
        doc.tests, doc.quests = tests, quests
    compact = msgspec.json.format(data, indent=-1)
    pieces = (head[:-1], b',"tests":', _ENCODE.encode(tests), b',"quests":', _ENCODE.encode(quests))
    at = 0
    for piece in pieces:  # compared in place: no copy of a 60 MB text
        if not compact.startswith(piece, at):
            return False
        at += len(piece)
    return compact.endswith(b"}") and at + 1 == len(compact)


def _head_ok(doc: HeadS) -> bool:
    """Whether the file's own fields keep the rules no type says (names, long integers)."""
    if any(grammar.file_problem(name) for name in doc.test_files):
        return False
    if any(grammar.id_problem(qid) for qid in doc.excluded_functions):
        return False
    return _bounded(doc.coverage_config) and (doc.policy is UNSET or _bounded(doc.policy))


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


def _quests(quests: dict[str, QuestS], table: list[str], origin: Origin) -> dict[str, Quest] | None:
    """Each quest as a `Quest` whose lists wait for first use; None on any rule broken."""
    size = len(table)
    pending = functools.partial(_decode, table)  # `Quest.__getattr__`'s hook, one for all
    good_files: set[str] = set()
    out: dict[str, Quest] = {}
    new = Quest.__new__
    for qid, s in quests.items():
        first, last = s.lines
        file, qualname, state = s.file, s.qualname, s.state
        if not 1 <= first <= last:
            return None
        if s.covering_tests and max(s.covering_tests) >= size:
            return None
        if state == "PASS" and not (
            s.passed_at
            and s.fingerprint
            and s.covering_tests
            and not s.missing_lines
            and not s.missing_branches
        ):
            return None
        if qid != f"{file}::{qualname}" and not _twin(qid, file, qualname):
            return None
        if file not in good_files:
            if grammar.file_problem(file):
                return None
            good_files.add(file)
        if not _QUALNAME(qualname):
            return None
        fields = {
            "id": qid,
            "file": file,
            "qualname": qualname,
            "first": first,
            "last": last,
            "fingerprint": s.fingerprint,
            "_pending": pending,
            "_s": s,
        }
        # A field at its default is left to the class's (fewer to copy and compare).
        if state != "TODO":
            fields["state"] = _STATES[state]
        for name in _DEFAULTED:
            value = getattr(s, name)
            if value:
                fields[name] = value
        rest: dict[str, Any] = {}
        kept_extra: dict[str, Any] = {}
        fields["extra"] = rest
        snapshot = fields.copy()  # what the writer compares, to find the quests left as read
        snapshot["extra"] = kept_extra
        deep = False
        if s.extra:
            for key, value in s.extra.items():
                kind = type(value)
                if kind in _MUTABLE:  # the copy read, and one kept to compare: no sharing
                    if not _bounded(value):
                        return None
                    value, kept, deep = copy.deepcopy(value), copy.deepcopy(value), True
                elif kind is int and not -_BIG < value < _BIG:
                    return None
                else:
                    kept = value
                if kind in EXTRA_TYPES.get(key, ()):
                    fields[key], snapshot[key] = value, kept
                else:
                    rest[key], kept_extra[key] = value, kept
        origin.pristine[qid] = snapshot
        if deep:
            origin.deep.add(qid)
        quest = new(Quest)
        quest.__dict__ = fields
        out[qid] = quest
    return out


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


def _decode(table: list[str], quest: Quest, name: str) -> None:
    """`Quest.__getattr__`'s hook: a list field decoded from the quest's Struct on first use."""
    values = quest.__dict__
    s: QuestS = values["_s"]
    # A value set before the first use stays: it is the newer one.
    if name == "covering_tests":
        values.setdefault("covering_tests", [table[i] for i in s.covering_tests])
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


__all__ = ["EXTRA_TYPES", "HeadS", "Origin", "QuestS", "read"]
