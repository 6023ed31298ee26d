"""The ratchet file: validated reads, locked read-modify-write, atomic writes.

Format: one JSON object with a ``schema`` version, quests keyed by id with
sorted keys and a fixed indentation, so a diff in review shows exactly which
quests changed.  Writes go to a temporary file in the same folder, are
fsynced, and renamed over the old file (then the folder is fsynced): a crash
at any instant leaves the old or the new file, never a half-written one.
Every change is made under a file lock (``quest.json.lock``), re-reading the
file after the lock is taken, so concurrent processes never lose an update;
a submit also claims its quest (``quest.json.judging.lock``) so two processes
never judge one quest at once.  The guarantees, every error message and the
tests that prove them: ``docs/reliability.md``.
"""

from __future__ import annotations

import errno
import glob
import hashlib
import io
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock, Timeout

from pytest_quest.core.errors import LockTimeoutError, QuestUsageError, RatchetFileError
from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State

SCHEMA_VERSION = 1
TMP_PREFIX = ".quest-tmp-"

T = TypeVar("T")


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
    if quest.extra:
        data["extra"] = quest.extra
    return data


def ratchet_to_dict(ratchet: Ratchet) -> dict[str, Any]:
    return {
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


def dumps(ratchet: Ratchet) -> str:
    # The same text as json.dumps(..., indent=2, sort_keys=True), streamed:
    # json.dumps keeps every chunk in a list before joining them, a peak of
    # ~8 MB per 1,000 quests (measured: scan's peak memory, docs/performance.md).
    buffer = io.StringIO()
    write = buffer.write
    for chunk in json.JSONEncoder(indent=2, sort_keys=True).iterencode(ratchet_to_dict(ratchet)):
        write(chunk)
    write("\n")
    return buffer.getvalue()


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
        if key not in obj:
            raise self.fail(f"{where}.{key}" if where else key, "missing field")
        value = obj[key]
        # bool is an int subclass; never accept one where a number is meant.
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.fail(f"{where}.{key}" if where else key, f"expected {_kind_name(kind)}")
        if not isinstance(value, kind):
            raise self.fail(
                f"{where}.{key}" if where else key,
                f"expected {_kind_name(kind)}, found {type(value).__name__}",
            )
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

    def known_keys(self, obj: dict[str, Any], allowed: frozenset[str], where: str) -> None:
        # A field this version does not know would be silently dropped by the
        # next write: refuse it instead (a typo, or a file from a newer tool).
        unknown = sorted(set(obj) - allowed)
        if unknown:
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

    def quest(self, qid: str, data: Any) -> Quest:
        where = f"quests[{qid!r}]"
        if not isinstance(data, dict):
            raise self.fail(where, "expected an object")
        self.known_keys(data, _QUEST_KEYS, where)
        state_text = self.get(data, "state", str, where)
        try:
            state = State(state_text)
        except ValueError:
            allowed = ", ".join(s.value for s in State)
            raise self.fail(f"{where}.state", f"unknown state {state_text!r} (allowed: {allowed})")
        lines = self.int_list(data, "lines", where)
        if len(lines) != 2 or lines[0] > lines[1] or lines[0] < 1:
            raise self.fail(f"{where}.lines", "expected [first, last] with 1 <= first <= last")
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
                )
            )
        tries = self.count(data, "tries", where)
        extra = data.get("extra", {})
        if not isinstance(extra, dict):
            raise self.fail(f"{where}.extra", f"expected an object, found {type(extra).__name__}")
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
            extra=dict(extra),
        )
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
        active = data.get("active")
        if active is not None and not isinstance(active, str):
            raise self.fail("active", "expected a quest id or null")
        quests = {qid: self.quest(qid, entry) for qid, entry in quests_raw.items()}
        if active is not None and active not in quests:
            raise self.fail("active", f"names {active!r}, which is not a quest")
        test_files = self.get(data, "test_files", dict, "")
        for name, digest in test_files.items():
            if not isinstance(digest, str):
                raise self.fail(f"test_files[{name!r}]", "expected a string")
        removed = self.get(data, "removed", list, "")
        for index, entry in enumerate(removed):
            if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
                raise self.fail(f"removed[{index}]", "expected an object of strings")
        return Ratchet(
            quests=quests,
            active=active,
            coverage_config=self.get(data, "coverage_config", dict, ""),
            test_files=dict(test_files),
            removed=list(removed),
            excluded_functions=self.str_list(data, "excluded_functions", ""),
            scanned_at=self.get(data, "scanned_at", str, ""),
        )


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        int: "an integer",
        bool: "a boolean",
    }
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


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
_RATCHET_KEYS = frozenset(ratchet_to_dict(Ratchet()))
_QUEST_KEYS = frozenset(
    quest_to_dict(Quest(id="", file="", qualname="", first=1, last=1, fingerprint=""))
) | {"extra"}
_FACT_KEYS = frozenset(Fact("", "", "", "", message="m").to_dict())
_EVENT_KEYS = frozenset(Event(at="", action="", verdict="v", by="b", note="n").to_dict())


def migrate(data: dict[str, Any], schema: int, validator: _Validator) -> dict[str, Any]:
    """Bring an older ratchet file's parsed JSON up to `SCHEMA_VERSION`, one version at a time.

    Each step of `MIGRATIONS` turns version ``n`` into ``n + 1``; a defect the
    step trips over is reported as a `RatchetFileError` naming the step.
    Migrating happens in memory: a read never rewrites the file, the next
    write (under the lock) stores the current version.
    """
    if schema < 1:
        raise validator.fail("schema", f"unknown version {schema} (versions start at 1)", _RESTORE)
    while schema < SCHEMA_VERSION:
        step = MIGRATIONS.get(schema)
        if step is None:
            raise validator.fail(
                "schema",
                f"version {schema} is older than this pytest-quest can read "
                f"(it reads {SCHEMA_VERSION})",
                _RESTORE,
            )
        try:
            migrated = step(dict(data))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise validator.fail(
                "schema",
                f"migrating from version {schema} to {schema + 1} failed: "
                f"{type(exc).__name__}: {exc}",
            ) from None
        if not isinstance(migrated, dict):
            raise validator.fail(
                "schema", f"migrating from version {schema} to {schema + 1} gave no JSON object"
            )
        data = migrated
        schema += 1
        data["schema"] = schema
    return data


#: Schema migrations: ``MIGRATIONS[n]`` turns the parsed JSON of a version
#: ``n`` file into version ``n + 1``.  Version 1 is the first released
#: version, so there is none yet; bumping `SCHEMA_VERSION` to 2 means
#: registering ``MIGRATIONS[1]``.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def loads(text: str | bytes, path: str = "quest.json") -> Ratchet:
    """Parse and validate the ratchet file's text; raise `RatchetFileError` on any defect."""
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
        data = json.loads(text, object_pairs_hook=_reject_duplicates)
    except _DuplicateKey as exc:
        raise RatchetFileError(
            path,
            f"duplicate key {exc.key!r}{_second_occurrence(text, exc.key)}: a quest id or a "
            "field appears twice in one object",
            "keep one of the two entries (restore it from version control if unsure)",
        ) from None
    except (ValueError, RecursionError) as exc:
        where = ""
        if isinstance(exc, json.JSONDecodeError):
            where = f" at line {exc.lineno} column {exc.colno}"
        raise RatchetFileError(path, f"not valid JSON{where}", _RESTORE) from None
    return _Validator(path).ratchet(data)


_RESTORE = "restore it from version control, or delete it and run `pytest --quest scan`"


def _second_occurrence(text: str, key: str) -> str:
    """`` at line N``: where `key` appears as an object key for the second time."""
    pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    matches = list(pattern.finditer(text))
    if len(matches) < 2:
        return ""
    return f" at line {text.count(chr(10), 0, matches[1].start()) + 1}"


# -- the file on disk ----------------------------------------------------------


class RatchetStore:
    """The ratchet file at `path`, with its lock at ``path + ".lock"``.

    `load` reads without the lock (a reader sees the old or the new file,
    thanks to the atomic rename); `update` takes the lock, re-reads, applies
    a change and writes atomically.  The lock is only held for that
    read-modify-write, never while tests run.
    """

    def __init__(self, path: Path, lock_timeout: float = 5.0) -> None:
        self.path = Path(path)
        self.lock_timeout = lock_timeout
        #: How many times this store replaced the file (a command can say
        #: whether it recorded anything before it was interrupted).
        self.writes = 0

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    @property
    def temp_prefix(self) -> str:
        """Prefix of this file's temporary files (per file: two ratchet files may share a folder)."""
        return f"{TMP_PREFIX}{self.path.name}-"

    def exists(self) -> bool:
        return self.path.exists()

    def load(self) -> Ratchet:
        """The current ratchet, or an empty one when the file does not exist yet."""
        raw = self._read_bytes()
        if raw is None:
            return Ratchet()
        return loads(raw, str(self.path))

    def update(self, change: Callable[[Ratchet], T]) -> T:
        """Apply `change` to the freshly re-read ratchet under the lock, then write it.

        `change` may raise to abort; nothing is written then.  The file is only
        rewritten when its serialized content actually changed.  A lock that
        cannot be taken within `lock_timeout` seconds raises `LockTimeoutError`
        naming the lock file; a file or folder that cannot be written raises
        `RatchetFileError`, and the old file stays as it was.
        """
        self._check_writable()
        lock = self._acquire_lock()
        try:
            before = self._read_bytes()
            ratchet = loads(before, str(self.path)) if before is not None else Ratchet()
            result = change(ratchet)
            if before is None and ratchet == Ratchet():
                # Nothing to record (say, the file was deleted under a `next`):
                # never create an empty ratchet file.
                return result
            after = dumps(ratchet).encode("utf-8")
            if after != before:
                self._write_atomic(after)
            return result
        finally:
            lock.release()

    def restore(self, data: bytes) -> None:
        """Put back an earlier, valid content of the file, under the lock and atomically.

        Used when something other than pytest-quest broke the file (a test
        under judgment writing it); `data` is validated first.
        """
        loads(data, str(self.path))
        self._check_writable()
        lock = self._acquire_lock()
        try:
            self._write_atomic(data)
        finally:
            lock.release()

    def _acquire_lock(self) -> FileLock:
        """The ratchet file's lock, taken; a clear error when it cannot be had in time."""
        lock = FileLock(str(self.lock_path), timeout=self.lock_timeout)
        try:
            lock.acquire()
        except Timeout:
            raise LockTimeoutError(
                f"{self.lock_path}: could not take the ratchet file's lock within "
                f"{self.lock_timeout:g}s; another process holds it (a running pytest-quest "
                "command). Retry when it is done, or raise --quest-lock-timeout"
            ) from None
        except OSError as exc:
            raise RatchetFileError(
                str(self.lock_path),
                f"the lock file cannot be created: {exc.strerror or exc}",
                "make the ratchet file's folder writable",
            ) from None
        return lock

    def _read_bytes(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise RatchetFileError(
                str(self.path), "is a folder, not a file", "point --quest-file at a file"
            ) from None
        except OSError as exc:
            raise RatchetFileError(
                str(self.path),
                f"cannot be read: {exc.strerror or exc}",
                "make it readable (chmod u+r)",
            ) from None

    def _check_writable(self) -> None:
        folder = self.path.parent
        if not folder.is_dir():
            raise RatchetFileError(
                str(self.path),
                f"its folder {folder} does not exist",
                "create the folder or point --quest-file elsewhere",
            )
        if self.path.exists():
            mode = self.path.stat().st_mode
            # The mode bit is checked even for root (who may write anyway):
            # a read-only ratchet file is a person's decision to respect.
            if not mode & stat.S_IWUSR or not os.access(self.path, os.W_OK):
                raise RatchetFileError(
                    str(self.path), "is read-only", "make it writable (chmod u+w) to record results"
                )

    def _write_atomic(self, data: bytes) -> None:
        """Replace the file with `data`: all of it or nothing, even on a crash.

        SQLite's discipline in small: write a temporary file in the same
        folder (a rename is only atomic within one file system), fsync it,
        rename it over the old file, then fsync the folder so the rename
        itself survives a power loss.
        """
        # Write through a symbolic link to its target, keeping the link.
        target = Path(os.path.realpath(self.path))
        folder = target.parent
        self.clean_stale_temp_files()
        try:
            fd, tmp_name = tempfile.mkstemp(prefix=self.temp_prefix, suffix=".json", dir=folder)
        except OSError as exc:
            raise RatchetFileError(
                str(self.path),
                f"cannot write a temporary file in {folder}: {exc.strerror or exc}",
                "make the folder writable",
            ) from None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if target.exists():
                os.chmod(tmp_name, stat.S_IMODE(target.stat().st_mode))
            else:
                os.chmod(tmp_name, 0o644)
            os.replace(tmp_name, target)
            self.writes += 1
        except BaseException as exc:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise RatchetFileError(
                    str(self.path),
                    f"could not be written: {exc.strerror or exc}; the old file is unchanged",
                    "free disk space or fix the folder's permissions, then run the command again",
                ) from None
            raise
        _fsync_folder(folder)

    @property
    def claims_path(self) -> Path:
        return self.path.with_name(self.path.name + ".judging.lock")

    def claim(self, quest_id: str) -> None:
        """Claim `quest_id` for judging until this process ends; refuse if another holds it.

        Two submits of one quest at once would both judge it from the same
        state; the claim makes the second one stop at once, with a message,
        and lets the first record its verdict knowing nobody else recorded
        one meanwhile.  The claim is a POSIX record lock on one byte (chosen
        by the quest id) of ``quest.json.judging.lock``: the kernel drops it
        when the process ends, even when it is killed, so it never goes
        stale.  Without ``fcntl`` (Windows) there is no claim; the
        read-modify-write of the verdict still refuses a quest whose state
        changed under it.
        """
        # The claim is made to record a verdict: say now, before the tests
        # run, when that cannot be written.
        self._check_writable()
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return
        key = os.path.realpath(self.claims_path)
        fd = _CLAIM_FDS.get(key)
        if fd is None:
            try:
                fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise RatchetFileError(
                    str(self.claims_path),
                    f"cannot be opened: {exc.strerror or exc}",
                    "make the ratchet file's folder writable",
                ) from None
            # Closing any descriptor of the file drops every record lock this
            # process holds on it: one descriptor per file, open for good.
            _CLAIM_FDS[key] = fd
        digest = hashlib.sha256(quest_id.encode("utf-8")).digest()
        offset = int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset, os.SEEK_SET)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN):
                return  # a file system without record locks: no claim, as on Windows
            raise QuestUsageError(
                f"quest {quest_id} is being judged by another process right now; "
                "wait for it to finish, then run `pytest --quest next`"
            ) from None

    def stale_temp_files(self) -> list[Path]:
        """Temporary files of this ratchet file that a killed writer left behind."""
        folder = Path(os.path.realpath(self.path)).parent
        return sorted(folder.glob(glob.escape(self.temp_prefix) + "*.json"))

    def clean_stale_temp_files(self) -> None:
        """Remove temporary files a killed writer left behind.

        Only called with the lock held: no live writer of this file has a
        temporary file then.  Readers never look at them.
        """
        for stale in self.stale_temp_files():
            try:
                stale.unlink()
            except OSError:
                pass


_CLAIM_FDS: dict[str, int] = {}


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
