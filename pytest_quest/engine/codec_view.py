"""The ratchet file read for a command that only shows it: each quest's lists kept as raw text.

`status` (text) and `next` show every quest's state and place, and the lists
(facts, missing lines, history, covering tests) of a few.  `read` decodes the
file with msgspec into Structs whose list fields are `msgspec.Raw` spans of
the file: the decoder checks their JSON and skips them, building nothing.
Every quest's other fields are typed and checked as ``codec_fast`` checks
them (unknown fields, bounded integers, state names, the lines in order, the
PASS rules, file and function names, the id); a list is decoded by its
typed decoder when first used, and a defect found then is named by the
field-by-field reader (``codec.loads``), with the message every other
command gives.

What this reader does not prove is the file's canonical form (``codec_fast``
proves it by encoding every quest again, a cost that grows with the file).
It requires the writer's layout, one line per field of the file, per test
and per quest (so a quest written twice, a default spelled out or a
hand-indented file is left to the other readers), but a field written twice
inside one quest's line is shown here with its last value; every command
that writes, and ``check``, refuse the file (docs/reliability.md).

A ratchet read here is for showing: it carries no origin for
``codec_reuse``, and every command that writes reads the file again with
``codec.loads``.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, Raw, Struct, UnsetType

from pytest_quest.core import grammar
from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State, branch_fact, line_fact
from pytest_quest.core.policy import PolicyError
from pytest_quest.core.policy import from_dict as policy_from_dict
from pytest_quest.engine import codec, codec_fast, layout
from pytest_quest.engine.codec_fast import Count, EventS, FactS, Int

_EMPTY = Raw(b"[]")
_ABSENT = Raw(b"")


# `grammar.qualname_problem` for the ASCII text this path reads, checked by the decoder.
Qualname = Annotated[str, Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")]


class QuestViewS(Struct, forbid_unknown_fields=True):
    """A quest as version 2 stores it, its lists left as the file's text."""

    file: str
    qualname: Qualname
    lines: tuple[Int, Int]
    fingerprint: str
    state: State = State.TODO
    tries: Count = 0
    statements: Count = 0
    branches: Count = 0
    missing_lines: Raw = _EMPTY
    missing_branches: Raw = _EMPTY
    excluded_lines: Raw = _EMPTY
    covering_tests: Raw = _EMPTY
    facts: Raw = _ABSENT  # absent: derived from the missing lines and branches
    issued_at: str = ""
    passed_at: str = ""
    baseline: bool = False
    history: Raw = _EMPTY
    extra: dict[str, Any] = {}


class HeadViewS(Struct, forbid_unknown_fields=True):
    """The file's fields (as ``codec_fast.HeadS``), the tests table and the quests' lists raw."""

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
    tests: Raw | UnsetType = UNSET
    quests: dict[str, QuestViewS] | UnsetType = UNSET


_DECODE = msgspec.json.Decoder(HeadViewS)
_LIST_DECODERS: dict[str, msgspec.json.Decoder[Any]] = {
    "missing_lines": msgspec.json.Decoder(list[Int]),
    "excluded_lines": msgspec.json.Decoder(list[Int]),
    "missing_branches": msgspec.json.Decoder(list[tuple[Int, Int]]),
    "covering_tests": msgspec.json.Decoder(list[Count]),
    "facts": msgspec.json.Decoder(list[FactS]),
    "history": msgspec.json.Decoder(list[EventS]),
}
_LISTS = ("missing_lines", "excluded_lines", "missing_branches", "history")
_TABLE = msgspec.json.Decoder(list[str])


class _File:
    """The bytes read and what the quests' lists need from them: the tests table, on first use."""

    __slots__ = ("data", "doc", "elsewhere", "path", "table")

    def __init__(
        self, data: bytes, doc: HeadViewS, path: str, table: memoryview | None = None
    ) -> None:
        self.data, self.doc, self.path = data, doc, path
        self.table: list[str] | None = None
        #: The table's text when it is not `data`'s own (`read`'s `table`).
        self.elsewhere = table

    def tests(self) -> list[str]:
        if self.table is None:
            raw = self.doc.tests if self.elsewhere is None else self.elsewhere
            try:
                table = _TABLE.decode(raw) if isinstance(raw, (Raw, memoryview)) else []
            except (msgspec.ValidationError, msgspec.DecodeError):
                table = None
            # A name twice in the table is refused by the other readers, not here (0.1 s
            # on 400,000 names): it would only show a test twice.
            if table is None:
                raise self.named("tests")
            self.table = table
        return self.table

    def named(self, where: str) -> RatchetFileError:
        """The field-by-field reader's error for this file (it names the field at fault)."""
        codec.loads(self.data, self.path)  # raises: the defect is real
        return RatchetFileError(self.path, f"{where}: not as pytest-quest writes it")


def read(
    text: bytes | str, path: str = "quest.json", *, table: memoryview | None = None
) -> Ratchet | None:
    """The ratchet in `text`, its lists decoded on first use; None: let another reader judge it.

    `table`: the tests table's JSON text, when `text` holds the quests of one file of a
    larger file and an empty table (engine/view_cache.py `one_file`): no copy of it is made.
    """
    if not text.isascii():  # the writer escapes every other character
        return None
    data = text if isinstance(text, bytes) else text.encode("ascii")
    try:
        doc = _DECODE.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if doc.schema != 2 or doc.tests is UNSET or doc.quests is UNSET:
        return None
    if not _laid_out(data, doc, doc.quests) or not _head_ok(doc):
        return None
    if doc.active is not None and doc.active not in doc.quests:
        return None
    policy = None
    if doc.policy is not UNSET:
        try:
            policy = policy_from_dict(doc.policy)
        except PolicyError:
            return None
    source = _File(data, doc, path, table)
    quests = _quests(doc.quests, source)
    if quests is None:
        return None
    ratchet = Ratchet(
        quests=quests,
        active=doc.active,
        coverage_config=doc.coverage_config,
        test_files=doc.test_files,
        removed=doc.removed,
        excluded_functions=doc.excluded_functions,
        scanned_at=doc.scanned_at,
        policy=policy,
        policy_history=doc.policy_history,
    )
    # The table's order is what a write keeps; decoded only if something asks for it.
    del vars(ratchet)["test_table"]
    vars(ratchet)["_pending_table"] = source.tests
    return ratchet


def _laid_out(data: bytes, doc: HeadViewS, quests: dict[str, QuestViewS]) -> bool:
    """Whether `data` has the writer's lines: one per field of the file and one per quest.

    A quest written twice (a JSON decoder keeps the last one) adds a line, as
    does a field of the file written twice or a default spelled out; all are
    left to the readers that name them.  The tests table's lines are not
    counted (a name twice in it is the limit the module's docstring names).
    """
    fields = 2 if doc.tool is not UNSET else 1  # schema, tool
    fields += doc.policy is not UNSET
    fields += bool(doc.policy_history)
    for key, default in layout.TOP_DEFAULTS.items():
        if key != "tests" and getattr(doc, key) != default:
            fields += 1
    table = data.find(b'\n"tests": [')
    rows = data.find(b'"quests": {', table)
    if table < 0 or rows < 0:
        return False
    # Before the table: "{" and every field but the last one's line end; from the quests:
    # a line per quest, the line ends around them, and "}" twice.
    lines = data.count(b"\n", 0, table) + data.count(b"\n", rows)
    return lines == fields + (len(quests) + 1 if quests else 0) + 2


def _head_ok(doc: HeadViewS) -> bool:
    if any(grammar.file_problem(name) for name in doc.test_files):
        return False
    if any(grammar.id_problem(qid) for qid in doc.excluded_functions):
        return False
    bounded = codec_fast._bounded
    return bounded(doc.coverage_config) and (doc.policy is UNSET or bounded(doc.policy))


def _quests(quests: dict[str, QuestViewS], source: _File) -> dict[str, Quest] | None:
    """Each quest as a `Quest` whose lists wait for first use; None on any rule broken.

    One pass, written for speed (50,000 quests): the decoder has checked the
    types, the state and the function's name; what is left is checked here.
    """
    pending = functools.partial(_decode, source)
    good_files: set[str] = set()
    bounded = codec_fast._bounded
    kinds = codec_fast.EXTRA_TYPES
    todo, passed, big = State.TODO, State.PASS, codec_fast._BIG
    out: dict[str, Quest] = {}
    new = Quest.__new__
    for qid, s in quests.items():
        first, last = s.lines
        file, state = s.file, s.state
        if not 1 <= first <= last:
            return None
        if qid != file + "::" + s.qualname and not codec_fast._twin(qid, file, s.qualname):
            return None
        if file not in good_files:
            if grammar.file_problem(file):
                return None
            good_files.add(file)
        fields: dict[str, Any] = {
            "id": qid,
            "file": file,
            "qualname": s.qualname,
            "first": first,
            "last": last,
            "fingerprint": s.fingerprint,
            "_pending": pending,
            "_v": s,
        }
        # A field at its default is left to the class's.
        if state is not todo:
            if state is passed and not (
                s.passed_at
                and s.fingerprint
                and not _empty(s.covering_tests)
                and _empty(s.missing_lines)
                and _empty(s.missing_branches)
            ):
                return None
            fields["state"] = state
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
        rest: dict[str, Any] = {}
        fields["extra"] = rest
        for key, value in s.extra.items():
            kind = type(value)
            if kind is int:
                if not -big < value < big:
                    return None
            elif kind is not str and not bounded(value):
                return None
            if kind in kinds.get(key, ()):
                fields[key] = value
            else:
                rest[key] = value
        quest = new(Quest)
        quest.__dict__ = fields
        out[qid] = quest
    return out


def _empty(raw: Raw) -> bool:
    """Whether a raw list is empty (``[]``, or ``[ ]`` written by hand)."""
    return raw == _EMPTY or not bytes(raw)[1:-1].strip()


def _decode(source: _File, quest: Quest, name: str) -> None:
    """`Quest.__getattr__`'s hook: a list field decoded from the file's text on first use."""
    values = quest.__dict__
    s: QuestViewS = values["_v"]
    where = f"quests[{quest.id!r}]"
    try:
        if name == "covering_tests":
            table = source.tests()
            indexes = _LIST_DECODERS["covering_tests"].decode(s.covering_tests)
            if indexes and max(indexes) >= len(table):
                raise source.named(f"{where}.covering_tests")
            values.setdefault("covering_tests", [table[i] for i in indexes])
            return
        lists = {key: _LIST_DECODERS[key].decode(getattr(s, key)) for key in _LISTS}
        if s.facts != _ABSENT:
            lists["facts"] = _LIST_DECODERS["facts"].decode(s.facts)
    except (msgspec.ValidationError, msgspec.DecodeError):
        raise source.named(where) from None
    lines, excluded = lists["missing_lines"], lists["excluded_lines"]
    arcs = [(a, b) for a, b in lists["missing_branches"]]
    values.setdefault("missing_lines", lines)
    values.setdefault("missing_branches", arcs)
    values.setdefault("excluded_lines", excluded)
    if s.facts == _ABSENT:
        facts = [line_fact(s.file, line) for line in lines]
        facts += [branch_fact(s.file, arc) for arc in arcs]
    else:
        facts = [Fact(f.check, f.field, f.expected, f.actual, f.message) for f in lists["facts"]]
    values.setdefault("facts", facts)
    values.setdefault(
        "history",
        [
            Event(e.at, e.action, e.verdict, e.by, e.note, e.reason, e.fingerprint)
            for e in lists["history"]
        ],
    )


__all__ = ["HeadViewS", "QuestViewS", "read"]
