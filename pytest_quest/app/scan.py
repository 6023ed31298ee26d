"""`pytest --quest scan`: merge what the suite measured into the ratchet file (new quests, PASS baseline)."""

from __future__ import annotations

from pytest_quest.app.context import Context, measured, now_utc
from pytest_quest.core.model import Ratchet
from pytest_quest.core.ratchet import ScanReport, merge_scan
from pytest_quest.engine.testfiles import digest_test_files
from pytest_quest.report import text
from pytest_quest.report.json import Output


def scan(ctx: Context) -> Output:
    """Record every function of the measured source as a quest or a PASS baseline."""
    source = measured(ctx)
    test_files = digest_test_files(ctx.tests, ctx.rootdir)
    now = now_utc()

    def change(ratchet: Ratchet) -> tuple[ScanReport, Ratchet]:
        report = merge_scan(
            ratchet,
            source.functions,
            source.excluded_functions,
            source.config,
            test_files,
            now,
        )
        return report, ratchet

    # The ratchet just written, not a re-read of it: reading a 10,000-quest
    # file back costs 0.3 s and a second copy in memory (docs/performance.md).
    report, ratchet = ctx.store.update(change)
    not_passed = sorted(n for n, o in ctx.run.outcomes.items() if o != "passed")
    lines = [text.progress_line(ratchet)]
    lines.append(
        f"scan: {len(report.added)} new quests, {len(report.added_pass)} functions "
        f"fully covered (PASS baseline), {len(report.removed)} removed"
    )
    lines += [f"  removed: {qid}" for qid in report.removed]
    if report.config_changes:
        lines.append(
            "  coverage settings changed since the first scan: "
            + ", ".join(report.config_changes)
            + " (submits FAIL until they are restored)"
        )
    if not_passed:
        lines.append(f"  {len(not_passed)} tests did not pass; what they executed does not count")
    lines.append("next: pytest --quest next")
    return Output(
        {
            "added": report.added,
            "added_pass": report.added_pass,
            "removed": report.removed,
            "config_changes": report.config_changes,
            "tests_not_passed": not_passed,
            "counts": ratchet.counts(),
            "remaining": ratchet.remaining,
        },
        lines,
    )


__all__ = ["scan"]
