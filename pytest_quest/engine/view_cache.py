"""The status view of a ratchet file, kept in the user's cache so a second `status` reads no quest.

Every write of the file through the store leaves, beside its journal, the view
`status` draws of what it wrote (core/view.py), under the SHA-256 of the
file's bytes.  `status` hashes the file it reads (0.05 s for 59 MB) and,
when a view of exactly those bytes is kept, draws it without decoding a
quest.  The ``active`` line (line 2, the one `next` rewrites alone) is left
out of the hash: a `next` keeps the view, and the line is checked on its own
(`active_line`).  Anything else (another file, a view of another version of
pytest-quest, a view that cannot be read or decoded) is a miss, and the
command reads the whole file as before.

The view is a copy of what a validated read or a write produced, for showing
only: no verdict and no other command reads it.  What it does not prove:
docs/reliability.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import msgspec

from pytest_quest.core.view import StatusView

#: Bumped when what a view holds, or how it is drawn, changes.
FORMAT = 1
#: Views nobody wrote for this long are removed.
MAX_AGE = 7 * 24 * 3600

_ACTIVE = b'{\n"active": '

# The modules that decide what a view's lines say: a view written by other code is a miss.
_RENDERERS = ("core/view.py", "core/model.py", "report/text.py", "report/escape.py")


class _Saved(msgspec.Struct):
    format: int
    code: str
    digest: str
    root: str
    view: StatusView


_DECODER = msgspec.msgpack.Decoder(_Saved)


def _code_stamp() -> str:
    package = Path(__file__).resolve().parent.parent
    parts = []
    for name in _RENDERERS:
        try:
            found = os.stat(package / name)
        except OSError:
            return ""
        parts.append(f"{found.st_size}:{found.st_mtime_ns}")
    return ",".join(parts)


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


def active_line(data: bytes) -> tuple[bool, str | None]:
    """Whether the ``active`` line is as the writer writes it, and the id it names (None: none).

    The id must name a quest of the file (its line in the quests).
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
    if data.find(b"\n" + encoded + b": {", end) < 0:
        return False, None
    return True, active


def path_for(journal: Path) -> Path:
    """The view's file: beside the journals' folder, named as the ratchet file's journal."""
    return journal.parent.parent / "views" / (journal.stem + ".view")


def load(journal: Path, data: bytes, root: str) -> StatusView | None:
    """The view kept for exactly `data` (read with root `root`), or None."""
    try:
        raw = path_for(journal).read_bytes()
        saved = _DECODER.decode(raw)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if saved.format != FORMAT or saved.root != root or saved.code != _code_stamp():
        return None
    if saved.digest != digest(data):
        return None
    return saved.view


def save(journal: Path, data: bytes, root: str, view: StatusView) -> None:
    """Keep `view` as the view of `data`; a view that cannot be written is no error."""
    target = path_for(journal)
    code = _code_stamp()
    if not code:
        return
    encoded = msgspec.msgpack.encode(
        _Saved(format=FORMAT, code=code, digest=digest(data), root=root, view=view)
    )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".tmp-", suffix=".view", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(encoded)
            os.replace(name, target)
        except BaseException:
            try:
                os.unlink(name)
            except OSError:
                pass
            raise
        _prune(target.parent)
    except OSError:
        return


def _prune(folder: Path) -> None:
    horizon = time.time() - MAX_AGE
    for old in folder.glob("*.view"):
        try:
            if old.stat().st_mtime < horizon:
                old.unlink()
        except OSError:
            continue


__all__ = ["FORMAT", "active_line", "digest", "load", "path_for", "save"]
