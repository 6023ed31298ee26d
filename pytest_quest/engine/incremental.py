"""The run record of incremental scan and check: what the last full-fact run measured, per test.

One gzip'd JSON file beside the ratchet file's locks (``.quest/quest.json.run.gz``
by default, ``--quest-run-data PATH``): the environment's key, a digest of every project
file, the texts of the measured source files (to map old lines to new), and
per test its outcome, time and arcs in the code under test.  Identical arc
lists are stored once.  The selection rule is core/incremental.py's.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_quest.core.incremental import RecordedTest, arc_lines
from pytest_quest.engine.store_help import LOCK_FOLDER, lock_file, make_lock_folder

FORMAT = "pytest-quest run record"
NONE_RECORDED = "no previous run recorded"
VERSION = 1
# Folders never holding the project's own inputs: caches, environments, VCS data.
_SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "build", "dist"}

Arcs = list[tuple[int, int]]


@dataclass
class RunRecord:
    """One run's measurement, per test (outcome, seconds, arcs per source file)."""

    environment: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    test_files: list[str] = field(default_factory=list)
    outcomes: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    arcs: dict[str, dict[str, Arcs]] = field(default_factory=dict)
    children: set[str] = field(default_factory=set)

    def recorded_tests(self) -> dict[str, RecordedTest]:
        # A list of arcs read once is shared by every test that ran it (`load`): its lines too.
        lines: dict[int, tuple[Arcs, frozenset[int]]] = {}

        def lines_of(arcs: Arcs) -> frozenset[int]:
            found = lines.get(id(arcs))
            if found is None:
                found = lines[id(arcs)] = (arcs, arc_lines(arcs))
            return found[1]

        return {
            nodeid: RecordedTest(
                outcome=outcome,
                lines={path: lines_of(arcs) for path, arcs in self.arcs.get(nodeid, {}).items()},
                children=nodeid in self.children,
            )
            for nodeid, outcome in self.outcomes.items()
        }


def default_path(quest_file: Path) -> Path:
    """Beside the ratchet file's locks (``.quest/quest.json.run.gz``): hidden, and out of git."""
    return lock_file(quest_file, ".run.gz")


def to_body(record: RunRecord) -> dict[str, Any]:
    """`record` as the JSON object its file holds (the arc sets shared between tests)."""
    sets: dict[tuple[int, ...], int] = {}
    # Tests that kept their record share its lists of arcs: each list is flattened once.
    known: dict[int, tuple[Arcs, int]] = {}
    tests: dict[str, list[Any]] = {}
    for nodeid, outcome in record.outcomes.items():
        per_file = {}
        for file, arcs in record.arcs.get(nodeid, {}).items():
            found = known.get(id(arcs))
            if found is None:
                flat = tuple(n for arc in sorted(arcs) for n in arc)
                found = known[id(arcs)] = (arcs, sets.setdefault(flat, len(sets)))
            per_file[file] = found[1]
        tests[nodeid] = [
            outcome,
            round(record.seconds.get(nodeid, 0.0), 6),
            nodeid in record.children,
            per_file,
        ]
    return {
        "format": FORMAT,
        "version": VERSION,
        "environment": record.environment,
        "files": record.files,
        "sources": record.sources,
        "test_files": sorted(record.test_files),
        "tests": tests,
        "arcsets": [list(flat) for flat in sets],
    }


def save(path: Path, record: RunRecord) -> None:
    """Write `record` to `path` atomically (a reader sees the old file or the new one)."""
    body = to_body(record)
    data = gzip.compress(json.dumps(body, separators=(",", ":")).encode("utf-8"), 6, mtime=0)
    if path.parent.name == LOCK_FOLDER:
        make_lock_folder(path)  # with its .gitignore
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def load(path: Path) -> RunRecord | str:
    """The record at `path`, or why there is none to use (missing, unreadable, another format)."""
    try:
        body = json.loads(gzip.decompress(path.read_bytes()))
    except FileNotFoundError:
        return f"{NONE_RECORDED} at {path}"
    except (OSError, EOFError, ValueError) as exc:
        return f"the run record {path} is unreadable ({exc})"
    return from_body(body, str(path))


def from_body(body: Any, where: str) -> RunRecord | str:
    """The record `body` (a record file's JSON object) holds, or why it is none (`where`: its name)."""
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        return f"{where} is not a pytest-quest run record"
    if body.get("version") != VERSION:
        return f"the run record {where} has version {body.get('version')!r}, not {VERSION}"
    try:
        arcsets = [_pairs(flat) for flat in body["arcsets"]]
        record = RunRecord(
            environment={str(k): str(v) for k, v in body["environment"].items()},
            files={str(k): str(v) for k, v in body["files"].items()},
            sources={str(k): str(v) for k, v in body["sources"].items()},
            test_files=[str(f) for f in body["test_files"]],
        )
        for nodeid, (outcome, seconds, children, per_file) in body["tests"].items():
            record.outcomes[nodeid] = str(outcome)
            record.seconds[nodeid] = float(seconds)
            if children:
                record.children.add(nodeid)
            record.arcs[nodeid] = {str(f): arcsets[int(i)] for f, i in per_file.items()}
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        return f"the run record {where} is damaged ({type(exc).__name__}: {exc})"
    return record


def _pairs(flat: list[Any]) -> Arcs:
    """A flat list of line numbers as arcs (C-level: a record holds hundreds of thousands)."""
    if len(flat) % 2 or not set(map(type, flat)) <= {int}:
        raise ValueError(f"an arc list of {len(flat)} items, not pairs of line numbers")
    return list(zip(flat[::2], flat[1::2]))


def project_files(rootdir: Path, leave_out: Iterable[Path]) -> dict[str, str]:
    """Every file of the project under `rootdir` (path relative, forward slashes) -> its digest.

    Hidden folders (VCS, virtual environments, caches), ``__pycache__``, build
    output and coverage data files are left out, and so are `leave_out` (the
    ratchet file, the run record and their locks; a folder, with all it holds).
    """
    skipped = {os.path.realpath(p) for p in leave_out}
    skipped_dirs = {p for p in skipped if os.path.isdir(p)}
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(rootdir):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in _SKIP_DIRS
            and not d.endswith(".egg-info")
            and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
            and os.path.realpath(os.path.join(folder, d)) not in skipped_dirs
        )
        for name in files:
            if name.startswith(".coverage") and name != ".coveragerc":
                continue
            if name.endswith((".pyc", ".pyo")):
                continue
            full = os.path.join(folder, name)
            if os.path.realpath(full) in skipped or any(
                os.path.realpath(full).startswith(s + ".") for s in skipped
            ):
                continue
            try:
                # Not blocking: a named pipe's open would wait for a writer forever.
                fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK)
                with open(fd, "rb") as handle:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        continue  # a named pipe, a device: not an input
                    digest = hashlib.sha1(handle.read()).hexdigest()
            except OSError:
                continue  # a socket, a file gone meanwhile: not an input
            rel = os.path.relpath(full, rootdir).replace(os.sep, "/")
            found[rel] = digest
    return found


def environment(
    args: Iterable[str], sources: Iterable[str], extra: Mapping[str, str]
) -> dict[str, str]:
    """What, outside the project's files, shapes the run: a change to any reruns everything."""
    return {
        "python": sys.version.split()[0] + " " + sys.implementation.name,
        "platform": sys.platform,
        "executable": sys.executable,
        "installed packages": installed_packages(),
        "arguments": " ".join(args),
        "sources": " ".join(sorted(sources)),
        **extra,
    }


def installed_packages() -> str:
    """A digest of the distributions on ``sys.path`` (name and version), and of ``.pth`` files.

    Read from the folders' listings: ``importlib.metadata.distributions()``
    opens every package's metadata (0.1 s on a small environment).  A
    distribution's folder is named by its version (``name-1.2.dist-info``);
    an editable install's code is the project's, digested with its files.
    """
    names: list[str] = []
    for folder in sys.path:
        try:
            entries = os.listdir(folder or ".")
        except OSError:
            continue
        names += [
            f"{folder}/{entry}"
            for entry in entries
            if entry.endswith((".dist-info", ".egg-info", ".pth", ".egg-link"))
        ]
    return hashlib.sha1("\n".join(sorted(names)).encode()).hexdigest()
