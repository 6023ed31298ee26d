"""What a command that runs the suite reads and checks before any test runs.

Bad input is a usage error (exit 4) before the suite runs, not after; what was
read is kept (`Inputs`), so nothing is read twice.  A measuring command whose
selection ran no test exits 5 and records nothing: a check of no tests would
report every PASS as regressed.
"""

from __future__ import annotations

from pathlib import Path

from pytest_quest.app.context import Context, Inputs, load_ratchet
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.words import counted
from pytest_quest.engine.shard import prepare_folder
from pytest_quest.report.json import Output

# pytest's own exit status for a run that collected no test (pytest.ExitCode.NO_TESTS_COLLECTED).
EXIT_NO_TESTS = 5


def preflight(ctx: Context) -> Inputs:
    """Check the inputs of `ctx`'s command and read what it will use (usage error: a bad one)."""
    options = ctx.options
    if options.shard_out is not None:
        # A job's shard: nothing of the ratchet file is read, the folder is written.
        prepare_folder(Path(options.shard_out))
        return Inputs()
    if options.command == "scan":
        scan_inputs(ctx)
        return Inputs()
    if options.command == "check":
        return check_inputs(ctx)
    if options.command == "audit":
        return audit_inputs(ctx)
    return Inputs()


def scan_inputs(ctx: Context) -> None:
    """A scan writes the ratchet file: one that exists must be readable, valid and writable."""
    store = ctx.store
    store.check_writable()
    if store.exists():
        store.load()


def check_inputs(ctx: Context) -> Inputs:
    """The check's ratchet file, its base and its changes since a ref; its export target checked."""
    # Imported here, for start-up time: a scan needs none of them (0.1 s).
    from pytest_quest.app.export import export_target
    from pytest_quest.app.rejudge import load_base
    from pytest_quest.app.since import load_changes

    ratchet = load_ratchet(ctx)
    base = load_base(ctx)
    changes = load_changes(ctx)
    if ctx.options.export_to:
        export_target(ctx)
    return Inputs(ratchet=ratchet, base=base, changes=changes)


def audit_inputs(ctx: Context) -> Inputs:
    """The audit's ratchet file; its mutation check on and its ``--quest-since`` readable."""
    from pytest_quest.app.policy import since_time  # start-up time, as in check_inputs

    if not ctx.options.mutants:
        raise QuestUsageError(
            "audit is the mutation check, and --quest-mutants is off: drop "
            "--quest-mutants off (or the quest_mutants ini option) to audit"
        )
    ratchet = load_ratchet(ctx)
    if ctx.options.since:
        since_time(ctx.options.since, ctx.rootdir)
    return Inputs(ratchet=ratchet)


def no_tests_ran(ctx: Context) -> Output | None:
    """The answer of a measuring command whose selection ran no test, or None.

    An empty suite is not refused: a project without tests yet is scanned
    (every function a quest), and a check of one holds its PASS entries to it.
    A selection that left out every test (``-k`` matching none) would be read
    as a suite that covers nothing.
    """
    run = ctx.run
    if run.outcomes or run.collection_errors or not run.deselected:
        return None
    command = ctx.options.command
    message = (
        f"no tests ran: the selection left out all {counted(run.deselected, 'test')}; the {command} "
        "measured nothing and recorded nothing (check -k, -m, --deselect)"
    )
    return Output({"ok": False, "tests": 0, "error": message}, [message], EXIT_NO_TESTS)
