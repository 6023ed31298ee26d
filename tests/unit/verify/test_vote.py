"""The vote on verifiers' findings: re-check, count, and what a quest keeps of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, Quest, Verdict
from pytest_quest.verify.protocol import Finding
from pytest_quest.verify.vote import (
    Answer,
    Confirmed,
    Verification,
    _squash,
    excluded_by,
    majority,
    normalize_path,
    vote,
)

FILES = {"tests/test_a.py": ["def test_a():", "    assert f(1) == 2", "    assert g() is None"]}


def test_squash_drops_every_kind_of_whitespace() -> None:
    assert _squash(" a b\t c\n d ") == "abcd"
    assert _squash("") == ""


def test_normalize_path_strips_blanks_backslashes_and_leading_dot_slashes() -> None:
    assert normalize_path("  ./././tests\\unit\\t.py ") == "tests/unit/t.py"
    assert normalize_path("tests/t.py") == "tests/t.py"


def test_normalize_path_makes_an_absolute_path_relative_to_the_rootdir() -> None:
    assert normalize_path("/root/project/tests/t.py", Path("/root/project")) == "tests/t.py"
    assert normalize_path("/elsewhere/t.py", Path("/root/project")) == "../../elsewhere/t.py"


def test_normalize_path_keeps_an_absolute_path_without_a_rootdir() -> None:
    assert normalize_path("/root/project/./t.py") == "/root/project/./t.py"


def test_normalize_path_keeps_a_relative_path_when_a_rootdir_is_given() -> None:
    assert normalize_path("./t.py", Path("/root")) == "t.py"


def test_normalize_path_keeps_the_path_when_relpath_cannot_relate_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(path: str, start: object) -> str:
        raise ValueError("path is on mount 'D:', start on mount 'C:'")

    monkeypatch.setattr("pytest_quest.verify.vote.os.path.relpath", refuse)
    assert normalize_path("/x/./t.py", Path("/root")) == "/x/./t.py"


def test_majority_is_more_than_half() -> None:
    assert [majority(n) for n in range(6)] == [1, 1, 2, 2, 3, 3]


def test_a_confirmed_finding_as_a_dict_copies_its_voters() -> None:
    item = Confirmed("t.py", 3, "x = 1", "weak", ["a", "b"])
    data = item.to_dict()
    assert data == {
        "file": "t.py",
        "line": 3,
        "quote": "x = 1",
        "reason": "weak",
        "raised_by": ["a", "b"],
    }
    data["raised_by"].append("c")
    assert item.raised_by == ["a", "b"]


def _verification(answers: list[Answer], confirmed: list[Confirmed] | None = None) -> Verification:
    return Verification(
        threshold=2,
        voters=3,
        questions=4,
        answers=answers,
        confirmed=confirmed or [],
        below_threshold=[Confirmed("t.py", 9, "y", "maybe", ["c"])],
        dropped=[{"why": "one"}, {"why": "two"}],
    )


def test_errors_are_the_answers_with_an_error_and_hallucinations_the_dropped() -> None:
    ok = Answer("a", 1.0)
    broken = Answer("b", 2.0, error="timed out")
    verification = _verification([ok, broken])
    assert verification.errors == [broken]
    assert verification.hallucinations == 2
    assert _verification([ok]).errors == []


def test_judge_leaves_a_result_that_is_not_pass_alone() -> None:
    verification = _verification([Answer("b", 2.0, error="timed out")])
    failed = GateResult(Verdict.FAIL, [], "l1-coverage")
    assert verification.judge(failed) is failed


def test_judge_leaves_a_pass_without_facts_alone() -> None:
    passed = GateResult(Verdict.PASS, [], "l1-pass")
    assert _verification([Answer("a", 1.0)]).judge(passed) is passed


def test_judge_makes_a_pass_with_facts_review() -> None:
    passed = GateResult(Verdict.PASS, [], "l1-pass")
    verification = _verification(
        [Answer("b", 2.0, error="timed out")],
        [Confirmed("t.py", 2, "assert x", "too weak", ["a", "b"])],
    )
    judged = verification.judge(passed)
    assert judged.verdict is Verdict.REVIEW
    assert judged.step == "l2-verify"
    assert judged.facts == [
        Fact(
            check="verify.error",
            field="b",
            expected="a reply in the verification protocol",
            actual="timed out",
            message="verifier could not confirm: timed out",
        ),
        Fact(
            check="verify.discrepancy",
            field="t.py:2",
            expected="no finding raised by 2 or more of 3 verifiers",
            actual="raised by 2 of 3 verifiers (a, b): too weak",
            message="`assert x`: too weak (raised by 2 of 3 verifiers)",
        ),
    ]


def test_record_of_a_verification_that_met_an_error() -> None:
    answers = [
        Answer(
            "a", 1.23456, findings=[Finding("t.py", 1, "q")], status="verified-with-corrections"
        ),
        Answer("b", 2.0, error="timed out"),
        Answer("c", 0.5, abstained=True),
    ]
    record = _verification(answers, [Confirmed("t.py", 1, "q", "", ["a", "c"])]).record()
    assert record == {
        "result": "could_not_verify",
        "verified_with_discrepancy": True,
        "threshold": 2,
        "verifiers": 3,
        "questions": 4,
        "discrepancies": [
            {"file": "t.py", "line": 1, "quote": "q", "reason": "", "raised_by": ["a", "c"]}
        ],
        "below_threshold": [
            {"file": "t.py", "line": 9, "quote": "y", "reason": "maybe", "raised_by": ["c"]}
        ],
        "hallucinations": 2,
        "dropped": [{"why": "one"}, {"why": "two"}],
        "calls": [
            {
                "verifier": "a",
                "seconds": 1.235,
                "status": "verified-with-corrections",
                "findings": 1,
            },
            {
                "verifier": "b",
                "seconds": 2.0,
                "status": "error",
                "findings": 0,
                "error": "timed out",
            },
            {"verifier": "c", "seconds": 0.5, "status": "abstained", "findings": 0},
        ],
    }


def test_record_outcome_with_a_discrepancy_and_when_clean() -> None:
    answer = Answer("a", 1.0, status="verified-clean")
    found = _verification([answer], [Confirmed("t.py", 1, "q", "", ["a"])]).record()
    assert (found["result"], found["verified_with_discrepancy"]) == (
        "verified_with_discrepancy",
        True,
    )
    clean = _verification([answer]).record()
    assert (clean["result"], clean["verified_with_discrepancy"]) == ("verified_clean", False)
    assert clean["calls"] == [
        {"verifier": "a", "seconds": 1.0, "status": "verified-clean", "findings": 0}
    ]


def test_vote_keeps_what_a_majority_raised_and_drops_what_does_not_hold() -> None:
    same_line_a = Finding("./tests/test_a.py", 2, "assert f(1)==2", "why a")
    same_line_b = Finding("tests/test_a.py", 2, "f(1) == 2", "why b")
    twice_b = Finding("tests/test_a.py", 2, "assert", "again")
    lone = Finding("tests/test_a.py", 3, "g()", "lone")
    made_up = Finding("tests/test_z.py", 1, "x", "nowhere")
    answers = [
        Answer("a", 1.0, findings=[same_line_a, made_up]),
        Answer("b", 1.0, findings=[same_line_b, twice_b, lone]),
        Answer("c", 1.0),
        Answer("d", 1.0, abstained=True),
    ]
    result = vote(answers, FILES, threshold=None, questions=3)
    assert (result.threshold, result.voters, result.questions) == (2, 3, 3)
    assert result.answers == answers
    assert result.confirmed == [
        Confirmed("tests/test_a.py", 2, "assert f(1)==2", "why a", ["a", "b"])
    ]
    assert result.below_threshold == [Confirmed("tests/test_a.py", 3, "g()", "lone", ["b"])]
    assert result.dropped == [
        {
            "verifier": "a",
            "file": "tests/test_z.py",
            "line": 1,
            "quote": "x",
            "reason": "nowhere",
            "why": "tests/test_z.py is not a file of the submission",
        }
    ]


def test_vote_with_a_given_threshold_and_absolute_paths() -> None:
    finding = Finding("/p/tests/test_a.py", 3, "g() is None", "r")
    result = vote([Answer("a", 1.0, findings=[finding])], FILES, threshold=1, rootdir=Path("/p"))
    assert (result.threshold, result.voters, result.questions) == (1, 1, 0)
    assert result.confirmed == [Confirmed("tests/test_a.py", 3, "g() is None", "r", ["a"])]
    assert result.below_threshold == []
    assert result.dropped == []


def _quest(qid: str, file: str) -> Quest:
    return Quest(
        id=qid, file=file, qualname=qid.split("::")[1], first=1, last=2, fingerprint="sha256:0"
    )


def test_excluded_by_names_the_first_pattern_matching_the_id_or_the_file() -> None:
    quest = _quest("src/pkg/mod.py::Thing.run", "src/pkg/mod.py")
    assert excluded_by(quest, ["", "  ", "other/*", " *::Thing.* ", "src/*"]) == "*::Thing.*"
    assert excluded_by(quest, ["src/pkg/*.py"]) == "src/pkg/*.py"
    assert excluded_by(quest, ["SRC/*", "*::thing.run"]) is None
    assert excluded_by(quest, []) is None


def test_vote_with_a_threshold_above_the_majority_keeps_fewer() -> None:
    finding = Finding("tests/test_a.py", 2, "f(1)", "weak")
    answers = [Answer(name, 1.0, findings=[finding]) for name in ("a", "b")] + [Answer("c", 1.0)]
    result = vote(answers, FILES, threshold=3)
    assert (result.threshold, result.voters) == (3, 3)  # a majority of 3 would be 2
    assert result.confirmed == []
    assert result.below_threshold == [Confirmed("tests/test_a.py", 2, "f(1)", "weak", ["a", "b"])]
