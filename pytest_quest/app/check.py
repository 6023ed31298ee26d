"""`pytest --quest check`: the CI ratchet; every PASS quest re-measured, nothing written but an export."""

from __future__ import annotations

from pytest_quest.app.context import Context, load_ratchet, measured
from pytest_quest.app.export import export_target, where_written, write_export
from pytest_quest.app.preflight import check_inputs, no_tests_ran
from pytest_quest.app.rejudge import rejudge
from pytest_quest.app.since import changed_lines, not_pass, since_data, since_line
from pytest_quest.core.ratchet import check_ratchet
from pytest_quest.core.seal import forged_passes
from pytest_quest.core.view import weaker_passes
from pytest_quest.engine import outputs
from pytest_quest.report import ci
from pytest_quest.report.escape import in_github_actions
from pytest_quest.report.json import Output
from pytest_quest.report.text import weaker_lines


def check(ctx: Context) -> Output:
    """Fail (exit 1) on a regression of a PASS quest; annotations and summary under GitHub Actions."""
    # Read before the tests ran (plugin/session.py), or now (combine): a ratchet file,
    # base or ref that cannot be read is a usage error before any result is used.
    inputs = ctx.run.inputs or check_inputs(ctx)
    ratchet = inputs.ratchet or load_ratchet(ctx)
    base, changes = inputs.base, inputs.changes
    nothing = no_tests_ran(ctx)
    if nothing is not None:
        return nothing
    export = export_target(ctx) if ctx.options.export_to else None
    errors = ctx.run.collection_errors
    in_actions = in_github_actions(ctx.environ)
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
            lines, notes = changed_lines(changes, source)
            failing = not_pass(changes, ratchet, regressed) + lines
            ci.add_since(
                outcome,
                {
                    **since_data(changes, ratchet),
                    "require_pass": ctx.options.require_pass,
                    "not_pass": failing,
                },
                since_line(changes, ratchet),
            )
            outcome.data["since"]["notes"] = notes
            outcome.lines[-1:-1] = [f"  note: {note}" for note in notes]
        add_forged(outcome, forged_passes(ratchet))
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
        problem = outputs.append_step_summary(summary, ci.step_summary(outcome))
        if problem:
            outcome.lines.append(f"warning: {problem}")
    if export is not None and errors:
        # An empty list of regressions from a suite that did not run would lie.
        outcome.lines.append(f"report not written to {export[0]}: the suite did not run")
    elif export is not None:
        outcome.data["export"] = write_export(ctx, ratchet, export, outcome.data["regressions"])
        outcome.lines.append(f"report written to {where_written(ctx, outcome.data['export'])}")
    return Output(outcome.data, outcome.lines, outcome.exitcode, stderr)


def add_forged(outcome: ci.CheckOutcome, forged: dict[str, str]) -> None:
    """PASS entries no judged submit, scan or person wrote fail the check (exit 1), by id."""
    outcome.data["forged"] = [{"id": qid, "why": why} for qid, why in forged.items()]
    if not forged:
        return
    last = outcome.lines[-1] if outcome.lines else ""
    verdict = outcome.lines.pop() if last.startswith("check: ") else ""
    outcome.lines.append(
        f"{len(forged)} PASS not written by pytest-quest's gate, a scan or a person (forged):"
    )
    outcome.lines += [f"  FORGED {qid}: {why}" for qid, why in forged.items()]
    outcome.data["ok"] = False
    outcome.exitcode = max(outcome.exitcode, ci.EXIT_FAILED)
    if verdict:
        outcome.lines.append("check: FAILED")
