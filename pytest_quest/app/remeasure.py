"""`next`'s facts as the tests are now: the function measured again when tests changed.

When a test file changed since the facts were recorded, `next` runs what a
submit would in the gate's child, measuring the quest's file only: no
mutant, no try, nothing recorded.  The result is cached by the test files'
and source's bytes; when nothing changed only the test files are stat'ed.
docs/agent-loop.md, "Facts are current".
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_quest.app.submit_checks import errors_where
from pytest_quest.core.model import Fact, Quest, Ratchet, State
from pytest_quest.core.states import facts_origin
from pytest_quest.engine import facts_cache
from pytest_quest.engine.testfiles import digest, find_test_files, kept_covering_tests
from pytest_quest.report.text import submit_command

if TYPE_CHECKING:
    from pytest_quest.app.context import Context
    from pytest_quest.core.run import RunReport
    from pytest_quest.engine.measure import MeasuredSource

#: The least time a measurement gets, in seconds: ten times the slowest seen on a
#: small suite, for one slower to collect.
BUDGET_FLOOR = 60.0
#: Times the quest's last judged run (steps 1-3 of its last submit, recorded as
#: ``last_run_seconds``) a measurement may take: the same selection plus what changed.
BUDGET_RUNS = 3.0


@dataclass
class Fresh:
    """What `next` shows of a quest's facts: the quest (measured again, or as recorded) and how."""

    quest: Quest
    how: str  # "scan", "submit" (as recorded) or "remeasured"
    at: str
    tests: int  # passing tests that ran the function in that measurement
    note: str = ""
    changed: list[str] = field(default_factory=list)  # test files changed since the facts

    def measured(self) -> dict[str, Any]:
        data: dict[str, Any] = {"at": self.at, "how": self.how, "tests": self.tests}
        if self.changed:
            data["changed_test_files"] = list(self.changed)
        return data


def current(ctx: Context, quest: Quest, ratchet: Ratchet, now: Callable[[], str]) -> Fresh:
    """The quest's facts as the tests are now: measured again only when a test file changed."""
    kind, at = facts_origin(quest, ratchet)
    recorded = Fresh(quest, kind, at, len(quest.covering_tests))
    if quest.state is not State.TODO:
        return recorded
    changed = changed_since(ctx, quest, ratchet, kind, at)
    if not changed:
        recorded.note = _unchanged_note(kind, at, quest, ctx.options.json)
        return recorded
    if ctx.measure is None:  # an in-process caller that runs no child
        recorded.note = _stale_note(kind, at)
        return recorded
    test_digests = _test_digests(ctx)
    scan_changed = sorted(
        name for name, value in test_digests.items() if ratchet.test_files.get(name) != value
    )
    selection = _selection(quest, scan_changed, test_digests, ctx.rootdir)
    if not selection:  # touched, not changed since the scan, and no covering test: as recorded
        recorded.note = _unchanged_note(kind, at, quest, ctx.options.json)
        return recorded
    key = _cache_key(ctx, quest, kind, at, test_digests)
    cached = facts_cache.load(ctx.store.journal_path, quest.id, key)
    if cached is None:
        measured = _measure(ctx, quest, ratchet, selection, now)
        if isinstance(measured, str):
            recorded.note = (
                f"from the {kind} of {at}; test files changed since then "
                f"({_files(changed)}), and measuring again failed: {measured}; "
                f"a submit measures again: {submit_command(quest.id, json=ctx.options.json)}"
            )
            recorded.changed = changed
            return recorded
        cached = measured
        facts_cache.save(ctx.store.journal_path, quest.id, key, cached)
    return _fresh(quest, cached, changed, kind, ctx.options.json)


def changed_since(ctx: Context, quest: Quest, ratchet: Ratchet, kind: str, at: str) -> list[str]:
    """Test files changed since the quest's facts were recorded (relative paths, sorted).

    Newer than the facts; for a scan's facts, only those whose bytes differ too (a
    checkout rewrites files unchanged).  A gone file that held a covering test counts.
    """
    since = _epoch(at)
    found: list[str] = []
    for path in find_test_files(ctx.tests):
        try:
            rel = Path(os.path.relpath(path, ctx.rootdir)).as_posix()
            if since is not None and path.stat().st_mtime < since:
                continue
            if kind == "scan" and ratchet.test_files.get(rel) == digest(path):
                continue
        except (OSError, ValueError):
            continue
        found.append(rel)
    for nodeid in quest.covering_tests:
        rel = nodeid.split("::")[0]
        gone = rel in ratchet.test_files and not (ctx.rootdir / rel).exists()
        if gone and rel not in found:
            found.append(rel)
    return sorted(found)


def _epoch(at: str) -> float | None:
    """A recorded time in seconds since the epoch; its second begun (the record drops the rest)."""
    try:
        when = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


def _test_digests(ctx: Context) -> dict[str, str]:
    from pytest_quest.engine.testfiles import digest_test_files

    return digest_test_files(ctx.tests, ctx.rootdir)


def _selection(
    quest: Quest, scan_changed: list[str], test_digests: dict[str, str], rootdir: Path
) -> list[str]:
    """What a submit of the quest runs: every test file changed since the scan, and the
    quest's covering tests in the files that did not change (app/submit.py)."""
    return list(scan_changed) + kept_covering_tests(
        quest.covering_tests, set(scan_changed), test_digests, rootdir
    )


def _cache_key(ctx: Context, quest: Quest, kind: str, at: str, test_digests: dict[str, str]) -> str:
    """What a measurement depends on: the quest, its facts' time, the test files, the source."""
    try:
        source = digest(ctx.rootdir / quest.file)
    except OSError:
        source = ""
    parts = {
        "quest": quest.id,
        "fingerprint": quest.fingerprint,
        "facts": [kind, at],
        "tests": sorted(test_digests.items()),
        "source": source,
        "sources": [str(s) for s in ctx.options.sources],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()[:32]


def budget(quest: Quest, timeout: float) -> float:
    """Seconds the measurement may take: three times the quest's last judged run, at least
    `BUDGET_FLOOR`, never more than the gate's own ``--quest-timeout``."""
    last = quest.last_run_seconds or 0.0
    return min(timeout, max(BUDGET_FLOOR, BUDGET_RUNS * last))


def _measure(
    ctx: Context, quest: Quest, ratchet: Ratchet, selection: list[str], now: Callable[[], str]
) -> dict[str, Any] | str:
    """The function measured by `selection` in the gate's child, as the cache keeps it;
    a string says why it could not be."""
    from pytest_quest.app.policy import remembered_sources
    from pytest_quest.core.gate import coverage_facts, failed_test_facts

    assert ctx.measure is not None
    options = remembered_sources(ctx.options, ratchet, ctx.rootdir)
    policy = options.policy if options.policy is not None else ratchet.policy
    options = dataclasses.replace(options, timeout=budget(quest, options.timeout), policy=policy)
    child = dataclasses.replace(ctx, options=options)
    run, source = ctx.measure(child, selection, quest)
    if run.collection_errors:
        # pytest ran nothing: the lines are not "still missing", the tests did not import.
        where = errors_where(run.collection_errors)
        return f"collection error ({where}): fix it and run `next` again"
    if not run.completed or source is None:
        return run.problem or run.tampered or "the run did not complete"
    function = source.by_id().get(quest.id)
    if function is None:
        return "the function was not measured (renamed, moved, or its file not imported)"
    facts = [*failed_test_facts(run), *coverage_facts(function)]
    return {
        "at": now(),
        "ran": len(run.outcomes),
        "missing_lines": list(function.missing_lines),
        "missing_branches": [list(arc) for arc in function.missing_branches],
        "covering_tests": sorted(function.covering_tests),
        "facts": [fact.to_dict() for fact in facts],
    }


def _fresh(
    quest: Quest, measured: dict[str, Any], changed: list[str], kind: str, json: bool
) -> Fresh:
    """The quest as measured again: its lines, branches and facts replaced; the gate's other
    facts of its last submit (a surviving mutant...) kept, for no mutant ran here."""
    kept = [f for f in quest.facts if not f.check.startswith(("coverage.", "test."))]
    facts = [Fact.from_dict(f) for f in measured["facts"]]
    shown = dataclasses.replace(
        quest,
        missing_lines=list(measured["missing_lines"]),
        missing_branches=[(int(a), int(b)) for a, b in measured["missing_branches"]],
        covering_tests=list(measured["covering_tests"]),
        facts=[*facts, *kept],
    )
    tests = len(shown.covering_tests)
    at = str(measured["at"])
    if shown.missing_lines or shown.missing_branches:
        said = "the lines and branches listed are still missing"
    else:
        said = (
            "every line and branch now runs: submit, and the gate judges (mutants, stability): "
            + submit_command(quest.id, json=json)
        )
    kept_note = f"; the {kind}'s other facts are kept (no mutant ran here)" if kept else ""
    note = (
        f"test files changed since the {kind} ({_files(changed)}): measured again at {at} "
        f"with the covering tests and every test file changed since the scan: {said}"
        f"{kept_note}; nothing recorded, no try spent"
    )
    return Fresh(shown, "remeasured", at, tests, note, changed)


def _files(names: list[str]) -> str:
    shown = ", ".join(names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _unchanged_note(kind: str, at: str, quest: Quest, json: bool) -> str:
    if kind == "scan" and not quest.facts:
        return (
            "the last scan found nothing missing: tests since then cover it; "
            f"submit, and the gate judges: {submit_command(quest.id, json=json)}"
        )
    return f"from the {kind} of {at}; no test file changed since: current"


def _stale_note(kind: str, at: str) -> str:
    return (
        f"from the {kind} of {at}: test files changed since then (not measured here; "
        "submit measures again)"
    )


def run_in_child(
    ctx: Context, selection: list[str], quest: Quest
) -> tuple[RunReport, MeasuredSource | None]:
    """Run `selection` as a submit does (app/submit.py `run_selection`), the ratchet file
    guarded as there.

    The tests run are the judged ones: they may not write the ratchet file (a write is
    undone and the measurement dropped) nor leave start-up files for the next judge.
    """
    from pytest_quest.core.run import RunReport
    from pytest_quest.engine.guard import VerdictGuard
    from pytest_quest.engine.runner import run_child
    from pytest_quest.engine.startup_files import startup_watch

    guard = VerdictGuard(ctx.store.path, quest.id, ctx.store)
    startup = startup_watch()
    try:
        os.environ.update(guard.judged_env())
        try:
            policy = ctx.options.policy
            run, source = run_child(
                selection,
                rootdir=ctx.rootdir,
                inifile=ctx.child.inifile,
                sources=list(ctx.options.sources),
                only_files=[quest.file],
                timeout=ctx.options.timeout,
                cwd=ctx.rootdir,
                plugin_args=ctx.child.plugin_args,
                subprocesses=policy.subprocesses if policy is not None else True,
            )
        finally:
            for name in guard.judged_env():
                os.environ.pop(name, None)
            planted = startup.restore() if startup is not None else []
        if guard.inspect():
            ctx.store.update(guard.repair, vet=guard.vet)
            problem = "a test wrote or tried to write the ratchet file (undone)"
            return RunReport(completed=False, problem=problem), None
        if planted:
            problem = f"a test left start-up files (put back): {planted[0]}"
            return RunReport(completed=False, problem=problem), None
        return run, source
    finally:
        guard.close()
