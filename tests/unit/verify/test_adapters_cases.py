"""The verifiers asked: a plugin hook's answers, a reply text, the setup check, and L2's run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, FunctionFacts, Quest, Verdict
from pytest_quest.verify.adapters import (
    AnsweredVerifier,
    CommandVerifier,
    HookVerifier,
    Verifier,
    answer_from_text,
    checked_verifiers,
    run_verification,
    verify_submission,
)
from pytest_quest.verify.prompt import Request, TestSource
from pytest_quest.verify.protocol import STATUS_CLEAN, STATUS_CORRECTIONS, Finding
from pytest_quest.verify.vote import Answer

CLEAN_REPLY = (
    "<status>verified-clean</status>\n<questions>\n- Q1?\n- Q2?\n</questions>\n"
    "<answers>\n- yes\n- yes\n</answers>\n<discrepancies>none</discrepancies>\n"
    "<final>fine</final>\n"
)


def _quest() -> Quest:
    return Quest(
        id="pkg/m.py::f", file="pkg/m.py", qualname="f", first=1, last=2, fingerprint="sha256:0"
    )


def _request() -> Request:
    return Request(
        quest=_quest(),
        function_file="pkg/m.py",
        function_first=1,
        function_source="def f():\n    return 1",
        tests=[TestSource("t.py::test_f", "t.py", 1, 2, "def test_f():\n    assert f() == 1")],
        questions=["Q1?", "Q2?"],
        files={"t.py": ["def test_f():", "    assert f() == 1"]},
    )


def _fields(answer: Answer) -> tuple[str, list[Finding], str, str, bool]:
    assert answer.seconds >= 0
    return (answer.verifier, answer.findings, answer.error, answer.status, answer.abstained)


# -- a reply text ------------------------------------------------------------------


def test_a_reply_in_the_protocol_gives_its_findings_and_status() -> None:
    answer = answer_from_text("v", seconds=1.5, text=CLEAN_REPLY, questions=2)
    assert answer == Answer("v", 1.5, findings=[], status=STATUS_CLEAN)


def test_a_reply_outside_the_protocol_is_the_verifiers_error() -> None:
    assert answer_from_text("v", seconds=1.0, text="nonsense", questions=2) == Answer(
        "v",
        1.0,
        error="reply outside the protocol: no <status> block and no JSON object in the reply",
    )


def test_a_reply_answering_another_number_of_questions_is_an_error() -> None:
    assert answer_from_text("v", seconds=1.0, text=CLEAN_REPLY, questions=3) == Answer(
        "v", 1.0, error="reply outside the protocol: 3 questions asked, 2 answered"
    )


# -- a plugin hook -----------------------------------------------------------------


def test_a_hook_is_called_with_the_arguments_it_names_in_its_order() -> None:
    seen: list[Any] = []

    def hook(prompt: str, questions: list[str], tests: list[TestSource], **rest: Any) -> None:
        seen.extend([prompt, questions, tests, rest])

    def function(*values: Any) -> None:
        seen.extend(values)

    request = _request()
    answer = HookVerifier(
        "plugin p", function, ["prompt", "questions", "tests", "function_source", "quest"]
    )(request, "the prompt")
    assert _fields(answer) == ("plugin p", [], "", "", True)
    assert seen == [
        "the prompt",
        ["Q1?", "Q2?"],
        request.tests,
        "def f():\n    return 1",
        request.quest,
    ]
    assert seen[1] is not request.questions and seen[2] is not request.tests


def test_a_hook_naming_unknown_arguments_is_an_error_without_a_call() -> None:
    called: list[bool] = []
    answer = HookVerifier("plugin p", lambda *a: called.append(True), ["quest", "bogus", "x"])(
        _request(), "p"
    )
    assert _fields(answer) == (
        "plugin p",
        [],
        "TypeError: unknown hook arguments bogus, x",
        "",
        False,
    )
    assert called == []
    one = HookVerifier("plugin p", lambda *a: None, ["bogus"])(_request(), "p")
    assert one.error == "TypeError: unknown hook argument bogus"


def test_a_hook_that_raises_is_an_error_naming_the_exception() -> None:
    def broken(quest: Quest) -> None:
        raise ZeroDivisionError("division by zero")

    answer = HookVerifier("plugin p", broken, ["quest"])(_request(), "p")
    assert _fields(answer) == ("plugin p", [], "ZeroDivisionError: division by zero", "", False)


def test_a_hook_returning_a_reply_text_is_parsed() -> None:
    answer = HookVerifier("plugin p", lambda: CLEAN_REPLY, [])(_request(), "p")
    assert _fields(answer) == ("plugin p", [], "", STATUS_CLEAN, False)
    bad = HookVerifier("plugin p", lambda: "nonsense", [])(_request(), "p")
    assert bad.error == (
        "reply outside the protocol: no <status> block and no JSON object in the reply"
    )


def test_a_hook_returning_findings_has_corrections_and_none_is_clean() -> None:
    finding = Finding("t.py", 2, "f() == 1", "weak")
    answer = HookVerifier(
        "plugin p",
        lambda: [finding, {"file": "t.py", "line": 1, "quote": "def", "reason": "r"}],
        [],
    )(_request(), "p")
    assert _fields(answer) == (
        "plugin p",
        [finding, Finding("t.py", 1, "def", "r")],
        "",
        STATUS_CORRECTIONS,
        False,
    )
    empty = HookVerifier("plugin p", lambda: [], [])(_request(), "p")
    assert _fields(empty) == ("plugin p", [], "", STATUS_CLEAN, False)


def test_a_hook_returning_unusable_findings_is_an_error() -> None:
    answer = HookVerifier("plugin p", lambda: [3], [])(_request(), "p")
    assert _fields(answer) == (
        "plugin p",
        [],
        "unusable findings: a finding must be a Finding, a dict or a string, not int",
        "",
        False,
    )
    wrong = HookVerifier("plugin p", lambda: [None], [])(_request(), "p")
    assert wrong.error == (
        "unusable findings: a finding must be a Finding, a dict or a string, not NoneType"
    )


# -- a command that cannot start ---------------------------------------------------


def test_a_command_whose_folder_is_gone_cannot_start(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    answer = CommandVerifier(sys.executable, 5, gone)(_request(), "p")
    assert _fields(answer) == (
        sys.executable,
        [],
        f"cannot start: [Errno 2] No such file or directory: '{gone}'",
        "",
        False,
    )


def test_an_interrupted_exchange_stops_the_command_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[subprocess.Popen[bytes]] = []
    pipes: list[Any] = []

    def interrupted(
        self: CommandVerifier, process: subprocess.Popen[bytes], prompt: bytes, at: float
    ) -> str:
        started.append(process)
        pipes.extend([process.stdin, process.stdout, process.stderr])
        raise KeyboardInterrupt

    monkeypatch.setattr(CommandVerifier, "_exchange", interrupted)
    verifier = CommandVerifier(f"{sys.executable} -c 'import time; time.sleep(60)'", 5, tmp_path)
    with pytest.raises(KeyboardInterrupt):
        verifier(_request(), "p")
    [process] = started
    assert process.poll() is not None
    assert process.stdin is None and process.stdout is None and process.stderr is None
    for pipe in pipes:
        pipe.close()


# -- the setup check ---------------------------------------------------------------


def test_commands_come_first_and_repeated_names_are_numbered(tmp_path: Path) -> None:
    hook = HookVerifier("plugin p", lambda: None, [])
    again = HookVerifier("plugin p", lambda: None, [])
    verifiers = checked_verifiers(
        commands=["sh", "sh"], hooks=[hook, again], timeout=7.0, threshold=4, rootdir=tmp_path
    )
    assert [v.name for v in verifiers] == ["sh", "sh #2", "plugin p", "plugin p #2"]
    first = verifiers[0]
    assert isinstance(first, CommandVerifier)
    assert (first.command, first.timeout, first.cwd) == ("sh", 7.0, tmp_path)
    assert verifiers[2] is hook and verifiers[3] is again


def test_no_verifier_at_all_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(QuestUsageError) as caught:
        checked_verifiers(commands=[], hooks=[], timeout=1.0, threshold=None, rootdir=tmp_path)
    assert str(caught.value) == (
        "verification is on but there is no verifier: pass --quest-verifier-cmd CMD, "
        "set the ini option quest_verifier_cmd, install a plugin "
        "implementing pytest_quest_verify, or turn it off with --quest-verify off"
    )


def test_a_threshold_above_the_verifiers_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(QuestUsageError) as caught:
        checked_verifiers(commands=["sh"], hooks=[], timeout=1.0, threshold=2, rootdir=tmp_path)
    assert str(caught.value) == (
        "--quest-verify-threshold 2 asks for more verifiers than the 1 configured; "
        "lower it or add verifiers"
    )


@pytest.mark.parametrize(
    ("command", "why"),
    [("sh 'open", "No closing quotation"), ("   ", "empty command")],
)
def test_a_command_that_cannot_be_split_is_a_usage_error(
    tmp_path: Path, command: str, why: str
) -> None:
    with pytest.raises(QuestUsageError) as caught:
        checked_verifiers(
            commands=[command], hooks=[], timeout=1.0, threshold=None, rootdir=tmp_path
        )
    assert str(caught.value) == (
        f"verifier command {command!r} cannot be split into arguments ({why}); "
        "fix --quest-verifier-cmd or quest_verifier_cmds"
    )


def test_a_command_naming_no_program_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(QuestUsageError) as caught:
        checked_verifiers(
            commands=["./missing --x"], hooks=[], timeout=1.0, threshold=None, rootdir=tmp_path
        )
    assert str(caught.value) == (
        "verifier command './missing --x' cannot be started: no program './missing' "
        "(on PATH or from the rootdir); fix --quest-verifier-cmd or quest_verifier_cmd"
    )


# -- L2's run ----------------------------------------------------------------------


def _replying(tmp_path: Path, reply: str) -> str:
    script = tmp_path / "reply.py"
    script.write_text(f"import sys\nsys.stdin.read()\nprint({reply!r})\n", encoding="utf-8")
    return f"{sys.executable} {script}"


def test_commands_and_hooks_are_asked_and_their_answers_voted_in_order(tmp_path: Path) -> None:
    prompts: list[str] = []

    def hook(prompt: str) -> None:
        prompts.append(prompt)

    verifiers: list[Verifier] = [
        HookVerifier("plugin a", hook, ["prompt"]),
        CommandVerifier(_replying(tmp_path, CLEAN_REPLY), 30, tmp_path),
        AnsweredVerifier(Answer("plugin b", 0.5, error="broken")),
    ]
    verification = run_verification(_request(), verifiers, threshold=None, prompt="asked")
    assert prompts == ["asked"]
    assert [_fields(a) for a in verification.answers] == [
        ("plugin a", [], "", "", True),
        (verifiers[1].name, [], "", STATUS_CLEAN, False),
        ("plugin b", [], "broken", "", False),
    ]
    assert verification.questions == 2
    assert verification.confirmed == []


def test_without_a_prompt_the_submissions_prompt_is_built() -> None:
    prompts: list[str] = []
    verification = run_verification(
        _request(), [HookVerifier("plugin a", prompts.append, ["prompt"])], threshold=1
    )
    [prompt] = prompts
    assert "def f():" in prompt and "Q1?" in prompt and "def test_f():" in prompt
    assert verification.threshold == 1
    assert [a.verifier for a in verification.answers] == ["plugin a"]


# -- one submission ----------------------------------------------------------------


def _current() -> FunctionFacts:
    return FunctionFacts(
        file="pkg/m.py",
        qualname="f",
        ordinal=0,
        start=1,
        first=2,
        last=2,
        fingerprint="sha256:0",
        statements=1,
        branches=0,
        covering_tests=["t.py::test_f"],
    )


def _submit(tmp_path: Path, verifiers: list[Verifier], exclude: list[str]) -> Any:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    (tmp_path / "t.py").write_text("def test_f():\n    assert f() == 1\n", encoding="utf-8")
    return verify_submission(
        rootdir=tmp_path,
        quest=_quest(),
        current=_current(),
        changed_files=["t.py"],
        result=GateResult(Verdict.PASS, [], "pass"),
        verifiers=verifiers,
        threshold=None,
        questions=2,
        exclude=exclude,
    )


def test_an_excluded_quest_is_not_verified(tmp_path: Path) -> None:
    asked: list[str] = []
    result, record = _submit(
        tmp_path, [HookVerifier("plugin a", asked.append, ["prompt"])], [" ", "pkg/*.py"]
    )
    assert result == GateResult(Verdict.PASS, [], "pass")
    assert record == {"result": "excluded", "excluded_by": "pkg/*.py"}
    assert asked == []


def test_a_verifier_error_turns_a_pass_into_review(tmp_path: Path) -> None:
    result, record = _submit(
        tmp_path, [AnsweredVerifier(Answer("plugin b", 0.25, error="broken"))], ["other/*"]
    )
    assert result == GateResult(
        Verdict.REVIEW,
        [
            Fact(
                check="verify.error",
                field="plugin b",
                expected="a reply in the verification protocol",
                actual="broken",
                message="verifier could not confirm: broken",
            )
        ],
        "l2-verify",
    )
    assert record["result"] == "could_not_verify"
    assert record["questions"] == 2
    assert record["calls"] == [
        {
            "verifier": "plugin b",
            "seconds": 0.25,
            "status": "error",
            "findings": 0,
            "error": "broken",
        }
    ]


def test_a_clean_verification_keeps_the_pass_and_shows_the_tests_asked(tmp_path: Path) -> None:
    requests: list[Request] = []

    class Seen:
        name = "plugin s"

        def __call__(self, request: Request, prompt: str) -> Answer:
            requests.append(request)
            return Answer(self.name, 0.0, status=STATUS_CLEAN)

    result, record = _submit(tmp_path, [Seen()], [])
    assert result == GateResult(Verdict.PASS, [], "pass")
    assert record["result"] == "verified_clean"
    [request] = requests
    assert request.function_source == "def f():\n    return 1"
    assert [t.nodeid for t in request.tests] == ["t.py::test_f"]
    assert request.files["pkg/m.py"] == ["def f():", "    return 1"]
