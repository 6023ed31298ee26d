"""Environment failures are not verdicts: the cause, the streak, the limit."""

from __future__ import annotations

import hashlib
import json
import signal

import pytest

from pytest_quest.core.environment import (
    BEGUN_KEY,
    ENVIRONMENT_EXIT,
    STREAK_KEY,
    begin_run,
    environment_cause,
    judge_killed,
    record_environment_failure,
    unrecorded_run,
)
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, State, Verdict
from pytest_quest.core.policy import (
    LATER_KEYS,
    GatePolicy,
    from_dict,
    parse_compact,
    weaker_keys,
)
from pytest_quest.core.states import apply_verdict
from tests.support import quests

NOW = "2026-12-01T10:00:00Z"


def test_the_exit_status_is_not_pytests_nor_a_shell_signal_status() -> None:
    assert ENVIRONMENT_EXIT == 75
    assert ENVIRONMENT_EXIT not in range(6)


@pytest.mark.parametrize(
    ("returncode", "output", "expected"),
    [
        (128 + signal.SIGKILL, "tests/test_x.py ", "killed by signal SIGKILL"),
        (-signal.SIGKILL, "", "killed by signal SIGKILL"),
        (128 + signal.SIGTERM, "", "killed by signal SIGTERM"),
        (127, "", "the interpreter failed to start (exit status 127)"),
        (
            1,
            "Fatal Python error: init_import_site\nPython runtime state",
            "the interpreter failed to start",
        ),
        (1, "collected 3 items\nTraceback...\nMemoryError", "out of memory"),
    ],
)
def test_causes_outside_the_submission(returncode: int, output: str, expected: str) -> None:
    assert expected in environment_cause(returncode, output)


@pytest.mark.parametrize(
    ("returncode", "output"),
    [
        (None, ""),  # the gate's own timeout: stays REVIEW
        (1, "some crash"),
        (128 + signal.SIGSEGV, "Fatal Python error: Segmentation fault"),  # a crash in the code
        (128 + signal.SIGABRT, ""),
        (3, "INTERNALERROR> boom"),
    ],
)
def test_other_incomplete_runs_are_not_environment_failures(returncode: int, output: str) -> None:
    assert environment_cause(returncode, output) == ""


def review() -> GateResult:
    fact = Fact("environment", "q", "the test run completes", "killed", "could not confirm: killed")
    return GateResult(Verdict.REVIEW, [fact], "environment")


def test_below_the_limit_no_verdict_no_try_only_the_streak() -> None:
    quest = quests.make_quest(tries=1)
    for expected in (1, 2):
        state = record_environment_failure(quest, review(), limit=3, now=NOW)
        assert state is State.TODO
        assert quest.tries == 1
        assert quest.extra[STREAK_KEY] == expected
    assert [event.action for event in quest.history] == ["environment", "environment"]
    assert all(event.verdict == "" for event in quest.history)


def test_the_limit_in_a_row_is_review_with_a_fact_saying_so() -> None:
    quest = quests.make_quest()
    for _ in range(2):
        record_environment_failure(quest, review(), limit=3, now=NOW)
    state = record_environment_failure(quest, review(), limit=3, now=NOW)
    assert state is State.REVIEW
    assert quest.facts[-1].check == "environment.repeated"
    assert "3 runs in a row" in quest.facts[-1].message
    assert quest.tries == 0


def test_a_recorded_verdict_ends_the_streak() -> None:
    quest = quests.make_quest()
    record_environment_failure(quest, review(), limit=3, now=NOW)
    record_environment_failure(quest, review(), limit=3, now=NOW)
    apply_verdict(quest, GateResult(Verdict.FAIL, [], "3-coverage"), 3, NOW)
    assert STREAK_KEY not in quest.extra
    assert record_environment_failure(quest, review(), limit=3, now=NOW) is State.TODO


def test_the_limit_is_a_policy_key_default_3_and_more_is_weaker() -> None:
    assert GatePolicy().environment_failures == 3
    assert "environment_failures=3" in GatePolicy().compact()
    assert weaker_keys(GatePolicy(), GatePolicy(environment_failures=5)) == ["environment_failures"]
    assert weaker_keys(GatePolicy(), GatePolicy(environment_failures=1)) == []


def test_a_policy_recorded_before_the_key_existed_reads_as_the_default() -> None:
    old = GatePolicy().to_dict()
    del old["environment_failures"]
    assert from_dict(old) == GatePolicy()
    compact = ";".join(p for p in GatePolicy().compact().split(";") if "environment" not in p)
    assert parse_compact(compact) == GatePolicy()


def test_the_default_keeps_the_digest_sealed_before_the_key_existed() -> None:
    # A quest issued before the key existed sealed the digest of the policy without it.
    before = GatePolicy().to_dict()
    for key in LATER_KEYS:
        del before[key]  # the policy as written before the later keys existed
    text = json.dumps(before, sort_keys=True)
    assert GatePolicy().digest() == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert GatePolicy(environment_failures=4).digest() != GatePolicy().digest()


# -- written ahead: a submit whose judge is killed still counts ---------------------------


def test_a_submit_begins_by_marking_the_quest() -> None:
    quest = quests.make_quest()
    assert begin_run(quest, limit=3, now=NOW) == (State.TODO, None)
    assert quest.extra[BEGUN_KEY] == NOW
    assert STREAK_KEY not in quest.extra


def test_a_mark_left_behind_is_one_more_run_that_could_not_complete() -> None:
    quest = quests.make_quest()
    begin_run(quest, limit=3, now="2026-12-01T09:00:00Z")  # its judge is killed: nothing recorded
    state, earlier = begin_run(quest, limit=3, now=NOW)
    assert state is State.TODO
    assert earlier is not None and earlier.step == "environment"
    assert "the submit begun at 2026-12-01T09:00:00Z recorded nothing" in earlier.facts[0].actual
    assert quest.extra[STREAK_KEY] == 1
    assert quest.extra[BEGUN_KEY] == NOW
    assert quest.history[-1].action == "environment"
    assert quest.tries == 0


def test_killed_judges_in_a_row_are_review_at_the_limit_and_nothing_more_begins() -> None:
    quest = quests.make_quest()
    states = [begin_run(quest, limit=3, now=NOW)[0] for _ in range(4)]
    assert states == [State.TODO, State.TODO, State.TODO, State.REVIEW]
    assert BEGUN_KEY not in quest.extra
    assert [fact.check for fact in quest.facts] == ["environment.outside", "environment.repeated"]
    assert quest.tries == 0


def test_a_recorded_outcome_removes_the_mark() -> None:
    quest = quests.make_quest()
    begin_run(quest, limit=3, now=NOW)
    record_environment_failure(quest, review(), limit=3, now=NOW)
    assert BEGUN_KEY not in quest.extra
    begin_run(quest, limit=3, now=NOW)
    apply_verdict(quest, GateResult(Verdict.FAIL, [], "3-coverage"), 3, NOW)
    assert BEGUN_KEY not in quest.extra
    assert STREAK_KEY not in quest.extra
    assert unrecorded_run(quest) is None


def test_the_streak_mixes_killed_judges_and_killed_children() -> None:
    quest = quests.make_quest()
    begin_run(quest, limit=3, now=NOW)  # killed judge
    begin_run(quest, limit=3, now=NOW)  # counted: 1
    assert record_environment_failure(quest, review(), limit=3, now=NOW) is State.TODO  # 2
    assert begin_run(quest, limit=3, now=NOW)[0] is State.TODO  # no mark left: still 2
    assert record_environment_failure(quest, review(), limit=3, now=NOW) is State.REVIEW


def test_a_clean_judge_run_as_a_child_and_killed_is_no_verdict() -> None:
    assert judge_killed(0) == judge_killed(1) == ""
    said = judge_killed(-signal.SIGKILL)
    assert said.startswith("the clean judge was killed by signal SIGKILL, not sent by the gate")
    assert "no verdict was recorded" in said


def test_a_signal_is_named_by_its_number_or_shown_as_a_number() -> None:
    from pytest_quest.core.environment import signal_name

    assert signal_name(int(signal.SIGKILL)) == "SIGKILL"
    assert signal_name(int(signal.SIGTERM)) == "SIGTERM"
    assert signal_name(999) == "signal 999"
