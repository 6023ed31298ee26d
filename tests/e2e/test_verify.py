"""L2 verification (``pytest_quest/verify/``): prompt, re-check, vote, verifiers, submit."""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any, NoReturn, cast

import pytest

from pytest_quest.app.options import QuestOptions
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, FunctionFacts, Quest, Verdict
from pytest_quest.plugin.options import _verify_mode
from pytest_quest.plugin.verifiers import configured_verifiers
from pytest_quest.verify.adapters import (
    CommandVerifier,
    HookVerifier,
    run_verification,
    verify_submission,
)
from pytest_quest.verify.prompt import (
    QUESTIONS,
    Request,
    TestSource,
    build_prompt,
    build_request,
    covering_test_sources,
)
from pytest_quest.verify.protocol import Finding, parse_reply
from pytest_quest.verify.vote import Answer, excluded_by, recheck, vote
from tests.support import paths
from tests.support.paths import verifier_script as script
from tests.support.projects import CALC, Project, built_template, scanned_unsandboxed

SOURCE = """\
import functools


@functools.lru_cache
def sign(x):
    if x < 0:
        return -1
    return 1
"""

TESTS = """\
import pytest

from pkg.calc import sign


@pytest.mark.parametrize("x", [-5, -1])
def test_negative(x):
    assert sign(x) == -1


class TestSign:
    def test_positive(self):
        assert sign(5) == sign(5)


def test_unrelated():
    assert True
"""

OLD_TESTS = """\
from pkg.calc import sign


def test_zero():
    assert sign(0) == 1
"""


def make_project(tmp_path: Path) -> tuple[Quest, FunctionFacts]:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "calc.py").write_text(SOURCE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_new.py").write_text(TESTS)
    (tmp_path / "tests" / "test_old.py").write_text(OLD_TESTS)
    quest = Quest(
        id="src/pkg/calc.py::sign", file="src/pkg/calc.py", qualname="sign", first=5, last=8,
        fingerprint="sha256:x",
    )  # fmt: skip
    current = FunctionFacts(
        file="src/pkg/calc.py", qualname="sign", ordinal=1, start=5, first=5, last=8,
        fingerprint="sha256:x", statements=4, branches=2,
        covering_tests=[
            "tests/test_new.py::test_negative[-5::x]",
            "tests/test_new.py::test_negative[-1]",
            "tests/test_new.py::TestSign::test_positive",
            "tests/test_old.py::test_zero",
        ],
    )  # fmt: skip
    return quest, current


@pytest.fixture
def request_(tmp_path: Path) -> Request:
    quest, current = make_project(tmp_path)
    return build_request(
        rootdir=tmp_path, quest=quest, current=current, covering_tests=current.covering_tests,
        changed_files=["tests/test_new.py"], questions=3,
    )  # fmt: skip


# -- the prompt ------------------------------------------------------------------------


def test_request_shows_the_function_with_decorators_and_the_changed_tests_only(
    request_: Request,
) -> None:
    assert request_.function_first == 4
    assert request_.function_source == SOURCE.split("\n", 3)[3].rstrip("\n")
    assert [(t.nodeid, t.file, t.first, t.last) for t in request_.tests] == [
        ("tests/test_new.py::test_negative", "tests/test_new.py", 6, 8),
        ("tests/test_new.py::TestSign::test_positive", "tests/test_new.py", 12, 13),
    ]
    assert request_.tests[0].text.splitlines()[0] == '@pytest.mark.parametrize("x", [-5, -1])'
    assert sorted(request_.files) == ["src/pkg/calc.py", "tests/test_new.py"]
    assert request_.questions == list(QUESTIONS[:3])


def test_request_falls_back_to_every_covering_test_when_no_test_file_changed(
    tmp_path: Path,
) -> None:
    quest, current = make_project(tmp_path)
    request = build_request(
        rootdir=tmp_path, quest=quest, current=current, covering_tests=current.covering_tests,
        changed_files=[], questions=9,
    )  # fmt: skip
    assert [t.nodeid for t in request.tests] == [
        "tests/test_new.py::test_negative",
        "tests/test_new.py::TestSign::test_positive",
        "tests/test_old.py::test_zero",
    ]
    assert request.questions == list(QUESTIONS)  # capped at the questions there are


def test_prompt_format(request_: Request) -> None:
    prompt = build_prompt(request_)
    assert "## Function under test: src/pkg/calc.py::sign (src/pkg/calc.py, lines 4-8)" in prompt
    assert "    4 | @functools.lru_cache\n    5 | def sign(x):\n" in prompt
    assert "### tests/test_new.py::TestSign::test_positive (tests/test_new.py, lines 12-13)" in (
        prompt
    )
    assert "   13 |         assert sign(5) == sign(5)\n" in prompt
    assert "test_unrelated" not in prompt
    assert "test_zero" not in prompt
    for number, question in enumerate(QUESTIONS[:3], 1):
        assert f"\n{number}. {question}\n" in prompt
    assert f"\n4. {QUESTIONS[3]}" not in prompt
    assert "<status>verified-clean or verified-with-corrections</status>" in prompt
    assert prompt.index("## Questions") < prompt.index("## Reply format")


# -- the re-check ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("finding", "why"),
    [
        (Finding("tests/test_new.py", 13, "assert sign(5) == sign(5)"), None),
        (Finding("./tests/test_new.py", 13, "assert   sign(5)==sign(5)"), None),
        (Finding("tests/test_new.py", 13, "sign(5) == sign"), None),
        (Finding("tests/test_new.py", 12, "def test_positive(self): assert sign(5)"), None),
        (Finding("tests/test_new.py", 99, "assert"), "tests/test_new.py has 17 lines, no line 99"),
        (
            Finding("tests/test_new.py", 12, "assert sign(5) == sign(5)"),
            "the quoted code is not at tests/test_new.py:12",
        ),
        (
            Finding("tests/test_new.py", 13, "assert sign(5) == 1"),
            "the quoted code is not at tests/test_new.py:13",
        ),
        (Finding("tests/test_old.py", 5, "assert sign(0) == 1"), "tests/test_old.py is not a file"),
        (Finding("tests/test_new.py", 13, "   "), "quotes no code"),
        (Finding("", 0, "", "the tests are weak"), "cites no file:line"),
        (Finding("tests/test_new.py", 0, "assert"), "cites no file:line"),
    ],
)
def test_recheck(request_: Request, finding: Finding, why: str) -> None:
    result = recheck(finding, request_.files)
    if why is None:
        assert result is None
    else:
        assert result is not None and result.startswith(why)


def test_recheck_accepts_an_absolute_path_under_the_rootdir(
    tmp_path: Path, request_: Request
) -> None:
    finding = Finding(str(tmp_path / "src/pkg/calc.py"), 6, "if x < 0:")
    assert recheck(finding, request_.files, tmp_path) is None


# -- the vote --------------------------------------------------------------------------

REAL = Finding(
    "tests/test_new.py", 13, "assert sign(5) == sign(5)", "recomputes the expected value"
)
REAL_REWORDED = Finding("tests/test_new.py", 13, "sign(5) == sign(5)", "compares f with f")
OTHER = Finding("src/pkg/calc.py", 6, "if x < 0:", "zero is not tested")
GHOST = Finding("tests/test_new.py", 40, "assert nothing", "made up")


def test_two_agreeing_verifiers_confirm_a_finding(request_: Request) -> None:
    answers = [Answer("a", 0.5, [REAL]), Answer("b", 0.25, [REAL_REWORDED, GHOST])]
    verification = vote(answers, request_.files, threshold=None, questions=3)
    assert verification.threshold == 2
    assert [(c.file, c.line, c.raised_by) for c in verification.confirmed] == [
        ("tests/test_new.py", 13, ["a", "b"])
    ]
    assert verification.hallucinations == 1
    assert verification.dropped[0]["verifier"] == "b"
    assert verification.dropped[0]["why"] == "tests/test_new.py has 17 lines, no line 40"
    result = verification.judge(GateResult(Verdict.PASS, [], "pass"))
    assert result.verdict is Verdict.REVIEW
    assert result.step == "l2-verify"
    assert result.facts == [
        Fact(
            check="verify.discrepancy",
            field="tests/test_new.py:13",
            expected="no finding raised by 2 or more of 2 verifiers",
            actual="raised by 2 of 2 verifiers (a, b): recomputes the expected value",
            message=(
                "`assert sign(5) == sign(5)`: recomputes the expected value "
                "(raised by 2 of 2 verifiers)"
            ),
        )
    ]
    record = verification.record()
    assert record["result"] == "verified_with_discrepancy"
    assert record["verified_with_discrepancy"] is True
    assert record["hallucinations"] == 1
    assert record["discrepancies"][0]["raised_by"] == ["a", "b"]
    assert [(c["verifier"], c["seconds"], c["findings"]) for c in record["calls"]] == [
        ("a", 0.5, 1),
        ("b", 0.25, 2),
    ]


def test_a_finding_below_the_threshold_does_not_count(request_: Request) -> None:
    answers = [Answer("a", 0, [OTHER]), Answer("b", 0, []), Answer("c", 0, [REAL])]
    verification = vote(answers, request_.files, threshold=None)
    assert verification.threshold == 2
    assert verification.confirmed == []
    assert [(c.file, c.line) for c in verification.below_threshold] == [
        ("src/pkg/calc.py", 6),
        ("tests/test_new.py", 13),
    ]
    passed = GateResult(Verdict.PASS, [], "pass")
    assert verification.judge(passed) is passed
    assert verification.record()["result"] == "verified_clean"


def test_an_explicit_threshold_and_one_verifier_raising_a_line_twice(request_: Request) -> None:
    answers = [Answer("a", 0, [REAL, REAL_REWORDED]), Answer("b", 0, []), Answer("c", 0, [])]
    assert vote(answers, request_.files, threshold=2).confirmed == []
    confirmed = vote(answers, request_.files, threshold=1).confirmed
    assert [(c.line, c.raised_by) for c in confirmed] == [(13, ["a"])]


def test_abstaining_verifiers_do_not_count_towards_the_majority(request_: Request) -> None:
    answers = [Answer("a", 0, [REAL]), Answer("plugin p", 0, abstained=True)]
    verification = vote(answers, request_.files, threshold=None)
    assert (verification.voters, verification.threshold) == (1, 1)
    assert len(verification.confirmed) == 1


def test_a_verifier_error_is_review_and_never_fail(request_: Request) -> None:
    answers = [Answer("a", 0, [REAL]), Answer("b", 1.5, error="timed out after 1s")]
    verification = vote(answers, request_.files, threshold=None)
    result = verification.judge(GateResult(Verdict.PASS, [], "pass"))
    assert result.verdict is Verdict.REVIEW
    assert result.facts == [
        Fact(
            check="verify.error",
            field="b",
            expected="a reply in the verification protocol",
            actual="timed out after 1s",
            message="verifier could not confirm: timed out after 1s",
        )
    ]  # REAL was raised by 1 of 2: below the majority
    assert verification.record()["result"] == "could_not_verify"
    assert verification.record()["calls"][1]["error"] == "timed out after 1s"
    failed = GateResult(Verdict.FAIL, [], "3-coverage")
    assert verification.judge(failed) is failed


def test_the_last_definition_of_a_test_name_is_shown(tmp_path: Path) -> None:
    (tmp_path / "test_twice.py").write_text(
        "def test_a():\n    assert 1\n\n\ndef test_a():\n    assert 2\n"
    )
    sources = covering_test_sources(tmp_path, ["test_twice.py::test_a", "test_twice.py::gone"])
    assert [(s.first, s.last, s.text) for s in sources] == [(5, 6, "def test_a():\n    assert 2")]


def test_excluded_by() -> None:
    quest = Quest(id="src/pkg/calc.py::Cart.total@2", file="src/pkg/calc.py", qualname="x",
                  first=1, last=2, fingerprint="")  # fmt: skip
    assert excluded_by(quest, ["src/other/*", "src/pkg/*.py"]) == "src/pkg/*.py"
    assert excluded_by(quest, ["*::Cart.*"]) == "*::Cart.*"
    assert excluded_by(quest, ["src/pkg/calc.py::Cart.total"]) is None
    assert excluded_by(quest, ["", "src/pkg/calc.py::Cart.total@2"]) is not None


# -- the command adapter ---------------------------------------------------------------


def call(request: Request, command: str, timeout: float = 30.0) -> Answer:
    return CommandVerifier(command, timeout, Path.cwd())(request, build_prompt(request))


def test_command_verifier_gets_the_prompt_on_stdin(request_: Request, tmp_path: Path) -> None:
    answer = call(request_, script("record.py", tmp_path / "prompt.txt"))
    assert (answer.error, answer.findings, answer.status) == ("", [], "verified-clean")
    assert (tmp_path / "prompt.txt").read_text() == build_prompt(request_)
    assert answer.seconds > 0


def test_command_verifier_findings_in_text_and_json(request_: Request) -> None:
    args = ("tests/test_new.py", 13, "assert sign(5) == sign(5)")
    text = call(request_, script("cite.py", *args, "compares sign with itself"))
    assert text.findings == [
        Finding("tests/test_new.py", 13, "assert sign(5) == sign(5)", "compares sign with itself")
    ]
    assert call(request_, script("cite_json.py", *args)).findings == [
        Finding("tests/test_new.py", 13, "assert sign(5) == sign(5)", "checks nothing")
    ]


@pytest.mark.parametrize(
    ("command", "error"),
    [
        (script("malformed.py"), "reply outside the protocol: no <status> block and no JSON"),
        (script("crash.py", 3), "exited with status 3: error: model quota exceeded"),
        ("'unclosed", "cannot split the command line: No closing quotation"),
        ("/nonexistent/verifier --flag", "cannot start: [Errno 2] No such file or directory"),
    ],
)
def test_command_verifier_errors(request_: Request, command: str, error: str) -> None:
    answer = call(request_, command)
    assert answer.error.startswith(error)
    assert answer.findings == []


def test_command_verifier_timeout_kills_it(request_: Request) -> None:
    answer = call(request_, script("slow.py", 30), timeout=0.5)
    assert answer.error == "timed out after 0.5s (--quest-verify-timeout)"
    assert 0.5 <= answer.seconds < 10


def test_command_verifier_must_answer_the_questions_asked(request_: Request) -> None:
    request_.questions = request_.questions[:2]
    prompt_with_three = build_prompt(
        Request(**{**request_.__dict__, "questions": list(QUESTIONS[:3])})
    )
    verifier = CommandVerifier(script("clean.py"), 30, Path.cwd())
    answer = verifier(request_, prompt_with_three)
    assert answer.error == "reply outside the protocol: 2 questions asked, 3 answered"


def test_run_verification_runs_commands_in_isolation_and_votes(request_: Request) -> None:
    args = ("tests/test_new.py", 13, "assert sign(5) == sign(5)")
    verifiers = [
        CommandVerifier(script("cite.py", *args), 30, Path.cwd()),
        CommandVerifier(script("cite_json.py", *args), 30, Path.cwd()),
        CommandVerifier(script("cite.py", "tests/test_new.py", 2, "import os"), 30, Path.cwd()),
    ]
    verification = run_verification(request_, verifiers, threshold=None)
    assert [answer.verifier for answer in verification.answers] == [v.name for v in verifiers]
    assert [(c.line, len(c.raised_by)) for c in verification.confirmed] == [(13, 2)]
    assert verification.hallucinations == 1  # line 2 of test_new.py is empty


# -- plugin verifiers ------------------------------------------------------------------


def test_hook_verifier_results(request_: Request) -> None:
    def finds(quest: Quest, tests: list[TestSource]) -> list[dict[str, Any]]:
        assert quest.id == "src/pkg/calc.py::sign"
        return [{"file": tests[1].file, "line": 13, "quote": "sign(5) == sign(5)"}]

    answer = HookVerifier("plugin p", finds, ["quest", "tests"])(request_, "prompt")
    assert answer.findings == [Finding("tests/test_new.py", 13, "sign(5) == sign(5)", "")]
    assert answer.status == "verified-with-corrections"

    abstains = HookVerifier("plugin q", lambda: None, [])(request_, "prompt")
    assert abstains.abstained and not abstains.error

    def broken(function_source: str) -> NoReturn:
        raise RuntimeError("no API key")

    answer = HookVerifier("plugin r", broken, ["function_source"])(request_, "prompt")
    assert answer.error == "RuntimeError: no API key"

    answer = HookVerifier("plugin s", lambda: [42], [])(request_, "prompt")
    assert answer.error.startswith("unusable findings: a finding must be a Finding")

    answer = HookVerifier("plugin t", lambda: "whatever", [])(request_, "prompt")
    assert answer.error.startswith("reply outside the protocol")


# -- switches --------------------------------------------------------------------------


class FakeConfig:
    def __init__(self, cli: str | None, ini: str) -> None:
        self.cli, self.ini = cli, ini

    def getoption(self, name: str, default: object = None) -> str | None:
        assert name == "quest_verify"
        return self.cli

    def getini(self, name: str) -> str:
        assert name == "quest_verify"
        return self.ini


@pytest.mark.parametrize(
    ("cli", "env", "ini", "mode"),
    [
        (None, None, "auto", "off"),
        (None, None, "on", "on"),
        ("auto", None, "on", "on"),
        ("off", "on", "on", "off"),
        ("on", None, "off", "on"),
        (None, "on", "off", "on"),
        (None, "OFF", "on", "off"),
        (None, "auto", "on", "on"),
        ("auto", "", "auto", "off"),
    ],
)
def test_verify_mode(
    monkeypatch: pytest.MonkeyPatch, cli: str | None, env: str | None, ini: str, mode: str
) -> None:
    if env is None:
        monkeypatch.delenv("PYTEST_QUEST_VERIFY", raising=False)
    else:
        monkeypatch.setenv("PYTEST_QUEST_VERIFY", env)
    assert _verify_mode(cast(pytest.Config, FakeConfig(cli, ini)), cli or "auto") == mode


def test_verify_mode_rejects_a_bad_environment_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_QUEST_VERIFY", "yes")
    with pytest.raises(QuestUsageError, match="PYTEST_QUEST_VERIFY='yes': expected on, off"):
        _verify_mode(cast(pytest.Config, FakeConfig(None, "auto")), "auto")


class NoPlugins:
    class hook:
        pass


class FakePytestConfig:
    pluginmanager = NoPlugins()


def fake_pytest_config() -> pytest.Config:
    """A config whose plugin manager has no verifier hook (a stand-in, not a pytest.Config)."""
    return cast(pytest.Config, FakePytestConfig())


def options(**kwargs: Any) -> QuestOptions:
    base = QuestOptions(
        command="submit", sources=[], quest_file=Path("quest.json"), max_tries=3, format="text",
        quest_id=None, timeout=60.0, lock_timeout=5.0, strict=False, reopen=None, accept=None,
        export_to=None, export_force=False, mutants=True, verify="on", measure_out=None,
    )  # fmt: skip
    return dataclasses.replace(base, **kwargs)


def verify_configured(
    *,
    config: pytest.Config,
    options: QuestOptions,
    rootdir: Path,
    quest: Quest,
    current: FunctionFacts,
    changed_files: Sequence[str],
    result: GateResult,
) -> tuple[GateResult, dict[str, Any]]:
    """`verify_submission` with this run's verifiers and verification options.

    Usage errors (`QuestUsageError`) for a setup that cannot work, as ``submit`` has them.
    """
    return verify_submission(
        rootdir=rootdir,
        quest=quest,
        current=current,
        changed_files=changed_files,
        result=result,
        verifiers=configured_verifiers(config, options, rootdir),
        threshold=options.verify_threshold,
        questions=options.verify_questions,
        exclude=options.verify_exclude,
    )


def test_verify_submission_usage_errors(tmp_path: Path) -> None:
    quest, current = make_project(tmp_path)
    passed = GateResult(Verdict.PASS, [], "pass")
    with pytest.raises(QuestUsageError, match="verification is on but there is no verifier"):
        verify_configured(
            config=fake_pytest_config(), options=options(), rootdir=tmp_path, quest=quest,
            current=current, changed_files=[], result=passed,
        )  # fmt: skip
    with pytest.raises(QuestUsageError, match="threshold 2 asks for more verifiers than the 1"):
        verify_configured(
            config=fake_pytest_config(),
            options=options(verifier_cmds=[script("clean.py")], verify_threshold=2),
            rootdir=tmp_path, quest=quest, current=current, changed_files=[], result=passed,
        )  # fmt: skip
    with pytest.raises(QuestUsageError, match='verifier command "\'oops" cannot be split'):
        verify_configured(
            config=fake_pytest_config(), options=options(verifier_cmds=["'oops"]), rootdir=tmp_path,
            quest=quest, current=current, changed_files=[], result=passed,
        )  # fmt: skip


def test_the_same_command_twice_is_two_voters(tmp_path: Path) -> None:
    quest, current = make_project(tmp_path)
    cite = script("cite.py", "tests/test_new.py", 13, "assert sign(5) == sign(5)")
    result, record = verify_configured(
        config=fake_pytest_config(), options=options(verifier_cmds=[cite, cite]), rootdir=tmp_path,
        quest=quest, current=current, changed_files=["tests/test_new.py"],
        result=GateResult(Verdict.PASS, [], "pass"),
    )  # fmt: skip
    assert result.verdict is Verdict.REVIEW
    assert record["discrepancies"][0]["raised_by"] == [cite, f"{cite} #2"]


def test_verify_submission_excluded_runs_nothing(tmp_path: Path) -> None:
    quest, current = make_project(tmp_path)
    passed = GateResult(Verdict.PASS, [], "pass")
    marker = tmp_path / "ran.txt"
    result, record = verify_configured(
        config=fake_pytest_config(),
        options=options(verifier_cmds=[script("record.py", marker)], verify_exclude=["src/pkg/*"]),
        rootdir=tmp_path, quest=quest, current=current, changed_files=[], result=passed,
    )  # fmt: skip
    assert result is passed
    assert record == {"result": "excluded", "excluded_by": "src/pkg/*"}
    assert not marker.exists()


# -- end to end: pytest --quest submit -------------------------------------------------

# Honest tests: every return value is checked, the boundary too (so that
# they pass the gate's mutation step as well).
TEST_SIGN = """\
from pkg.calc import sign


def test_sign_of_negative_zero_and_positive():
    assert sign(-5) == -1
    assert sign(-1) == -1
    assert sign(0) == 1
    assert sign(7) == 1
"""
SIGN_ID = "src/pkg/calc.py::sign"
ZERO_LINE = 7  # `assert sign(0) == 1` in TEST_SIGN


def scanned(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_double", "from pkg.calc import double\n\n\ndef test_double():\n"
                 "    assert double(3) == 6\n    assert double(-2) == -4\n")  # fmt: skip
    _, data = project.run_json("--quest", "scan")
    assert data["added"] == [SIGN_ID], data
    project.test("test_sign", TEST_SIGN)
    assert TEST_SIGN.splitlines()[ZERO_LINE - 1].strip() == "assert sign(0) == 1"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """`scanned` once; the tests that start from it copy it."""
    return built_template(tmp_path_factory, scanned)


def submit(project: Project, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    return project.run_json("--quest", "submit", "--quest-id", SIGN_ID, *args)


@pytest.mark.slow
def test_e2e_two_agreeing_verifiers_turn_pass_into_review(
    project: Project, template: Project
) -> None:
    project.fill_from(template)
    cite = ("tests/test_sign.py", ZERO_LINE, "assert sign(0) == 1", "zero is not a sign")
    result, data = submit(
        project, "--quest-verify", "on",
        "--quest-verifier-cmd", script("cite.py", *cite),
        "--quest-verifier-cmd", script("cite_json.py", *cite[:3]),
    )  # fmt: skip
    assert data["verdict"] == "REVIEW", data
    assert result.ret == 0
    assert data["step"] == "l2-verify"
    assert [(f["check"], f["field"]) for f in data["quest"]["facts"]] == [
        ("verify.discrepancy", f"tests/test_sign.py:{ZERO_LINE}")
    ]
    quest = project.ratchet()["quests"][SIGN_ID]
    assert quest["state"] == "REVIEW"
    record = quest["extra"]["verification"]
    assert record["verified_with_discrepancy"] is True
    assert record["discrepancies"] == [
        {
            "file": "tests/test_sign.py",
            "line": ZERO_LINE,
            "quote": "assert sign(0) == 1",
            "reason": "zero is not a sign",
            "raised_by": [script("cite.py", *cite), script("cite_json.py", *cite[:3])],
        }
    ]
    assert [call["status"] for call in record["calls"]] == ["verified-with-corrections"] * 2
    assert all(call["seconds"] > 0 for call in record["calls"])


@pytest.mark.slow
def test_e2e_a_hallucinated_line_is_dropped_and_counted(
    project: Project, template: Project
) -> None:
    project.fill_from(template)
    _, data = submit(
        project, "--quest-verify", "on",
        "--quest-verifier-cmd", script("cite.py", "tests/test_sign.py", 99, "assert sign(0) == 1"),
    )  # fmt: skip
    assert data["verdict"] == "PASS", data
    quest = project.ratchet()["quests"][SIGN_ID]
    assert quest["state"] == "PASS"
    record = quest["extra"]["verification"]
    assert record["result"] == "verified_clean"
    assert record["hallucinations"] == 1
    assert record["dropped"][0]["why"] == "tests/test_sign.py has 8 lines, no line 99"


@pytest.mark.slow
def test_e2e_verification_off_runs_no_verifier(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_QUEST_VERIFY", raising=False)
    marker = project.path / "verifier-ran.txt"
    text = (project.path / "pyproject.toml").read_text().replace(
        "[tool.pytest.ini_options]\n",
        "[tool.pytest.ini_options]\nquest_verifier_cmds = [" + repr(script("record.py", marker))
        + "]\n",
    )  # fmt: skip
    (project.path / "pyproject.toml").write_text(text)
    scanned(project)
    _, data = submit(project)
    assert data["verdict"] == "PASS", data
    assert not marker.exists()
    assert "verification" not in project.ratchet()["quests"][SIGN_ID].get("extra", {})


@pytest.mark.slow
@pytest.mark.unsandboxed  # the child's marker file, read from outside (a sandbox throws it away)
def test_e2e_verification_on_without_a_verifier_is_a_usage_error_before_any_run(
    project: Project, template: Project
) -> None:
    project.fill_from(template)
    # Scanned again before the quest's test exists (the template's order), where no sandbox starts.
    test_sign = project.path / "tests" / "test_sign.py"
    kept = test_sign.read_text()
    test_sign.unlink()
    scanned_unsandboxed(project)
    test_sign.write_text(kept)
    project.test(
        "conftest",
        """
        def pytest_configure(config):
            if config.getoption("quest_measure_only", default=None):
                open("gate-run.txt", "w").close()
        """,
    )
    before = project.ratchet()
    result, data = submit(project, "--quest-verify", "on")
    assert result.ret == 4
    assert data["error"].startswith("verification is on but there is no verifier")
    assert project.ratchet() == before
    assert not (project.path / "gate-run.txt").exists()
    # The marker does work: a submit with verification off runs the gate's child.
    _, data = submit(project)
    assert data["verdict"] == "PASS", data
    assert (project.path / "gate-run.txt").exists()


@pytest.mark.slow
@pytest.mark.children_measured
def test_e2e_a_failing_verifier_and_a_plugin_verifier(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PYTEST_QUEST_VERIFY=on; a crashing command is REVIEW naming it; a plugin is a verifier."""
    monkeypatch.setenv("PYTEST_QUEST_VERIFY", "on")
    project.test(
        "conftest",
        """
        def pytest_quest_verify(quest, tests):
            return [{"file": tests[0].file, "line": tests[0].first, "quote": "def test_sign"}]
        """,
    )
    scanned(project)
    crash = script("crash.py", 2)
    result, data = submit(project, "--quest-verifier-cmd", crash)
    assert data["verdict"] == "REVIEW", data
    assert result.ret == 0
    facts = data["quest"]["facts"]
    assert facts[0] == {
        "check": "verify.error",
        "field": crash,
        "expected": "a reply in the verification protocol",
        "actual": "exited with status 2: error: model quota exceeded",
        "message": "verifier could not confirm: exited with status 2: error: model quota exceeded",
    }
    # The plugin's finding is real, but 1 of 2 verifiers is below the majority.
    record = project.ratchet()["quests"][SIGN_ID]["extra"]["verification"]
    assert [c["verifier"] for c in record["calls"]] == [crash, "plugin tests/conftest.py"]
    assert record["below_threshold"][0]["line"] == 4
    assert record["result"] == "could_not_verify"


# -- docs/verification.md stays true ------------------------------------------------------

DOCS = paths.DOCS / "verification.md"


def test_docs_prompt_example_is_what_build_prompt_writes(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "calc.py").write_text(CALC)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_sign.py").write_text(
        TEST_SIGN.replace("    assert sign(-1) == -1\n", "")
    )
    quest = Quest(id=SIGN_ID, file="src/pkg/calc.py", qualname="sign", first=5, last=8,
                  fingerprint="")  # fmt: skip
    nodeid = "tests/test_sign.py::test_sign_of_negative_zero_and_positive"
    current = FunctionFacts(file="src/pkg/calc.py", qualname="sign", ordinal=1, start=5, first=5,
                            last=8, fingerprint="", statements=3, branches=2,
                            covering_tests=[nodeid])  # fmt: skip
    request = build_request(
        rootdir=tmp_path, quest=quest, current=current, covering_tests=[nodeid],
        changed_files=["tests/test_sign.py"], questions=3,
    )  # fmt: skip
    docs = DOCS.read_text()
    example = docs.split("<!-- prompt-example:start -->\n````text\n")[1]
    example = example.split("````\n<!-- prompt-example:end -->")[0]
    assert example == build_prompt(request)


def test_docs_reply_examples_parse_and_the_llm_script_compiles() -> None:
    docs = DOCS.read_text()
    protocol = docs.split("## The reply protocol")[1]
    text_reply = protocol.split("```text\n")[1].split("```")[0]
    reply = parse_reply(text_reply)
    assert reply.findings == (
        Finding("tests/test_sign.py", 6, "assert sign(0) == 1", 'the name claims "zero" but ...'),
    )
    json_reply = protocol.split("```json\n")[1].split("```")[0]
    assert parse_reply(json_reply).findings[0].line == 6
    script_text = docs.split("### Example: a verifier calling an LLM")[1]
    script_text = script_text.split("```python\n")[1].split("```")[0]
    compile(script_text, "verify_with_llm.py", "exec")


def test_commands_that_disagree_leave_the_pass(request_: Request) -> None:
    real = ("tests/test_new.py", 13, "assert sign(5) == sign(5)")
    verifiers = [
        CommandVerifier(script("cite.py", *real), 30, Path.cwd()),
        CommandVerifier(script("clean.py"), 30, Path.cwd()),
        CommandVerifier(script("cite.py", "src/pkg/calc.py", 6, "if x > 0:"), 30, Path.cwd()),
    ]
    verification = run_verification(request_, verifiers, threshold=None)
    passed = GateResult(Verdict.PASS, [], "pass")
    assert verification.judge(passed) is passed
    assert [(c.line, c.raised_by) for c in verification.below_threshold] == [
        (13, [verifiers[0].name])
    ]
    assert verification.dropped[0]["why"] == "the quoted code is not at src/pkg/calc.py:6"
    assert [answer.status for answer in verification.answers] == [
        "verified-with-corrections",
        "verified-clean",
        "verified-with-corrections",
    ]


def test_hook_verifiers_one_per_plugin_and_wrappers_skipped(
    request_: Request, tmp_path: Path
) -> None:
    import pluggy

    from pytest_quest.plugin import hookspecs
    from pytest_quest.verify.adapters import hook_verifiers

    manager = pluggy.PluginManager("pytest")
    manager.add_hookspecs(hookspecs)

    class Clean:
        @pytest.hookimpl
        def pytest_quest_verify(self) -> list[str]:
            return []

    class Finds:
        @pytest.hookimpl
        def pytest_quest_verify(self, tests: list[TestSource], prompt: str) -> list[str]:
            assert "## Questions" in prompt
            return [f"{tests[1].file}:13 `assert sign(5) == sign(5)` recomputed"]

    class Wraps:
        @pytest.hookimpl(wrapper=True)
        def pytest_quest_verify(self) -> Generator[None, object, object]:
            return (yield)

    manager.register(Clean(), "clean")
    manager.register(Finds(), str(tmp_path / "tests" / "conftest.py"))
    manager.register(Wraps(), "wraps")
    verifiers = hook_verifiers(manager, tmp_path)
    assert [v.name for v in verifiers] == ["plugin tests/conftest.py", "plugin clean"]
    verification = run_verification(request_, verifiers, threshold=None)
    assert (verification.voters, verification.threshold) == (2, 2)
    assert [(c.line, c.raised_by) for c in verification.below_threshold] == [
        (13, ["plugin tests/conftest.py"])
    ]
    assert hook_verifiers(pluggy.PluginManager("pytest")) == []
