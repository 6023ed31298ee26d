"""The ratchet file's version 2 layout: one quest per line, tests interned, no defaults written.

The layout and why: docs/performance.md, "Schema 2".  Everything here works
on the parsed JSON (dicts); ``engine/codec.py`` reads the file into its
Structs and quests.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_quest.core.model import arc_text

#: A quest field's value when the file leaves it out (version 2).
QUEST_DEFAULTS: dict[str, Any] = {
    "state": "TODO",
    "tries": 0,
    "statements": 0,
    "branches": 0,
    "missing_lines": [],
    "missing_branches": [],
    "excluded_lines": [],
    "covering_tests": [],
    "issued_at": "",
    "passed_at": "",
    "baseline": False,
    "history": [],
    "extra": {},
}

#: A top-level field's value when the file leaves it out (version 2).
TOP_DEFAULTS: dict[str, Any] = {
    "active": None,
    "scanned_at": "",
    "coverage_config": {},
    "test_files": {},
    "test_paths": [],
    "excluded_functions": [],
    "removed": [],
    "tests": [],
}

# The table is rebuilt once more than this share of it is unused.
UNUSED_SHARE = 0.25


def derived_facts(record: dict[str, Any]) -> list[dict[str, str]] | None:
    """The facts a scan writes for `record`'s missing lines and branches (None: not well-formed).

    The same text as ``core.model.line_fact``/``branch_fact``; computed on the
    parsed JSON, so anything of another shape gives None (kept as found).
    """
    file = record.get("file")
    lines = record.get("missing_lines", [])
    arcs = record.get("missing_branches", [])
    if type(file) is not str or type(lines) is not list or type(arcs) is not list:
        return None
    if not all(type(line) is int for line in lines):
        return None
    if not all(
        type(arc) is list and len(arc) == 2 and all(type(n) is int for n in arc) for arc in arcs
    ):
        return None
    facts = [
        {
            "check": "coverage.line",
            "field": f"{file}:{line}",
            "expected": "executed by a passing test",
            "actual": "never executed",
            "message": f"line {line} not covered",
        }
        for line in lines
    ]
    for arc in arcs:
        text = arc_text((arc[0], arc[1]))
        facts.append(
            {
                "check": "coverage.branch",
                "field": f"{file}:{text}",
                "expected": "branch taken by a passing test",
                "actual": "never taken",
                "message": f"branch {text} not taken",
            }
        )
    return facts


def compact_quest(record: dict[str, Any], index: dict[str, int]) -> dict[str, Any]:
    """A version-1 quest record (every field) as version 2 stores it.

    Covering tests that are all strings become indexes (`index` grows with
    names it did not have); anything of another shape is left as found, for
    the reader to refuse naming the field.
    """
    out: dict[str, Any] = {}
    for key, value in record.items():
        if (
            key in QUEST_DEFAULTS
            and value == QUEST_DEFAULTS[key]
            and type(value) is type(QUEST_DEFAULTS[key])
        ):
            continue
        if key == "facts":
            if value == derived_facts(record):
                continue
        elif (
            key == "covering_tests"
            and type(value) is list
            and all(type(name) is str for name in value)
        ):
            value = [index.setdefault(name, len(index)) for name in value]
        out[key] = value
    return out


def table_order(previous: list[str], used: dict[str, Any]) -> list[str]:
    """The ``tests`` table to write: `previous` in its order plus new names, or rebuilt sorted.

    `used` maps every name some quest covers to anything.  Names no quest
    uses stay in place (renumbering would rewrite every quest's line) until
    they are more than a quarter of the table.
    """
    kept = [name for name in previous if name in used]
    if previous and len(previous) - len(kept) <= UNUSED_SHARE * len(previous):
        known = set(previous)
        return previous + sorted(name for name in used if name not in known)
    return sorted(used)


def render(header: dict[str, Any], table: list[str], quests: dict[str, dict[str, Any]]) -> str:
    """The version-2 text: header fields, the tests table and the quests, one per line."""
    encode = json.JSONEncoder(sort_keys=True, allow_nan=False).encode
    parts = ["{\n"]
    for key in sorted(header):
        parts.append(f"{encode(key)}: {encode(header[key])},\n")
    parts.append('"tests": [')
    if table:
        parts.append("\n" + ",\n".join(encode(name) for name in table) + "\n")
    parts.append('],\n"quests": {')
    if quests:
        rows = ",\n".join(f"{encode(qid)}: {encode(quests[qid])}" for qid in sorted(quests))
        parts.append("\n" + rows + "\n")
    parts.append("}\n}\n")
    return "".join(parts)


# Any ``"active":`` at all (even inside a string): inserting one could make a second.
_ACTIVE_KEY = re.compile(rb'"active"\s*:')


def with_active(text: bytes, old: str | None, new: str | None) -> bytes | None:
    """`text` (a version-2 file whose ``active`` is `old`) with `new` active, by one line.

    `render` writes ``active`` first, so the line after ``{`` is replaced,
    removed (`new` None) or inserted (`old` None); the rest is kept byte for
    byte.  None when `text` is not laid out so: the caller rewrites the file.
    """
    if not text.startswith(b"{\n"):
        return None
    encode = json.JSONEncoder(sort_keys=True, allow_nan=False).encode
    if old is None:
        if _ACTIVE_KEY.search(text):
            return None
        head = b""
    else:
        head = f'"active": {encode(old)},\n'.encode()
        if not text.startswith(head, 2):
            return None
    line = f'"active": {encode(new)},\n'.encode() if new is not None else b""
    return b"{\n" + line + text[2 + len(head) :]


def migrate_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 file's parsed JSON as version 2 (the step of ``codec.MIGRATIONS``)."""
    quests = data.get("quests")
    if type(quests) is not dict:
        return data  # refused by the reader, naming `quests`
    index: dict[str, int] = {}
    # Sorted names first: a migrated table starts in order.
    for record in quests.values():
        tests = record.get("covering_tests") if type(record) is dict else None
        if type(tests) is list:
            for name in tests:
                if type(name) is str:
                    index.setdefault(name, 0)
    index = {name: position for position, name in enumerate(sorted(index))}
    migrated = {
        qid: compact_quest(record, index) if type(record) is dict else record
        for qid, record in quests.items()
    }
    out = {key: value for key, value in data.items() if key != "quests"}
    out["tests"] = list(index)
    out["quests"] = migrated
    return out
