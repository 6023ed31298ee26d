"""Writing the ratchet file back touching only what changed (quests read for writing).

A quest read by `codec.loads` from a file in the writer's form keeps its Struct, the `Origin` it was read
from and a copy of its fields as read.  `render` writes every quest that is
still as read as the bytes it was read from, re-encodes the others as
``layout.render`` does, and gives the very bytes read when nothing changed:
a verdict rewrites one line, a no-op update writes nothing.
"""

from __future__ import annotations

from typing import Any

from pytest_quest.core.model import Quest, Ratchet
from pytest_quest.engine import layout
from pytest_quest.engine.codec import _ENCODE, Origin, QuestS

# A quest id of a file read for writing is encoded so by the writer too
# (`codec._canonical` proved the file's own bytes are this encoding's).
_KEY = _ENCODE.encode


def render(ratchet: Ratchet, header: dict[str, Any], record: Any, encode: Any) -> bytes | None:
    """The version-2 bytes of `ratchet`, the quests left as read written as the bytes read.

    `record(quest, index)` and `encode` make a changed quest's line as
    ``layout.render`` does.  None when `ratchet` was not read for
    writing from a file in the writer's form, or the tests table is renumbered: the caller renders
    everything.  Nothing changed at all: the very bytes read.
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
    # `layout.table_order`, counted on the indexes: the table as read is kept (and new
    # names appended) while at most a quarter of it is unused; else it is rebuilt.
    if len(kept) == len(pristine):
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
        return None  # rebuilt sorted: every quest's indexes change
    table = names + sorted(new_names)
    raws = origin.raw()
    index = position
    if new_names:
        index = {**position, **{name: len(names) + n for n, name in enumerate(sorted(new_names))}}
    rows = [
        _KEY(qid) + b": " + raws[qid]
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


__all__ = ["render"]
