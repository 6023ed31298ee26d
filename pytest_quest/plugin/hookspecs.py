"""Hooks pytest-quest adds to pytest; plugins implement them like any pytest hook.

Two layers may be extended, with different authority:

* L1, ``pytest_quest_l1_check``: deterministic extra gate checks.  They run
  with the gate, after steps 1-5 would PASS, and may FAIL or REVIEW.
* L2, ``pytest_quest_verify``: independent verifiers (typically AI).  They run
  only when L1 would PASS, only when verification is on, and may only turn
  that PASS into REVIEW; their findings are re-checked and voted on like those
  of ``--quest-verifier-cmd`` commands (see ``verify/adapters.py``).

A hook implementation may take any subset of the arguments, by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_quest.core.model import Fact, FunctionFacts, Quest, Verdict
    from pytest_quest.core.run import RunReport
    from pytest_quest.verify.prompt import TestSource


# Final signature, for the caller in ``app/deep_checks.py``:
#
#     results = config.hook.pytest_quest_l1_check(
#         quest=evidence.quest, function=evidence.current, run=evidence.run
#     )
#     for checks in results:          # one list per implementing plugin; None is skipped
#         evidence.extra_checks += [(v, f) for v, f in checks if v is not Verdict.PASS]
#
# Call it with exactly these three keyword arguments (pluggy warns about a
# missing one).  Only when `function` is not None (steps 1-3 would PASS).
@pytest.hookspec()
def pytest_quest_l1_check(
    quest: Quest, function: FunctionFacts, run: RunReport
) -> list[tuple[Verdict, Fact]] | None:
    """L1: a deterministic extra gate check of a submission that steps 1-5 would PASS.

    `quest` is the quest as recorded, `function` what the gate's run measured
    of its function now (lines, branches, ``covering_tests``), `run` the run's
    report (``outcomes`` per node id).  Return ``[(Verdict.FAIL, fact), ...]``
    or ``Verdict.REVIEW`` pairs, an empty list or None when the check passes.
    It must be deterministic: same code and tests, same answer.
    """


@pytest.hookspec()
def pytest_quest_verify(
    quest: Quest,
    function_source: str,
    tests: list[TestSource],
    questions: list[str],
    prompt: str,
) -> Any:
    """L2: an independent verifier of a would-be PASS; may only raise REVIEW.

    `function_source` is the function's code (decorators to last line),
    `tests` the covering tests shown to verifiers (``TestSource``: ``nodeid``,
    ``file``, ``first``, ``last``, ``text``), `questions` the narrow yes/no
    questions and `prompt` the full text a ``--quest-verifier-cmd`` receives.
    Return a list of findings (``pytest_quest.verify.protocol.Finding(file, line, quote,
    reason)`` or dicts with those keys), an empty list when clean, a reply text
    in the five-block protocol, or None to abstain.  Each finding is re-checked
    (the quote must be at that line) and counts only with enough agreeing
    verifiers.  Raising an exception makes the submission REVIEW.
    """
