"""What a submit refuses around its judgement.

Refused, nothing recorded (exit 4): a resubmit of exactly what the last FAIL
judged, and submitted tests that do not collect.
"""

from __future__ import annotations

from pytest_quest.app.context import Context
from pytest_quest.core.environment import BEGUN_KEY
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Quest, Ratchet
from pytest_quest.core.run import CollectionError, RunReport
from pytest_quest.core.states import unchanged_since_fail
from pytest_quest.engine.submitted import judged_digest
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
    where = errors_where(errors)
    said = "collection error" if len(errors) == 1 else f"{len(errors)} collection errors"
    raise NotCollected(
        f"{said} in test files new or changed since the scan ({where}): fix it (files not "
        "yours: a submit without test paths searches `testpaths`, name the folders the scan "
        "was run with), then submit again; nothing was judged, no try spent"
    )


def errors_where(errors: list[CollectionError]) -> str:
    """Collection errors as pytest names them: ``file:line: message``, a few, then how many more."""
    return summarised(
        [(f"{e.file}:{e.line}" if e.line else e.file) + f": {e.message}" for e in errors]
    )


def unbegin(ctx: Context, quest_id: str) -> None:
    """Take back the mark `begin_submit` wrote ahead: this submit judged nothing."""

    def change(fresh: Ratchet) -> None:
        target = fresh.quests.get(quest_id)
        if target is not None:
            target.extra.pop(BEGUN_KEY, None)

    ctx.store.update(change)
