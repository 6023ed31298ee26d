"""Which functions of the code under test changed since a git ref (``--quest-since REF``).

A function changed when its fingerprint (engine/source.py) differs from the
ref's or it is new; a moved function does not count.  Compared against the
merge base, as ``git diff REF...`` does, plus uncommitted and untracked files.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.runtime_code import runtime_lines, statement_lines
from pytest_quest.engine.base import commit_of, git, refuse_option, show_at, toplevel
from pytest_quest.engine.source import FunctionInfo, source_functions

OPTION = "--quest-since"


@dataclass(frozen=True)
class Changes:
    """The functions changed since `ref`: ids (rootdir-relative, as quests name them) to functions."""

    ref: str
    commit: str  # the merge base compared against
    changed: dict[str, FunctionInfo] = field(default_factory=dict)
    new: frozenset[str] = frozenset()  # ids of functions absent at the ref
    # Per source file (relative to the rootdir), the lines added or changed since the ref,
    # and what each line holds that no quest covers (core/runtime_code.py): the
    # changed-lines rule of ``--quest-require-pass`` (app/since.py).
    lines: dict[str, frozenset[int]] = field(default_factory=dict)
    runtime: dict[str, dict[int, tuple[str, str]]] = field(default_factory=dict)
    # Per source file, the lines a statement starts on (for a file no test imported).
    statements: dict[str, frozenset[int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"ref": self.ref, "commit": self.commit, "changed": sorted(self.changed)}


def compare(
    now: list[FunctionInfo], before: list[FunctionInfo], moved_from: set[tuple[str, str]]
) -> tuple[list[FunctionInfo], set[str]]:
    """The functions of `now` that changed against `before` (the same file at the ref).

    Functions are matched by qualified name and ordinal (a renamed file keeps
    them).  `moved_from` holds (qualname, fingerprint) of every function at
    the ref in the files the change touched: a function found there unchanged
    was moved, not written.  Returns the changed functions and the ids of the
    new ones.
    """
    old = {(info.qualname, info.ordinal): info.fingerprint for info in before}
    old_names = {(info.qualname, info.fingerprint) for info in before}
    changed: list[FunctionInfo] = []
    new: set[str] = set()
    for info in now:
        if not info.lines:
            continue  # nothing to measure: never a quest
        if old.get((info.qualname, info.ordinal)) == info.fingerprint:
            continue
        if (info.qualname, info.fingerprint) in old_names | moved_from:
            continue  # moved (a twin reordered, or from another file)
        changed.append(info)
        if (info.qualname, info.ordinal) not in old:
            new.add(info.quest_id)
    return changed, new


def changed_since(ref: str, rootdir: Path, sources: Iterable[Path]) -> Changes:
    """The functions under `sources` whose code changed since `ref` (see the module docstring)."""
    refuse_option(ref, OPTION)  # git would read it as an option
    top = toplevel(rootdir, OPTION)
    commit = commit_of(ref, rootdir, OPTION)
    merged = git(["merge-base", commit, "HEAD"], top, OPTION)
    if merged.returncode == 0 and merged.stdout.strip():
        commit = merged.stdout.decode().strip()
    roots = [Path(s).resolve() for s in sources]
    # Only the sources: an untracked virtualenv in the project is never listed.
    pathspecs = [root.relative_to(top).as_posix() or "." for root in roots if _under(root, [top])]
    if not pathspecs:
        return Changes(ref=ref, commit=commit)
    renamed_from, touched_before = _diff(commit, top, pathspecs)
    root = rootdir.resolve()
    parsed: dict[str, list[FunctionInfo]] = {}

    def at_ref(path: str) -> list[FunctionInfo]:
        """The functions of `path` at the commit, read and parsed once."""
        if path not in parsed:
            parsed[path] = _functions(show_at(commit, path, top, OPTION), path)
        return parsed[path]

    moved_from: set[tuple[str, str]] = set()
    for touched in touched_before:
        if touched.endswith(".py"):
            moved_from |= {(info.qualname, info.fingerprint) for info in at_ref(touched)}
    changes: dict[str, FunctionInfo] = {}
    new: set[str] = set()
    hunks = _changed_lines(commit, top, pathspecs)
    lines: dict[str, frozenset[int]] = {}
    runtime: dict[str, dict[int, tuple[str, str]]] = {}
    statements: dict[str, frozenset[int]] = {}
    for path, old_path in sorted(renamed_from.items()):
        absolute = top / path
        if absolute.suffix != ".py" or not _under(absolute, roots) or not absolute.is_file():
            continue
        try:
            rel = absolute.relative_to(root).as_posix()
        except ValueError:
            continue  # a source outside the rootdir is named as scan names it: skipped here
        data = absolute.read_bytes()
        now = _functions(data, rel)
        before = at_ref(old_path) if old_path else []
        found, fresh = compare(now, before, moved_from)
        changes.update((info.quest_id, info) for info in found)
        new |= fresh
        text = data.decode("utf-8", errors="replace")
        # A new (or untracked) file is changed throughout; git names no hunk of an untracked one.
        in_hunks = hunks.get(path, set()) if old_path else None
        lines[rel] = frozenset(in_hunks if in_hunks is not None else range(1, text.count("\n") + 2))
        runtime[rel] = runtime_lines(text)
        statements[rel] = statement_lines(text)
    return Changes(
        ref=ref,
        commit=commit,
        changed=changes,
        new=frozenset(new),
        lines=lines,
        runtime=runtime,
        statements=statements,
    )


_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _changed_lines(commit: str, top: Path, pathspecs: list[str]) -> dict[str, set[int]]:
    """Per file (path now, relative to the work tree's top), the lines added or changed."""
    out = git(
        [
            "diff",
            "-U0",
            "-M",
            "--no-ext-diff",
            "--no-color",
            "--no-prefix",
            commit,
            "--",
            *pathspecs,
        ],
        top,
        OPTION,
    )
    if out.returncode != 0:
        message = out.stderr.decode(errors="replace").strip()
        raise QuestUsageError(f"{OPTION}: git diff against {commit[:12]} failed: {message}")
    found: dict[str, set[int]] = {}
    current: set[int] | None = None
    for row in out.stdout.split(b"\n"):
        if row.startswith(b"+++ "):
            name = row[4:].decode(errors="surrogateescape")
            current = None if name == "/dev/null" else found.setdefault(_unquoted(name), set())
        elif row.startswith(b"@@ ") and current is not None:
            match = _HUNK.match(row)
            if match:
                start, count = int(match.group(1)), int(match.group(2) or b"1")
                current.update(range(start, start + count))
    return found


def _unquoted(name: str) -> str:
    """A path as git's diff header writes it, unquoted (git quotes names with odd bytes)."""
    if len(name) >= 2 and name[0] == name[-1] == '"':
        raw = codecs.escape_decode(name[1:-1].encode("utf-8", errors="surrogateescape"))[0]
        return raw.decode("utf-8", errors="surrogateescape")
    return name


def _diff(commit: str, top: Path, pathspecs: list[str]) -> tuple[dict[str, str | None], list[str]]:
    """Files changed since `commit` (path now -> path at the commit, None: new) and old paths touched."""
    out = git(
        [
            "diff",
            "--name-status",
            "-z",
            "-M",
            "--no-ext-diff",
            "--no-color",
            commit,
            "--",
            *pathspecs,
        ],
        top,
        OPTION,
    )
    if out.returncode != 0:
        message = out.stderr.decode(errors="replace").strip()
        raise QuestUsageError(f"{OPTION}: git diff against {commit[:12]} failed: {message}")
    fields = out.stdout.decode(errors="surrogateescape").split("\0")
    now: dict[str, str | None] = {}
    touched: list[str] = []
    index = 0
    while index < len(fields) and fields[index]:
        status = fields[index]
        if status[0] in "RC":
            old, new = fields[index + 1], fields[index + 2]
            index += 3
            now[new] = old
            if status[0] == "R":
                touched.append(old)
            continue
        path = fields[index + 1]
        index += 2
        if status[0] == "D":
            touched.append(path)
        elif status[0] == "A":
            now[path] = None
        else:  # M, T: the same path before and now
            now[path] = path
            touched.append(path)
    untracked = git(
        ["ls-files", "--others", "--exclude-standard", "-z", "--", *pathspecs], top, OPTION
    )
    for path in untracked.stdout.decode(errors="surrogateescape").split("\0"):
        if path:
            now.setdefault(path, None)
    return now, touched


def _functions(data: bytes | None, rel: str) -> list[FunctionInfo]:
    if data is None:
        return []
    try:
        return source_functions(rel, data.decode("utf-8", errors="replace"))
    except QuestUsageError:
        return []  # does not parse: every function of the other side counts as changed


def _under(path: Path, roots: list[Path]) -> bool:
    resolved = path.resolve()
    return any(resolved == root or root in resolved.parents for root in roots)
