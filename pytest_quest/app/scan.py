"""`pytest --quest scan`: merge what the suite measured into the ratchet file (new quests, PASS baseline)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_quest.app.context import Context, measured, now_utc
from pytest_quest.app.policy import ensure_policy
from pytest_quest.app.preflight import no_tests_ran
from pytest_quest.core.model import FunctionFacts, Ratchet, State
from pytest_quest.core.ratchet import ScanReport, merge_scan
from pytest_quest.core.seal import config_digest, seal_issued
from pytest_quest.engine.source import fingerprint_as, partial_branch_lines, read_source
from pytest_quest.engine.testfiles import digest_test_files, recorded_paths
from pytest_quest.report import text
from pytest_quest.report.json import Output


def scan(ctx: Context) -> Output:
    """Record every function of the measured source as a quest or a PASS baseline."""
    nothing = no_tests_ran(ctx)
    if nothing is not None:
        return nothing
    source = measured(ctx)
    test_files = digest_test_files(ctx.tests, ctx.rootdir)
    now = now_utc()

    notes: list[str] = []

    def change(ratchet: Ratchet) -> tuple[ScanReport, Ratchet]:
        existing = bool(ratchet.quests)  # a new file is created with its policy: nothing to say
        note = ensure_policy(ratchet, ctx.options, ctx.rootdir)
        if note and existing:
            notes.append(note)
        report = merge_scan(
            ratchet,
            source.functions,
            source.excluded_functions,
            source.config,
            test_files,
            now,
            returning_quests(ratchet, source.functions, source.excluded_functions, ctx.rootdir),
        )
        seal_config(ratchet, report.added + report.added_pass, source.config, ctx.rootdir)
        # The paths the scan was given (a scan of testpaths records none: as pytest's default).
        ratchet.test_paths = recorded_paths(ctx.tests, ctx.rootdir) if ctx.tests.given else []
        return report, ratchet

    # The ratchet just written, not a re-read of it: reading a 10,000-quest
    # file back costs 0.3 s and a second copy in memory (docs/performance.md).
    report, ratchet = ctx.store.update(change)
    not_passed = sorted(n for n, o in ctx.run.outcomes.items() if o != "passed")
    lines = [text.progress_line(ratchet), *notes]
    lines.append(
        f"scan: {text.counted(len(report.added), 'new quest')}, "
        f"{text.counted(len(report.added_pass), 'function')} "
        f"fully covered (PASS baseline), {len(report.removed)} removed"
    )
    lines += [f"  removed: {qid}" for qid in report.removed]
    if report.regressed:
        lines.append(
            f"  {text.counted(len(report.regressed), 'PASS function')} no longer fully covered "
            "(kept PASS; `pytest --quest check` fails on them):"
        )
        lines += [f"  regressed: {qid}" for qid in report.regressed]
    if report.config_changes:
        lines.append(
            "  coverage settings changed since the first scan: "
            + ", ".join(report.config_changes)
            + " (submits FAIL until they are restored)"
        )
    if not_passed:
        they = "it" if len(not_passed) == 1 else "they"
        lines.append(
            f"  {text.counted(len(not_passed), 'test')} did not pass; "
            f"what {they} executed does not count"
        )
    lines += [f"  left out: {note}" for note in source.notes]
    lines.append("next: pytest --quest next")
    return Output(
        {
            "added": report.added,
            "added_pass": report.added_pass,
            "removed": report.removed,
            "regressed": report.regressed,
            "config_changes": report.config_changes,
            "tests_not_passed": not_passed,
            "counts": ratchet.counts(),
            "remaining": ratchet.remaining,
        },
        lines,
    )


def returning_quests(
    ratchet: Ratchet, functions: list[FunctionFacts], excluded: list[str], rootdir: Path
) -> dict[str, str]:
    """New functions that are a quest not PASS, gone now or removed before, moved or renamed.

    Matched by fingerprint: the same (a move to another file), or the same
    under the quest's old name (a rename).  New id -> old id.
    """
    current = {facts.quest_id for facts in functions}
    gone = {
        quest.id: (quest.fingerprint, quest.qualname)
        for quest in ratchet.quests.values()
        if quest.id not in current and quest.id not in excluded and quest.state is not State.PASS
    }
    for record in ratchet.removed:
        qid, print_ = record.get("id", ""), record.get("fingerprint", "")
        if print_ and record.get("state") != State.PASS.value and qid not in current:
            gone.setdefault(qid, (print_, qid.split("::", 1)[-1].split("@", 1)[0]))
    found: dict[str, str] = {}
    new = [f for f in functions if f.quest_id not in ratchet.quests and f.statements]
    for facts in new:
        for old_id, (fingerprint, qualname) in gone.items():
            if old_id in found.values():
                continue
            name = qualname.rsplit(".", 1)[-1]
            if fingerprint in (
                facts.fingerprint,
                fingerprint_as(rootdir / facts.file, facts.start, name),
            ):
                found[facts.quest_id] = old_id
                break
    return found


def seal_config(ratchet: Ratchet, ids: list[str], config: dict[str, Any], rootdir: Path) -> None:
    """Seal into each newly issued quest the judge's copy of the configuration and policy.

    Also the lines coverage's partial-branch patterns match at issue, so a
    later ``# pragma: no branch`` is a new exclusion (gate step 2).  A PASS
    baseline records the policy it passed under.
    """
    digest = config_digest(config, ratchet.policy)
    patterns = partial_patterns(config)
    sources: dict[str, list[str]] = {}
    for qid in ids:
        quest = ratchet.quests[qid]
        quest.config_digest = digest
        if quest.file not in sources:
            sources[quest.file] = read_source(rootdir / quest.file).splitlines()
        lines = sources[quest.file]
        quest.partial_lines = [
            lines[line - 1].strip()
            for line, _ in partial_branch_lines(lines, quest.first, quest.last, patterns)
        ]
        if quest.state is State.PASS and ratchet.policy is not None:
            quest.passed_policy = ratchet.policy.compact()
        seal_issued(quest)


def partial_patterns(config: dict[str, Any]) -> list[str]:
    """coverage's partial-branch patterns (``partial_also`` is merged into ``partial_branches``)."""
    found: list[str] = []
    for key in ("report:partial_branches", "report:partial_branches_always"):
        found += [str(p) for p in config.get(key) or []]
    return found
