"""Pure operations on a :class:`Ratchet`: merging a scan, checking for regressions.

No I/O: callers apply the result under the ratchet file's lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pytest_quest.core.gate import coverage_facts
from pytest_quest.core.model import Fact, FunctionFacts, Quest, Ratchet, State
from pytest_quest.core.seal import seal_issued, seal_pass
from pytest_quest.core.states import keep_gate_facts


@dataclass
class ScanReport:
    added: list[str] = field(default_factory=list)
    added_pass: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    config_changes: list[str] = field(default_factory=list)
    # PASS functions this scan measured as no longer fully covered: named, not
    # changed (`pytest --quest check` is the gate that fails on them).
    regressed: list[str] = field(default_factory=list)


def new_quest(facts: FunctionFacts, now: str) -> Quest:
    """A quest for a function seen for the first time; fully covered ones are PASS."""
    covered = facts.fully_covered
    return Quest(
        id=facts.quest_id,
        file=facts.file,
        qualname=facts.qualname,
        first=facts.first,
        last=facts.last,
        fingerprint=facts.fingerprint,
        state=State.PASS if covered else State.TODO,
        statements=facts.statements,
        branches=facts.branches,
        missing_lines=list(facts.missing_lines),
        missing_branches=list(facts.missing_branches),
        excluded_lines=list(facts.excluded_lines),
        covering_tests=list(facts.covering_tests),
        facts=[] if covered else coverage_facts(facts),
        issued_at=now,
        passed_at=now if covered else "",
        baseline=covered,
    )


def returned_quest(ratchet: Ratchet, old_id: str, facts: FunctionFacts, now: str) -> Quest:
    """The quest `old_id` (live, or its last ``removed`` record) for its code now at `facts`."""
    old = ratchet.quests.get(old_id)
    if old is None:
        record = next((r for r in reversed(ratchet.removed) if r.get("id") == old_id), {})
        quest = new_quest(facts, now)
        state = State(record.get("state", "TODO"))
        quest.state = state if state is not State.PASS else State.TODO
        quest.tries = int(record.get("tries", "0") or 0)
        quest.passed_at, quest.baseline = "", False
        quest.facts = coverage_facts(facts)
    else:
        shift = facts.first - old.first
        quest = replace(
            old,
            id=facts.quest_id,
            file=facts.file,
            qualname=facts.qualname,
            first=facts.first,
            last=facts.last,
            fingerprint=facts.fingerprint,
            excluded_lines=[line + shift for line in old.excluded_lines],
        )
        if quest.state is State.TODO:
            quest.missing_lines = list(facts.missing_lines)
            quest.missing_branches = list(facts.missing_branches)
            quest.covering_tests = list(facts.covering_tests)
            quest.facts = coverage_facts(facts)
    seal_issued(quest)
    return quest


def _merge_function(
    ratchet: Ratchet,
    facts: FunctionFacts,
    now: str,
    returning: dict[str, str],
    moved: dict[str, str],
    report: ScanReport,
) -> None:
    """One measured function into the ratchet: a returning quest, a new one, or an update."""
    qid = facts.quest_id
    quest = ratchet.quests.get(qid)
    if quest is None:
        if facts.statements == 0:
            return
        if qid in returning:
            ratchet.quests[qid] = returned_quest(ratchet, returning[qid], facts, now)
            moved[returning[qid]] = qid
            report.added.append(qid)
            return
        quest = new_quest(facts, now)
        seal_issued(quest)
        if quest.state is State.PASS:
            seal_pass(quest, "scan")
        ratchet.quests[qid] = quest
        (report.added_pass if quest.state is State.PASS else report.added).append(qid)
        return
    # Exclusions are compared by offset from `first` (gate step 2, check):
    # they move with the function, or a move would look like a new pragma.
    shift = facts.first - quest.first
    quest.excluded_lines = [line + shift for line in quest.excluded_lines]
    quest.first, quest.last = facts.first, facts.last
    if quest.state is State.TODO:
        quest.missing_lines = list(facts.missing_lines)
        quest.missing_branches = list(facts.missing_branches)
        quest.covering_tests = list(facts.covering_tests)
        if facts.statements:
            fresh = coverage_facts(facts)
            keep_gate_facts(quest, ratchet, fresh)
            quest.facts = fresh
    elif quest.state is State.PASS and not facts.fully_covered:
        report.regressed.append(qid)


def _record_removed(
    ratchet: Ratchet,
    seen: set[str],
    excluded: set[str],
    moved: dict[str, str],
    now: str,
    report: ScanReport,
) -> None:
    """Quests whose function the scan did not find move to ``removed``, visibly."""
    for qid in sorted(set(ratchet.quests) - seen):
        if qid in excluded:
            continue
        quest = ratchet.quests.pop(qid)
        note = f"moved or renamed to {moved[qid]}" if qid in moved else "function not found by scan"
        entry = {"id": qid, "state": quest.state.value, "at": now, "note": note}
        if quest.state is not State.PASS:
            entry.update(fingerprint=quest.fingerprint, tries=str(quest.tries))
        ratchet.removed.append(entry)
        report.removed.append(qid)


def merge_scan(
    ratchet: Ratchet,
    functions: list[FunctionFacts],
    excluded_functions: list[str],
    config: dict[str, object],
    test_files: dict[str, str],
    now: str,
    returning: dict[str, str] | None = None,
) -> ScanReport:
    """Merge what a scan measured into `ratchet`, in place.

    New functions become quests (PASS when fully covered: their baseline).
    Existing quests keep their state and baseline: a rescan never PASSes a
    TODO quest nor touches a PASS record.  TODO quests get the current
    missing lines and position; gone functions move to ``removed``.

    `returning` maps a new function's id to a non-PASS quest with the same
    code (moved or renamed): it keeps that quest's state and tries, and never
    enters as a PASS baseline, which would PASS it without the gate.
    """
    report = ScanReport()
    seen: set[str] = set()
    moved: dict[str, str] = {}
    for facts in functions:
        _merge_function(ratchet, facts, now, returning or {}, moved, report)
        seen.add(facts.quest_id)
    _record_removed(ratchet, seen, set(excluded_functions), moved, now, report)
    if ratchet.active is not None and (
        ratchet.active not in ratchet.quests or ratchet.quests[ratchet.active].state.terminal
    ):
        ratchet.active = None
    if not ratchet.coverage_config:
        ratchet.coverage_config = dict(config)
    else:
        for key in sorted(set(ratchet.coverage_config) | set(config)):
            if ratchet.coverage_config.get(key) != config.get(key):
                report.config_changes.append(key)
    ratchet.excluded_functions = sorted(set(excluded_functions))
    ratchet.test_files = dict(test_files)
    ratchet.scanned_at = now
    return report


@dataclass
class Regression:
    quest: Quest
    facts: list[Fact]
    changed: bool = False


@dataclass
class CheckReport:
    regressions: list[Regression] = field(default_factory=list)
    untracked: list[str] = field(default_factory=list)
    # PASS functions whose body changed since they passed but are still fully
    # covered: not a regression, but a reviewer should know.
    changed: list[str] = field(default_factory=list)
    checked: int = 0


def since(quest: Quest) -> str:
    """When a PASS quest passed, in words for a fact."""
    return f"PASS since {quest.passed_at}" if quest.passed_at else "PASS (no date recorded)"


def name_regression(quest: Quest, fact: Fact) -> Fact:
    """`fact` with the quest id and its PASS date, so each fact stands on its own in CI logs."""
    return replace(fact, message=f"{fact.message or fact.actual} [{quest.id}, {since(quest)}]")


def _gone(quest: Quest) -> Regression:
    """A PASS function the current code no longer has."""
    return Regression(
        quest,
        [
            Fact(
                check="ratchet.gone",
                field=f"{quest.file}:{quest.first}",
                expected=f"PASS function {quest.qualname} ({since(quest)})",
                actual="not found in the current code",
                message=(
                    f"PASS function {quest.qualname} is gone [{quest.id}, "
                    f"{since(quest)}]; if it was removed on purpose, run "
                    "`pytest --quest scan` to record the removal in the ratchet file"
                ),
            )
        ],
    )


def _newly_excluded(quest: Quest, facts: FunctionFacts) -> list[int]:
    """The excluded lines of `facts` that the PASS did not have.

    An exclusion is the same when its line keeps its distance from the
    function's first line or from its last one: an edit above it (a shorter
    docstring) or below it moves only one of the two.  More excluded lines
    than at PASS always names the ones not at their old distance from the top.
    """
    from_first = {line - quest.first for line in quest.excluded_lines}
    from_last = {quest.last - line for line in quest.excluded_lines}
    found = [
        line
        for line in facts.excluded_lines
        if line - facts.first not in from_first and facts.last - line not in from_last
    ]
    if not found and len(facts.excluded_lines) > len(quest.excluded_lines):
        found = [line for line in facts.excluded_lines if line - facts.first not in from_first]
    return found


def _held_facts(quest: Quest, facts: FunctionFacts) -> list[Fact]:
    """What a PASS function misses now: coverage, new exclusions, its statements."""
    missing = coverage_facts(facts)
    newly_excluded = _newly_excluded(quest, facts)
    missing += [
        Fact(
            check="ratchet.excluded",
            field=f"{facts.file}:{line}",
            expected="no coverage exclusion added after PASS",
            actual="excluded from coverage",
            message=f"line {line} newly excluded from coverage",
        )
        for line in newly_excluded
    ]
    if facts.statements == 0 and not newly_excluded:
        missing.append(
            Fact(
                check="ratchet.empty",
                field=f"{facts.file}:{facts.first}",
                expected="measurable statements",
                actual="none left",
                message="the function has no measurable statement any more",
            )
        )
    return missing


def check_ratchet(ratchet: Ratchet, functions: list[FunctionFacts]) -> CheckReport:
    """Re-measure every PASS quest against `functions`; nothing is written.

    A PASS function must still be fully covered by passing tests, whatever
    its record says.  A changed body is still held to full coverage (and the
    report says it changed); a vanished function is a regression until a
    rescan records its removal.  Measured functions without a quest are
    listed as untracked.
    """
    current = {facts.quest_id: facts for facts in functions}
    report = CheckReport()
    for quest in ratchet.ordered():
        if quest.state is not State.PASS:
            continue
        report.checked += 1
        facts = current.get(quest.id)
        if facts is None:
            report.regressions.append(_gone(quest))
            continue
        changed = facts.fingerprint != quest.fingerprint
        missing = _held_facts(quest, facts)
        if changed and not missing:
            report.changed.append(quest.id)
        if missing:
            if changed:
                missing.append(
                    Fact(
                        check="ratchet.changed",
                        field=f"{facts.file}:{facts.first}",
                        expected=f"code as at PASS ({quest.fingerprint})",
                        actual=f"changed ({facts.fingerprint})",
                        message=f"function {quest.qualname} changed since it passed",
                    )
                )
            report.regressions.append(
                Regression(quest, [name_regression(quest, fact) for fact in missing], changed)
            )
    tracked = set(ratchet.quests)
    report.untracked = sorted(
        facts.quest_id
        for facts in functions
        if facts.quest_id not in tracked and facts.statements > 0
    )
    return report
