"""Runs that could not complete for reasons outside the submission: no verdict, no try spent.

A child killed by a signal the gate did not send, out of memory, or an
interpreter that failed to start says nothing about the tests: no verdict,
exit `ENVIRONMENT_EXIT`, REVIEW only after the policy's
``environment_failures`` in a row.  A gate timeout stays REVIEW.  Pure: the
caller hands in the exit status and output.  docs/gate.md, "Runs that could
not complete".
"""

from __future__ import annotations

import signal

from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Event, Fact, Quest, State, Verdict

#: The exit status of a submit that recorded no verdict for such a reason
#: (sysexits.h's EX_TEMPFAIL: "temporary failure, try again"; pytest uses 0-5).
ENVIRONMENT_EXIT = 75

#: The quest's ``extra`` key counting such runs in a row (a recorded verdict resets it).
STREAK_KEY = "environment_failures"

#: The quest's ``extra`` key written before a submit starts any child (when it
#: began), removed when its outcome is recorded: a submit whose judge is
#: killed leaves it behind, and the next submit counts that run (`begin_run`).
BEGUN_KEY = "submit_begun"

# Signals that come from outside the judged code: a person or a supervisor
# (KILL, TERM, HUP, INT, QUIT), the out-of-memory killer (KILL), resource
# limits (XCPU, XFSZ).  SEGV, ABRT, BUS, FPE, ILL are crashes of the code
# under test: they stay "could not confirm".
OUTSIDE_SIGNALS = frozenset(
    int(getattr(signal, name))
    for name in ("SIGKILL", "SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT", "SIGXCPU", "SIGXFSZ")
    if hasattr(signal, name)
)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def environment_cause(returncode: int | None, output: str) -> str:
    """Why a run that sent no report failed for reasons outside the submission, or "".

    `returncode` is the reaping shim's: ``128 + N`` when the child died of
    signal N, negative when the shim itself was killed; None (the gate's
    timeout) is never an environment failure.
    """
    if returncode is None:
        return ""
    number = -returncode if returncode < 0 else returncode - 128 if returncode > 128 else 0
    if number in OUTSIDE_SIGNALS:
        return (
            f"killed by signal {signal_name(number)}, not sent by the gate "
            "(a person, a supervisor or the out-of-memory killer)"
        )
    if number:
        return ""  # a crash of the code under test (SEGV, ABRT...): could not confirm
    if returncode in (126, 127):
        return f"the interpreter failed to start (exit status {returncode})"
    text = output.strip()
    if text.startswith("Fatal Python error"):
        return "the interpreter failed to start: " + text.splitlines()[0]
    last = text.splitlines()[-1].strip() if text else ""
    if last.startswith("MemoryError") or "Cannot allocate memory" in last:
        return f"out of memory ({last[:120]})"
    return ""


def record_environment_failure(quest: Quest, result: GateResult, *, limit: int, now: str) -> State:
    """One more such run in a row for `quest`: no verdict below `limit`, REVIEW at it.

    No try is spent either way; the history keeps each run (``environment``).
    """
    streak = int(quest.extra.get(STREAK_KEY, 0) or 0) + 1
    quest.extra[STREAK_KEY] = streak
    quest.extra.pop(BEGUN_KEY, None)  # this run's outcome is recorded
    cause = result.facts[0].actual if result.facts else ""
    quest.history.append(Event(at=now, action="environment", note=cause[:200]))
    if streak < limit:
        return quest.state
    quest.facts = [
        *result.facts,
        Fact(
            check="environment.repeated",
            field=quest.id,
            expected=f"fewer than {limit} runs in a row that cannot complete",
            actual=f"{streak} in a row",
            message=(
                f"could not confirm: {streak} runs in a row could not complete for reasons "
                "outside the submission; a person must look"
            ),
        ),
    ]
    quest.state = State.REVIEW
    quest.extra.pop(STREAK_KEY, None)
    return quest.state


def judge_killed(returncode: int) -> str:
    """Why the clean judge, run as a child (plugin/judge.py ``run_judge``), gave no answer, or ""."""
    if returncode >= 0:
        return ""
    return (
        f"the clean judge was killed by signal {signal_name(-returncode)}, not sent by the "
        "gate: no verdict was recorded, and the next submit of the quest counts this run"
    )


#: Refused signals named one by one in a submission's facts.
NAMED_SIGNALS = 10


def signal_facts(lines: list[str]) -> list[Fact]:
    """One fact per signal at the gate a judged process tried to send (``PID WHAT`` lines).

    The judged tests can write that file too (only against themselves): the
    first `NAMED_SIGNALS` lines are named, each cut to 200 characters.
    """
    facts = []
    for line in lines[:NAMED_SIGNALS]:
        pid, _, what = line.strip()[:200].partition(" ")
        if not what:
            continue
        facts.append(
            Fact(
                check="environment.self_signal",
                field=f"pid {pid}",
                expected="the tests under judgment leave the gate's processes alone",
                actual=f"tried to {what} (refused)",
                message=(
                    f"could not confirm: a judged process (pid {pid}) tried to {what}; "
                    "it was refused, and a person must review the tests"
                ),
            )
        )
    return facts


def with_signal_attempts(result: GateResult, lines: list[str]) -> GateResult:
    """A FAIL stays FAIL with the attempts added; anything else is REVIEW (step ``signals``).

    A run that could not complete is then not believed an environment failure.
    """
    facts = signal_facts(lines)
    if not facts:
        return result
    if result.verdict is Verdict.FAIL:
        return GateResult(Verdict.FAIL, [*result.facts, *facts], result.step)
    return GateResult(Verdict.REVIEW, [*facts, *result.facts], "signals")


def unrecorded_run(quest: Quest) -> GateResult | None:
    """The earlier submit that began and recorded nothing (its judge killed), or None."""
    began = quest.extra.get(BEGUN_KEY)
    if not began:
        return None
    cause = (
        f"the submit begun at {began} recorded nothing: its judge was killed or stopped "
        "before the outcome was written"
    )
    fact = Fact(
        check="environment.outside",
        field=quest.id,
        expected="the submit records its outcome",
        actual=cause,
        message=f"could not confirm: {cause}",
    )
    return GateResult(Verdict.REVIEW, [fact], "environment")


def begin_run(quest: Quest, *, limit: int, now: str) -> tuple[State, GateResult | None]:
    """Before a submit starts any child: count an unrecorded earlier run, then mark this one begun.

    Written ahead, so that killing the judge itself (from outside, or from a
    judged test that finds its pid) is one more run in a row that could not
    complete, bounded by `limit` like the others, and never a free retry.
    Returns the quest's state (REVIEW when that run reached the limit: this
    one is then not begun) and the earlier run's result when there was one.
    """
    earlier = unrecorded_run(quest)
    if (
        earlier is not None
        and record_environment_failure(quest, earlier, limit=limit, now=now) is State.REVIEW
    ):
        return quest.state, earlier
    quest.extra[BEGUN_KEY] = now
    return quest.state, earlier
