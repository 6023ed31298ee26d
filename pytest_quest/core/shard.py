"""Shards: one CI job's measured part of a scan or check, and their pure merge (docs/ci.md).

A shard (``--quest-shard-out DIR``) is the job's coverage data file and a
manifest of everything else the gate needs.  `read_manifest` validates one;
`merge` checks that shards fit together and merges them as one run of the
whole suite.  Standard library only: the I/O is engine/shard.py.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.grammar import file_problem
from pytest_quest.core.run import FAILED, CollectionError, failed_tests, passed_tests

SHARD_FORMAT = "pytest-quest-shard/2"
KINDS = ("scan", "check")
MANIFEST = "manifest.json"
DATA = "coverage.db"
OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error")

_REMAKE = "make it again with `pytest --quest {kind} --quest-shard-out DIR`"


@dataclass
class Shard:
    """One shard's manifest; `where` names it in messages (the folder as given)."""

    kind: str
    sources: list[str]
    measured_roots: list[str]
    config: dict[str, Any]
    environment: dict[str, str]
    outcomes: dict[str, str]
    data_digest: str
    errors: dict[str, str] = field(default_factory=dict)
    collection_errors: list[CollectionError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Files the data names, relative to the rootdir -> "sha256:..." of their bytes.
    source_digests: dict[str, str] = field(default_factory=dict)
    # The files to analyze (pytest-cov's data may hold more than the sources), or None: all.
    only_files: list[str] | None = None
    # The tree the job ran in: its commit ("" outside git) and every test file
    # of the project (relative to the rootdir -> digest), not only the job's part.
    commit: str = ""
    test_digests: dict[str, str] = field(default_factory=dict)
    where: str = ""


@dataclass
class MergedRun:
    """What the shards' runs add up to: the run one scan of the whole suite would have made."""

    kind: str
    outcomes: dict[str, str]
    errors: dict[str, str]
    collection_errors: list[CollectionError]
    notes: list[str]
    measured_roots: list[str]
    only_files: list[str] | None
    # file -> (digest, the first shard naming it)
    source_digests: dict[str, tuple[str, str]]

    @property
    def passed(self) -> set[str]:
        return passed_tests(self.outcomes)

    @property
    def failed(self) -> set[str]:
        return failed_tests(self.outcomes)


def digest_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _canonical(manifest: Mapping[str, Any]) -> bytes:
    body = {key: value for key, value in manifest.items() if key != "digest"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def manifest_of(shard: Shard) -> dict[str, Any]:
    """The manifest's JSON value for `shard`, sealed with the digest of its own content."""
    manifest: dict[str, Any] = {
        "format": SHARD_FORMAT,
        "kind": shard.kind,
        "sources": list(shard.sources),
        "measured_roots": list(shard.measured_roots),
        "config": shard.config,
        "environment": dict(shard.environment),
        "outcomes": dict(sorted(shard.outcomes.items())),
        "errors": dict(sorted(shard.errors.items())),
        "collection_errors": [
            {"file": e.file, "line": e.line, "message": e.message} for e in shard.collection_errors
        ],
        "notes": list(shard.notes),
        "source_digests": dict(sorted(shard.source_digests.items())),
        "only_files": None if shard.only_files is None else sorted(shard.only_files),
        "commit": shard.commit,
        "test_digests": dict(sorted(shard.test_digests.items())),
        "data": {"file": DATA, "digest": shard.data_digest},
    }
    manifest["digest"] = digest_bytes(_canonical(manifest))
    return manifest


class _Fields:
    """Reads one manifest's fields, each problem an error naming the shard and the field."""

    def __init__(self, data: Mapping[str, Any], where: str, kind: str) -> None:
        self.data = data
        self.where = where
        self.kind = kind

    def fail(self, name: str, problem: str) -> QuestUsageError:
        return QuestUsageError(
            f"shard {self.where}: {MANIFEST} field {name}: {problem} "
            f"(hand-edited, damaged or not a shard; {_REMAKE.format(kind=self.kind)})"
        )

    def get(self, name: str, kind: type | tuple[type, ...]) -> Any:
        if name not in self.data:
            raise self.fail(name, "missing")
        value = self.data[name]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise self.fail(name, f"expected {_kind_name(kind)}, found {type(value).__name__}")
        return value

    def texts(self, name: str) -> list[str]:
        value = self.get(name, list)
        if not all(isinstance(item, str) for item in value):
            raise self.fail(name, "expected a list of strings")
        return list(value)

    def text_map(self, name: str, values: Iterable[str] | None = None) -> dict[str, str]:
        value = self.get(name, dict)
        allowed = set(values) if values is not None else None
        for key, item in value.items():
            if not isinstance(item, str):
                raise self.fail(
                    f"{name}[{key!r}]", f"expected a string, found {type(item).__name__}"
                )
            if allowed is not None and item not in allowed:
                raise self.fail(f"{name}[{key!r}]", f"unknown value {item!r}")
        return dict(value)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {dict: "an object", list: "a list", str: "a string", int: "a number"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def read_manifest(data: Any, where: str) -> Shard:
    """The shard a manifest's parsed JSON describes; a usage error naming the shard and field.

    The manifest's own digest is checked first: a truncated or hand-edited
    manifest is refused before any of its fields is trusted.
    """
    if not isinstance(data, dict):
        raise QuestUsageError(f"shard {where}: {MANIFEST} is not a JSON object (not a shard)")
    kind = data.get("kind") if data.get("kind") in KINDS else "scan"
    fields = _Fields(data, where, str(kind))
    found = fields.get("format", str)
    if found != SHARD_FORMAT:
        raise fields.fail(
            "format", f"{found!r} is not {SHARD_FORMAT!r} (made by another pytest-quest version)"
        )
    sealed = fields.get("digest", str)
    if sealed != digest_bytes(_canonical(data)):
        raise QuestUsageError(
            f"shard {where}: {MANIFEST} does not match its digest (hand-edited or damaged); "
            + _REMAKE.format(kind=kind)
        )
    if fields.get("kind", str) not in KINDS:
        raise fields.fail("kind", f"{data['kind']!r} is neither scan nor check")
    stored = fields.get("data", dict)
    if stored.get("file") != DATA or not isinstance(stored.get("digest"), str):
        raise fields.fail("data", f"expected {{'file': {DATA!r}, 'digest': ...}}")
    errors = []
    for index, item in enumerate(fields.get("collection_errors", list)):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("file"), str)
            and isinstance(item.get("line"), int)
            and isinstance(item.get("message"), str)
        ):
            raise fields.fail(f"collection_errors[{index}]", "expected file, line and message")
        errors.append(CollectionError(item["file"], item["line"], item["message"]))
    digests = fields.text_map("source_digests")
    for name in digests:
        problem = file_problem(name)
        if problem:
            raise fields.fail(f"source_digests[{name!r}]", problem)
    tests = fields.text_map("test_digests")
    for name in tests:
        problem = file_problem(name)
        if problem:
            raise fields.fail(f"test_digests[{name!r}]", problem)
    only = data.get("only_files")
    return Shard(
        kind=str(data["kind"]),
        sources=fields.texts("sources"),
        measured_roots=fields.texts("measured_roots"),
        config=dict(fields.get("config", dict)),
        environment=fields.text_map("environment"),
        outcomes=fields.text_map("outcomes", OUTCOMES),
        data_digest=str(stored["digest"]),
        errors=fields.text_map("errors"),
        collection_errors=errors,
        notes=fields.texts("notes"),
        source_digests=digests,
        only_files=None if only is None else fields.texts("only_files"),
        commit=fields.get("commit", str),
        test_digests=tests,
        where=where,
    )


def _first_difference(mine: Mapping[str, Any], theirs: Mapping[str, Any]) -> str:
    for key in sorted(set(mine) | set(theirs)):
        if mine.get(key) != theirs.get(key):
            return f"{key} is {theirs.get(key)!r} there, {mine.get(key)!r} here"
    return ""


def check_fits(
    shard: Shard,
    *,
    kind: str,
    config: Mapping[str, Any],
    sources: list[str],
    environment: Mapping[str, str],
    rootdir_hint: str = "",
) -> None:
    """A usage error naming `shard` and what is wrong, unless it fits this combine.

    `kind` is the first shard's; `config`, `sources` and `environment` are
    this combining process's own (its coverage settings, its sources relative
    to its rootdir, its Python and coverage.py): a shard measured otherwise
    cannot be merged as if one run had measured it.
    """
    where = f"shard {shard.where}"
    if shard.kind != kind:
        raise QuestUsageError(
            f"{where} is a {shard.kind} shard, the first one a {kind} shard: "
            "combine shards of one kind (all made by scan, or all by check)"
        )
    difference = _first_difference(dict(environment), shard.environment)
    if difference:
        raise QuestUsageError(
            f"{where} was made in another environment ({difference}): line numbers and arcs "
            "differ across Python and coverage.py versions; make every shard and run the "
            "combine with the same versions"
        )
    if sorted(shard.sources) != sorted(sources):
        raise QuestUsageError(
            f"{where} measured the sources {sorted(shard.sources)}, this combine "
            f"{sorted(sources)}: give the same --quest-source (or quest_source) everywhere"
            + rootdir_hint
        )
    difference = _first_difference(dict(config), shard.config)
    if difference:
        raise QuestUsageError(
            f"{where} was measured with other coverage settings ({difference}): "
            "use one coverage configuration for every shard and the combine" + rootdir_hint
        )


def _file_difference(
    there: Mapping[str, str], here: Mapping[str, str], named: tuple[str, str]
) -> str:
    """The first file whose digest differs between two sets of test files, said in words."""
    for name in sorted(set(there) | set(here)):
        before, now = there.get(name), here.get(name)
        if before == now:
            continue
        if now is None:
            return f"{name} is in {named[0]}, not in {named[1]}"
        if before is None:
            return f"{name} is in {named[1]}, not in {named[0]}"
        return f"{name} differs between {named[0]} and {named[1]}"
    return ""


def check_same_tree(shards: list[Shard], *, commit: str, tests: Mapping[str, str]) -> None:
    """A usage error naming the difference unless every shard describes this checkout.

    The shards must have been made at one commit with the same test files, and
    those must be this checkout's (`commit`, "" outside git; `tests`: its test
    files' digests), or a deleted or changed test would count.
    """
    first = shards[0]
    for shard in shards[1:]:
        if shard.commit != first.commit:
            raise QuestUsageError(
                f"shards {first.where} and {shard.where} were made at different commits "
                f"({first.commit[:12] or 'outside git'} and {shard.commit[:12] or 'outside git'}): "
                "make every shard from the same commit"
            )
        difference = _file_difference(
            first.test_digests, shard.test_digests, (f"shard {first.where}", f"shard {shard.where}")
        )
        if difference:
            raise QuestUsageError(
                f"shards {first.where} and {shard.where} were made with different test files "
                f"({difference}): make every shard from the same tree"
            )
    if first.commit != commit:
        raise QuestUsageError(
            f"shard {first.where} was made at commit {first.commit[:12] or '(outside git)'}, "
            f"this checkout is at {commit[:12] or '(outside git)'}: run the combine in a "
            "checkout of the commit the shards were made from"
        )
    difference = _file_difference(
        first.test_digests, tests, (f"shard {first.where}", "this checkout")
    )
    if difference:
        raise QuestUsageError(
            f"shard {first.where} was made with other test files than this checkout's "
            f"({difference}): what a deleted or changed test covered would count; make the "
            "shards again from this tree"
        )


def check_tests_present(shards: list[Shard], present: Collection[str]) -> None:
    """A usage error naming a test a shard ran whose file is not in this checkout.

    `present`: the files (relative to the rootdir) of the shards' node ids that
    exist here.  A shard whose manifest was re-sealed with this checkout's test
    digests still names the tests it ran: one from a deleted file cannot count.
    """
    for shard in shards:
        for nodeid in sorted(shard.outcomes):
            path = nodeid.split("::")[0]
            if path not in present:
                raise QuestUsageError(
                    f"shard {shard.where} ran {nodeid}, whose file {path} is not in this "
                    "checkout: make the shards again from this tree"
                )


def merge(shards: list[Shard]) -> MergedRun:
    """The run of the whole suite the shards' runs add up to (shards already checked to fit).

    A test that passed in one shard and failed in another is refused: its arcs
    are already in that shard's passing union.  Otherwise a test run in several
    shards keeps its worst outcome.  Shards that saw different contents of one
    source file are refused.
    """
    seen: dict[str, list[tuple[str, str]]] = {}
    errors: dict[str, str] = {}
    collection_errors: list[CollectionError] = []
    notes: list[str] = []
    roots: list[str] = []
    digests: dict[str, tuple[str, str]] = {}
    only: set[str] | None = None
    for shard in shards:
        for nodeid, outcome in shard.outcomes.items():
            seen.setdefault(nodeid, []).append((outcome, shard.where))
        for nodeid, text in shard.errors.items():
            errors.setdefault(nodeid, text)
        collection_errors += [e for e in shard.collection_errors if e not in collection_errors]
        notes += [note for note in shard.notes if note not in notes]
        roots += [root for root in shard.measured_roots if root not in roots]
        for name, digest in shard.source_digests.items():
            known = digests.setdefault(name, (digest, shard.where))
            if known[0] != digest:
                raise QuestUsageError(
                    f"shards {known[1]} and {shard.where} measured different contents of "
                    f"{name}: make every shard from the same commit"
                )
        if shard.only_files is not None:
            only = (only or set()) | set(shard.only_files)
    if only is not None:
        # A shard that analyzed every file it measured: its files count too.
        for shard in shards:
            if shard.only_files is None:
                only |= set(shard.source_digests)
    outcomes = {}
    for nodeid, found in seen.items():
        passed_in = next((where for outcome, where in found if outcome == "passed"), None)
        failing = next(((o, where) for o, where in found if o in FAILED), None)
        if passed_in is not None and failing is not None:
            raise QuestUsageError(
                f"test {nodeid} passed in shard {passed_in} and {failing[0]} in shard "
                f"{failing[1]}: a test that fails anywhere must not count, and its arcs "
                "cannot be taken out of a shard; run each test in one shard only "
                "(disjoint parts of the suite), or make the shards again"
            )
        outcomes[nodeid] = (
            failing[0] if failing else "passed" if passed_in is not None else found[0][0]
        )
    return MergedRun(
        kind=shards[0].kind if shards else "scan",
        outcomes=dict(sorted(outcomes.items())),
        errors=errors,
        collection_errors=collection_errors,
        notes=notes,
        measured_roots=roots,
        only_files=None if only is None else sorted(only),
        source_digests=digests,
    )


def changed_sources(merged: MergedRun, current: Mapping[str, str | None]) -> None:
    """A usage error when a file the shards measured differs here (`current`: file -> digest)."""
    for name, (digest, where) in sorted(merged.source_digests.items()):
        now = current.get(name)
        if now != digest:
            state = "is missing here" if now is None else "has other contents here"
            raise QuestUsageError(
                f"shard {where} measured {name}, which {state}: run the combine in a checkout "
                "of the commit the shards were made from"
            )
