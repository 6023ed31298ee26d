"""What a submit refuses or sets apart around its judgement, and its tamper signs.

Refused, nothing recorded (exit 4): a resubmit of exactly what the last FAIL
judged, and submitted tests that do not collect.  Set apart: a test file with
tamper signs whose tests do not reach the function (the quest is judged
again without it).  The tamper signs themselves (core/tamper.py) are found
before the run and applied after the deterministic steps.
"""

from __future__ import annotations

from pytest_quest.app.context import Context
from pytest_quest.core.environment import BEGUN_KEY
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, FunctionFacts, Quest, Ratchet, Verdict
from pytest_quest.core.run import RunReport
from pytest_quest.core.states import unchanged_since_fail
from pytest_quest.core.tamper import find_tamper_signs
from pytest_quest.engine.guard import VerdictGuard
from pytest_quest.engine.submitted import judged_digest, own_packages, submitted_files
from pytest_quest.report.text import summarised


def refuse_unchanged(ctx: Context, quest: Quest) -> str:
    """The digest of what this submit would judge; a usage error when the last FAIL judged it."""
    judged = judged_digest(
        ctx.tests, ctx.rootdir, [*ctx.options.sources, quest.file], ctx.child.inifile
    )
    refused = unchanged_since_fail(quest, judged)
    if refused:
        raise QuestUsageError(refused)
    return judged


class NotCollected(QuestUsageError):
    """The submitted tests do not collect: nothing is judged, no try is spent (exit 4)."""


def refuse_uncollected(run: RunReport, submitted: list[str]) -> None:
    """Refuse, as pytest reports it, a collection error of a submitted test file or of a conftest.

    A typo in a new test is not a judgement of the quest: the error is shown
    with its file and line, nothing is recorded.  An error in a test file the
    submission did not touch stays the gate's (FAIL, step ``collection``).
    """
    files = set(submitted)
    errors = [
        error
        for error in run.collection_errors
        if error.file in files or error.file.rpartition("/")[2] == "conftest.py"
    ]
    if not errors:
        return
    where = summarised(
        [(f"{e.file}:{e.line}" if e.line else e.file) + f": {e.message}" for e in errors]
    )
    said = "collection error" if len(errors) == 1 else f"{len(errors)} collection errors"
    raise NotCollected(
        f"{said} in test files new or changed since the scan ({where}): fix it (files not "
        "yours: a submit without test paths searches `testpaths`, name the folders the scan "
        "was run with), then submit again; nothing was judged, no try spent"
    )


def unbegin(ctx: Context, quest_id: str) -> None:
    """Take back the mark `begin_submit` wrote ahead: this submit judged nothing."""

    def change(fresh: Ratchet) -> None:
        target = fresh.quests.get(quest_id)
        if target is not None:
            target.extra.pop(BEGUN_KEY, None)

    ctx.store.update(change)


def tamper_signs(ctx: Context, ratchet: Ratchet) -> list[Fact]:
    """Tamper signs in the test code and pytest configuration changed since the scan.

    Cheap and static (core/tamper.py), run before the tests;
    `with_tamper_signs` applies them after the deterministic steps.
    """
    files = submitted_files(
        ctx.tests,
        ctx.rootdir,
        scanned=ratchet.test_files,
        scanned_at=ratchet.scanned_at,
        inifile=ctx.child.inifile,
    )
    findings = find_tamper_signs(
        files,
        own_packages=own_packages(ctx.options.sources, ctx.rootdir),
        ratchet_name=ctx.store.path.name,
    )
    return [finding.fact() for finding in findings]


# Tamper signs of code that can write files outside the audit hook's sight.
_JOURNAL_FORGING = ("tamper.ratchet", "tamper.ctypes", "tamper.internals", "tamper.process")


def distrust_journal(guard: VerdictGuard, signs: list[Fact]) -> None:
    """Code that names the ratchet file or can write around the audit hook may forge its journal."""
    named = sorted({sign.check for sign in signs if sign.check in _JOURNAL_FORGING})
    if named:
        guard.distrust(
            f"the judged code bears tamper signs ({', '.join(named)}): its journal is not believed"
        )


def unreached_sign_files(
    signs: list[Fact], current: FunctionFacts | None, run: RunReport
) -> list[str]:
    """Test files with tamper signs none of whose tests reached the function (nor failed).

    Measured by the run: a test file another quest's submission changed,
    whose tests never run this function, has nothing to do with this quest.
    A conftest or configuration file shapes every run and is never one of
    them; without a completed measurement of the function there are none.
    """
    if current is None or not run.completed:
        return []
    reaching = {nodeid.split("::")[0] for nodeid in [*current.covering_tests, *run.failed]}
    found = set()
    for sign in signs:
        path = sign_path(sign)
        name = path.rpartition("/")[2]
        if name.endswith(".py") and name != "conftest.py" and path not in reaching:
            found.add(path)
    return sorted(found)


def sign_path(sign: Fact) -> str:
    """The file a tamper sign's fact names (its field is ``path:line``)."""
    return sign.field.rpartition(":")[0]


def with_tamper_signs(result: GateResult, signs: list[Fact]) -> GateResult:
    """A PASS with tamper signs is REVIEW; a FAIL or REVIEW stays, the signs added to its facts."""
    if not signs:
        return result
    if result.verdict is Verdict.PASS:
        return GateResult(Verdict.REVIEW, list(signs), "tamper")
    return GateResult(result.verdict, [*result.facts, *signs], result.step)


__all__ = [
    "NotCollected",
    "distrust_journal",
    "refuse_unchanged",
    "refuse_uncollected",
    "sign_path",
    "tamper_signs",
    "unbegin",
    "unreached_sign_files",
    "with_tamper_signs",
]
