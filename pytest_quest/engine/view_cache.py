"""The status view of a ratchet file, kept in the user's cache so a second `status` reads no quest.

Every write through the store keeps the view `status` draws (core/view.py)
under the SHA-256 of the file's bytes, the ``active`` line left out so that
`next` keeps it (`active_line` checks that line alone).  Any mismatch is a
miss, and the command reads the whole file.  For showing only: no verdict
reads it.  docs/performance.md, "Reading only what a command needs";
what it does not prove: docs/reliability.md.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import msgspec

from pytest_quest.core.model import Ratchet
from pytest_quest.core.view import NextView, StatusView, recorded_at_scan
from pytest_quest.engine.store_help import save_cache

#: Bumped when what a view holds, or how it is drawn, changes.
FORMAT = 2
#: Views nobody wrote for this long are removed.
MAX_AGE = 7 * 24 * 3600

_ACTIVE = b'{\n"active": '
_TESTS = b'\n"tests": ['
_QUESTS = b'\n"quests": {\n'

# The folders whose modules decide what a view holds and says (the model, the rules that
# list a quest, the text, the readers): a view written by other code is a miss.
_RENDERERS = ("core", "report", "engine")


class _Saved(msgspec.Struct):
    format: int
    code: str
    digest: str
    root: str
    view: StatusView
    # `next`'s part (NextView), encoded apart: `status` does not decode it.
    more: bytes = b""


_DECODER = msgspec.msgpack.Decoder(_Saved)
_NEXT = msgspec.msgpack.Decoder(NextView)
_TABLE = msgspec.json.Decoder(list[str])


def _code_stamp() -> str:
    """The size and time of every module of `_RENDERERS` ("": they cannot be seen)."""
    package = Path(__file__).resolve().parent.parent
    parts = []
    try:
        for folder in _RENDERERS:
            with os.scandir(package / folder) as found:
                for entry in found:
                    if entry.name.endswith(".py"):
                        st = entry.stat()
                        parts.append(f"{folder}/{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        return ""
    return hashlib.sha256(",".join(sorted(parts)).encode()).hexdigest()


def digest(data: bytes) -> str:
    """SHA-256 of `data`, its ``active`` line (when it is the second line) left out."""
    hasher = hashlib.sha256()
    span = memoryview(data)
    if data.startswith(_ACTIVE):
        end = data.find(b"\n", len(_ACTIVE))
        if end < 0:
            hasher.update(span)
        else:
            hasher.update(span[:2])
            hasher.update(span[end + 1 :])
    else:
        hasher.update(span)
    return hasher.hexdigest()


def quests_start(data: bytes) -> int:
    """Where the quests begin (-1: not laid out as the writer writes a file)."""
    return data.find(_QUESTS)


def active_line(data: bytes, start: int = 0) -> tuple[bool, str | None]:
    """Whether the ``active`` line is as the writer writes it, and the id it names (None: none).

    The id must name a quest of the file (its line in the quests, which begin at `start`).
    """
    if not data.startswith(_ACTIVE):
        return True, None
    end = data.find(b"\n", len(_ACTIVE))
    if end < 0 or not data.startswith(b",", end - 1):
        return False, None
    try:
        active = json.loads(data[len(_ACTIVE) : end - 1])
    except ValueError:
        return False, None
    if not isinstance(active, str):
        return False, None
    encoded = json.JSONEncoder(sort_keys=True, allow_nan=False).encode(active).encode("ascii")
    if data[len(_ACTIVE) : end - 1] != encoded:
        return False, None
    if data.find(b"\n" + encoded + b": {", max(end, start)) < 0:
        return False, None
    return True, active


def one_file(data: bytes, quest_id: str, start: int) -> tuple[bytes, memoryview] | None:
    """`data` (a version-2 file as the writer lays it out, its quests from `start`) with only the
    quests of `quest_id`'s file, an empty tests table and no ``active`` line, and the table's
    text in `data`: what `codec.view` reads as it would read `data` whole.

    None when `quest_id` has no line of its own or the file is not laid out so.  Ids sort
    by path, so a file's quests are one run of lines.  The table is not copied (it can be
    tens of MB): the reader decodes it from `data` when used.
    """
    encode = json.JSONEncoder(sort_keys=True, allow_nan=False).encode
    tests = data.find(_TESTS)
    if not 0 < tests < start or not data.endswith(b"\n}\n}\n") or data[start - 2 : start] != b"],":
        return None
    head = data[: tests + 1]
    if head.startswith(_ACTIVE):
        head = b"{\n" + head[head.index(b"\n", len(_ACTIVE)) + 1 :]
    table = memoryview(data)[tests + len(_TESTS) - 1 : start - 1]
    key = b"\n" + encode(quest_id).encode("ascii") + b": {"
    at = data.find(key, start)
    if at < 0:
        return None
    end = data.find(b"\n", at + 1)
    try:
        record = json.loads(data[at + len(key) - 1 : end].rstrip(b","))
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("file"), str):
        return None
    prefix = b"\n" + encode(record["file"] + "::").encode("ascii")[:-1]
    first = data.find(prefix, start)
    if first < 0 or first > at:
        return None
    rows = []
    line = first
    body_end = len(data) - len(b"\n}\n}\n")
    while line < body_end and data.startswith(prefix, line):
        stop = data.find(b"\n", line + 1)
        rows.append(data[line + 1 : stop].rstrip(b","))
        line = stop
    text = head + b'"tests": [],\n"quests": {\n' + b",\n".join(rows) + b"\n}\n}\n"
    return text, table


def path_for(journal: Path) -> Path:
    """The view's file: beside the journals' folder, named as the ratchet file's journal."""
    return journal.parent.parent / "views" / (journal.stem + ".view")


def load(journal: Path, data: bytes, root: str) -> StatusView | None:
    """The view kept for exactly `data` (read with root `root`), or None."""
    saved = _saved(journal, data, root)
    return None if saved is None else saved.view


def load_next(journal: Path, data: bytes, root: str) -> tuple[StatusView, NextView] | None:
    """`load`, and `next`'s part of the view."""
    saved = _saved(journal, data, root)
    if saved is None:
        return None
    try:
        return saved.view, _NEXT.decode(saved.more)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _saved(journal: Path, data: bytes, root: str) -> _Saved | None:
    try:
        raw = path_for(journal).read_bytes()
        saved = _DECODER.decode(raw)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if saved.format != FORMAT or saved.root != root or saved.code != _code_stamp():
        return None
    if saved.digest != digest(data):
        return None
    return saved


def next_view(ratchet: Ratchet, data: bytes, *, recorded: bool) -> NextView | None:
    """`ratchet`'s NextView, its tests numbered as in `data`'s tests table (the file `ratchet`
    was read from or written as); None: `data` is not laid out as the writer writes it.

    `recorded`: whether to keep the tests the scan recorded (a writer, whose quests are all
    decoded); a command that only read the file leaves them to the `next` that needs them.
    """
    places = recorded_places(ratchet, data) if recorded else None
    if recorded and places is None:
        return None
    return NextView(queue=[q.id for q in ratchet.todo()], recorded=places)


def recorded_places(ratchet: Ratchet, data: bytes) -> list[int] | None:
    """The places in `data`'s tests table of the covering tests a scan recorded (every quest's
    but a PASS the gate gave); None: `data` is not the file `ratchet` was read from or written as.

    A quest the view reader left undecoded gives them as the file holds them: no name decoded.
    """
    found: set[int] = set()
    names: set[str] = set()
    for quest in ratchet.quests.values():
        if not recorded_at_scan(quest):
            continue
        kept = vars(quest)
        read = kept.get("_s")
        if read is not None and "covering_tests" not in kept:
            found.update(read.covering_tests)
        else:
            names.update(quest.covering_tests)
    if names:
        # One pass over the table (400,000 names: 0.1 s), not a place for every name.
        table = table_of(data)
        if table is None:
            return None
        places = [index for index, name in enumerate(table) if name in names]
        if len(places) != len(names):  # a covering test not in the table
            return None
        found.update(places)
    return sorted(found)


def table_of(data: bytes) -> list[str] | None:
    """The tests table of `data` as the writer lays it out (None: laid out otherwise)."""
    tests, start = data.find(_TESTS), quests_start(data)
    if not 0 < tests < start or data[start - 2 : start] != b"],":
        return None
    try:
        return _TABLE.decode(memoryview(data)[tests + len(_TESTS) - 1 : start - 1])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def save(journal: Path, data: bytes, root: str, view: StatusView, more: NextView | None) -> None:
    """Keep `view` and `more` as the view of `data` (`more` None: `next` reads the whole file);
    a view that cannot be written is no error."""
    target = path_for(journal)
    code = _code_stamp()
    if not code:
        return
    encoded = msgspec.msgpack.encode(
        _Saved(
            format=FORMAT,
            code=code,
            digest=digest(data),
            root=root,
            view=view,
            more=msgspec.msgpack.encode(more) if more is not None else b"",
        )
    )
    save_cache(target, encoded, MAX_AGE)
