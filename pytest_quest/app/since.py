"""``--quest-since REF``: next, status, check and export limited to the functions changed since REF.

Which functions changed is engine/changes.py's answer.  ``check
--quest-require-pass`` fails when a changed function is not PASS.  The ratchet
check itself is never narrowed: a change can regress a function it does not
touch (a test deleted).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from pytest_quest.app.context import Context
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Fact, Ratchet, State
from pytest_quest.core.runtime_code import BUILT, LAMBDA, PARTIAL
from pytest_quest.core.words import counted

if TYPE_CHECKING:
    from pytest_quest.engine.changes import Changes
    from pytest_quest.engine.measure import MeasuredSource

# engine.base and engine.changes (git) are imported when a ref is in force: `status` and
# `next` without one do not pay for them at start-up.


def since_ref(ctx: Context) -> str | None:
    """The ref to compare with: ``--quest-since``, else (require-pass only) the pull request's base."""
    options = ctx.options
    if options.since or not options.require_pass:
        return options.since
    from pytest_quest.engine.base import default_ref

    ref = default_ref(ctx.environ, ctx.rootdir)
    if ref is None:
        raise QuestUsageError(
            "--quest-require-pass needs --quest-since REF (the branch the change goes into, "
            "for example origin/main); only in GitHub Actions on a pull request is its base "
            "the default"
        )
    return ref


def load_changes(ctx: Context) -> Changes | None:
    """The functions changed since the ref in force, or None without one."""
    ref = since_ref(ctx)
    if ref is None:
        return None
    from pytest_quest.engine.changes import changed_since

    return changed_since(ref, ctx.rootdir, ctx.options.sources)


def narrowed(ratchet: Ratchet, changes: Changes | None) -> Ratchet:
    """A view of `ratchet` holding only the quests of changed functions (the file is untouched)."""
    if changes is None:
        return ratchet
    quests = {qid: quest for qid, quest in ratchet.quests.items() if qid in changes.changed}
    active = ratchet.active if ratchet.active in quests else None
    return dataclasses.replace(ratchet, quests=quests, active=active)


def untracked(changes: Changes, ratchet: Ratchet) -> list[str]:
    """Changed functions that have no quest yet (a scan adds them)."""
    return sorted(qid for qid in changes.changed if qid not in ratchet.quests)


def since_data(changes: Changes, ratchet: Ratchet) -> dict[str, Any]:
    """The ``since`` object of the JSON output."""
    return {
        **changes.to_dict(),
        "new": sorted(changes.new),
        "untracked": untracked(changes, ratchet),
    }


def since_line(changes: Changes, ratchet: Ratchet) -> str:
    missing = untracked(changes, ratchet)
    note = (
        f"; {len(missing)} not in the ratchet file (`pytest --quest scan` adds them)"
        if missing
        else ""
    )
    return (
        f"since {changes.ref} ({changes.commit[:12]}): "
        f"{counted(len(changes.changed), 'function')} changed{note}"
    )


def not_pass(changes: Changes, ratchet: Ratchet, regressed: set[str]) -> list[dict[str, Any]]:
    """Every changed function that is not PASS (or is a PASS that regressed), one fact each."""
    found: list[dict[str, Any]] = []
    for qid, info in sorted(changes.changed.items()):
        quest = ratchet.quests.get(qid)
        state = quest.state.value if quest is not None else "untracked"
        where = f"{info.file}:{info.first}"
        if quest is None:
            actual = "not in the ratchet file: run `pytest --quest scan` and commit quest.json"
        elif quest.state is State.PASS and qid in regressed:
            actual = "PASS, but regressed (see its regression facts)"
        elif quest.state is State.PASS:
            continue
        elif quest.state is State.TODO:
            gaps = len(quest.missing_lines) + len(quest.missing_branches)
            actual = (
                f"TODO ({counted(gaps, 'line or branch', 'lines and branches')} not covered, "
                f"{counted(quest.tries, 'try', 'tries')}): "
                f"`pytest --quest next --quest-id {qid}`"
            )
            if quest.fingerprint and quest.fingerprint != info.fingerprint:
                # Gate step 1 holds a quest to the code it was issued for (docs/gate.md).
                actual += (
                    "; it was issued for the code before this change, so a submit is REVIEW "
                    "(identity.changed) until a person re-issues it with --quest-reopen"
                )
        else:
            actual = f"{quest.state.value}: a person settles it (docs/ci.md#person-actions)"
        what = "new" if qid in changes.new else "changed"
        fact = Fact(
            check="since.require_pass",
            field=where,
            expected=f"PASS ({what} since {changes.ref})",
            actual=actual,
            message=f"{info.qualname} {what} since {changes.ref} is not PASS: {actual}",
        )
        found.append(
            {
                "id": qid,
                "file": info.file,
                "qualname": info.qualname,
                "lines": [info.first, info.last],
                "state": state,
                "new": qid in changes.new,
                "facts": [fact.to_dict()],
            }
        )
    return found


def changed_lines(
    changes: Changes, source: MeasuredSource
) -> tuple[list[dict[str, Any]], list[str]]:
    """The changed lines no quest and no run vouches for, one item per file; and notes.

    A changed line inside a ``def`` is its function's (`not_pass`).  Any other
    changed executable line must have run (a lambda's body, by a passing test).
    Code built at run time is never measured: a fact each; a
    ``functools.partial`` calls a measured function: a note.
    """
    items: list[dict[str, Any]] = []
    notes: list[str] = []
    spans: dict[str, list[tuple[int, int]]] = {}
    for function in source.functions:
        spans.setdefault(function.file, []).append((function.first, function.last))
    for info in changes.changed.values():
        spans.setdefault(info.file, []).append((info.first, info.last))
    # Never the ratchet's recorded spans: a function moved since its scan would
    # cover module-level lines added above it.
    for rel, lines in sorted(changes.lines.items()):
        runtime = changes.runtime.get(rel, {})
        statements = source.statements.get(rel)
        measured = statements is not None
        if statements is None:  # no test imported the file: its statements as parsed
            statements = changes.statements.get(rel, frozenset())
        tested = source.tested_lines.get(rel, frozenset())
        ran = source.ran_lines.get(rel, frozenset())
        facts: list[Fact] = []
        for line in sorted(lines):
            kind, what = runtime.get(line, ("", ""))
            in_def = any(first <= line <= last for first, last in spans.get(rel, ()))
            executable = line in statements or bool(kind)
            if not executable or (in_def and kind != BUILT):
                continue
            where = f"{rel}:{line}"
            if kind == PARTIAL:
                notes.append(f"{where}: {what}: the function it calls is judged by its own quest")
                continue
            if kind == BUILT:
                actual = f"{what}: coverage.py never measures it; write it as a def"
            elif kind == LAMBDA and line not in tested:
                actual = f"{what}, not called by any passing test"
            elif not measured:
                actual = "in a file no test imports"
            elif not kind and line not in ran:
                actual = "never executed"
            else:
                continue
            facts.append(
                Fact(
                    check="since.changed_line",
                    field=where,
                    expected=f"changed since {changes.ref}: run by a passing test",
                    actual=actual,
                    message=f"changed line not covered: {actual}",
                )
            )
        if not measured and facts:
            facts = facts[:1]  # the whole file is unmeasured: one fact says it
        if facts:
            numbers = [int(f.field.rpartition(":")[2]) for f in facts]
            items.append(
                {
                    "id": rel,
                    "file": rel,
                    "qualname": "(changed lines outside any def)",
                    "lines": [min(numbers), max(numbers)],
                    "state": "not covered",
                    "new": False,
                    "facts": [fact.to_dict() for fact in facts],
                }
            )
    return items, notes
