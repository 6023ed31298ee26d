"""`pytest --quest check`: the CI ratchet; every PASS quest re-measured, nothing written but an export."""

from __future__ import annotations

from pytest_quest.app.context import Context, load_ratchet, measured
from pytest_quest.app.export import export_target, where_written, write_export
from pytest_quest.app.policy import weaker_lines, weaker_passes
from pytest_quest.app.rejudge import load_base, rejudge
from pytest_quest.app.since import load_changes, not_pass, since_data, since_line
from pytest_quest.core.ratchet import check_ratchet
from pytest_quest.report import ci
from pytest_quest.report.json import Output


def check(ctx: Context) -> Output:
    """Fail (exit 1) on a regression of a PASS quest; annotations and summary under GitHub Actions."""
    ratchet = load_ratchet(ctx)
    # Read before any test result is used: a base that cannot be read is a usage error.
    base = load_base(ctx)
    changes = load_changes(ctx)
    export = export_target(ctx) if ctx.options.export_to else None
    errors = ctx.run.collection_errors
    in_actions = ci.in_github_actions(ctx.environ)
    stderr: list[str] = []
    if errors:
        outcome = ci.interrupted(errors, ratchet)
    else:
        source = measured(ctx)
        report = check_ratchet(ratchet, source.functions)
        outcome = ci.check_outcome(report, ratchet, ctx.options.strict, ctx.run.outcomes)
        rejudged = rejudge(ctx, base, ratchet, source) if base is not None else None
        ci.add_rejudge(outcome, rejudged)
        if changes is not None:
            regressed = {r.quest.id for r in report.regressions}
            failing = not_pass(changes, ratchet, regressed)
            ci.add_since(
                outcome,
                {
                    **since_data(changes, ratchet),
                    "require_pass": ctx.options.require_pass,
                    "not_pass": failing,
                },
                since_line(changes, ratchet),
            )
        if in_actions:
            commands = ci.workflow_annotations(report, ctx.options.strict)
            commands += ci.rejudge_annotations(rejudged)
            commands += ci.since_annotations(outcome.data.get("since"))
            # stdout carries one JSON object: workflow commands go to stderr,
            # which the Actions runner reads for them too.
            if ctx.options.json:
                stderr = commands
            else:
                outcome.lines += commands
    found = weaker_passes(ratchet)
    outcome.data["weaker_policy_passes"] = found
    outcome.lines += weaker_lines(found)
    summary = ctx.environ.get("GITHUB_STEP_SUMMARY")
    if in_actions and summary:
        problem = ci.append_step_summary(summary, ci.step_summary(outcome))
        if problem:
            outcome.lines.append(f"warning: {problem}")
    if export is not None and errors:
        # An empty list of regressions from a suite that did not run would lie.
        outcome.lines.append(f"report not written to {export[0]}: the suite did not run")
    elif export is not None:
        outcome.data["export"] = write_export(ctx, ratchet, export, outcome.data["regressions"])
        outcome.lines.append(f"report written to {where_written(ctx, outcome.data['export'])}")
    return Output(outcome.data, outcome.lines, outcome.exitcode, stderr)


__all__ = ["check"]
