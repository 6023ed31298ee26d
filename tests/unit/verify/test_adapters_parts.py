"""The verifier adapters' pieces: dicts to and from a child, hook findings, a command's exchange."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.model import Quest
from pytest_quest.verify.adapters import (
    AnsweredVerifier,
    CommandVerifier,
    HookVerifier,
    _hook_finding,
    _not_startable,
    _tail,
    answer_from_dict,
    answer_to_dict,
    hook_verifiers,
    request_from_dict,
    request_to_dict,
)
from pytest_quest.verify.capped import CappedReader
from pytest_quest.verify.prompt import Request, TestSource
from pytest_quest.verify.protocol import Finding
from pytest_quest.verify.vote import Answer


def _quest() -> Quest:
    return Quest(
        id="pkg/m.py::f", file="pkg/m.py", qualname="f", first=3, last=4, fingerprint="sha256:0"
    )


def _request() -> Request:
    return Request(
        quest=_quest(),
        function_file="pkg/m.py",
        function_first=3,
        function_source="def f():\n    return 1",
        tests=[TestSource("t.py::test_f", "t.py", 1, 2, "def test_f():\n    assert f() == 1")],
        questions=["Q1?", "Q2?"],
        files={"pkg/m.py": ["x"]},
    )


def test_tail_keeps_the_last_non_empty_lines_joined_and_cut() -> None:
    assert _tail("\n a \n\n b \n c \n\n") == "b | c"
    assert _tail("one", lines=3) == "one"
    assert _tail("") == ""
    assert _tail("x" * 400) == "x" * 300


def test_not_startable_names_a_program_that_cannot_run(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    plain = tmp_path / "plain.txt"
    plain.write_text("", encoding="utf-8")
    plain.chmod(0o644)
    (tmp_path / "folder").mkdir()
    assert _not_startable(str(script), Path("/")) == ""
    assert _not_startable("./run.sh", tmp_path) == ""
    assert _not_startable("./plain.txt", tmp_path) == "./plain.txt"
    assert _not_startable("./folder", tmp_path) == "./folder"
    assert _not_startable("./missing", tmp_path) == "./missing"
    assert _not_startable("sh", tmp_path) == ""
    assert (
        _not_startable("no-such-program-anywhere-5f3a", tmp_path) == "no-such-program-anywhere-5f3a"
    )


def test_request_to_dict_and_back() -> None:
    data = request_to_dict(_request(), "the prompt")
    assert data == {
        "quest": "pkg/m.py::f",
        "function_file": "pkg/m.py",
        "function_first": 3,
        "function_source": "def f():\n    return 1",
        "tests": [
            {
                "nodeid": "t.py::test_f",
                "file": "t.py",
                "first": 1,
                "last": 2,
                "text": "def test_f():\n    assert f() == 1",
            }
        ],
        "questions": ["Q1?", "Q2?"],
        "prompt": "the prompt",
    }
    request, prompt = request_from_dict(data, _quest())
    assert prompt == "the prompt"
    assert request == Request(
        quest=_quest(),
        function_file="pkg/m.py",
        function_first=3,
        function_source="def f():\n    return 1",
        tests=[TestSource("t.py::test_f", "t.py", 1, 2, "def test_f():\n    assert f() == 1")],
        questions=["Q1?", "Q2?"],
        files={},
    )


def test_request_from_dict_converts_the_types() -> None:
    data: dict[str, Any] = {
        "function_file": 7,
        "function_first": "3",
        "function_source": None,
        "tests": [],
        "questions": [1, "b"],
        "prompt": 5,
    }
    request, prompt = request_from_dict(data, _quest())
    assert (request.function_file, request.function_first, request.function_source) == (
        "7",
        3,
        "None",
    )
    assert request.questions == ["1", "b"]
    assert prompt == "5"


def test_answer_to_dict_and_back() -> None:
    answer = Answer(
        "v", 1.5, findings=[Finding("t.py", 2, "q", "r")], error="", status="s", abstained=True
    )
    data = answer_to_dict(answer)
    assert data == {
        "verifier": "v",
        "seconds": 1.5,
        "findings": [{"file": "t.py", "line": 2, "quote": "q", "reason": "r"}],
        "error": "",
        "status": "s",
        "abstained": True,
    }
    assert answer_from_dict(data) == answer


def test_answer_from_dict_defaults() -> None:
    assert answer_from_dict({"seconds": "2", "findings": []}) == Answer("plugin", 2.0)
    assert answer_from_dict(
        {"verifier": 3, "seconds": 0, "findings": [], "error": "e", "status": 1, "abstained": 1}
    ) == Answer("3", 0.0, error="e", status="1", abstained=True)


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"verifier": "v", "findings": []}, "unusable answer from the child: 'seconds'"),
        (
            {"verifier": "v", "seconds": "soon", "findings": []},
            "unusable answer from the child: could not convert string to float: 'soon'",
        ),
        (
            {"verifier": "v", "seconds": 1, "findings": [{"where": 1}]},
            "unusable answer from the child: Finding.__init__() got an unexpected keyword argument 'where'",
        ),
    ],
)
def test_answer_from_dict_of_a_malformed_answer(data: dict[str, Any], error: str) -> None:
    assert answer_from_dict(data) == Answer(data["verifier"], 0.0, error=error)


def test_an_answered_verifier_gives_its_answer() -> None:
    answer = Answer("plugin x", 0.25, status="verified-clean")
    verifier = AnsweredVerifier(answer)
    assert verifier.name == "plugin x"
    assert verifier.answer is answer
    assert verifier(_request(), "prompt") is answer


def test_hook_finding_of_each_kind() -> None:
    finding = Finding("t.py", 1, "q", "r")
    assert _hook_finding(finding) is finding
    assert _hook_finding({"file": "t.py", "line": "4", "quote": "x"}) == Finding("t.py", 4, "x", "")
    assert _hook_finding("`t.py:5` `y` weak") == Finding("t.py", 5, "y", "weak")
    with pytest.raises(TypeError) as caught:
        _hook_finding(3.5)
    assert str(caught.value) == "a finding must be a Finding, a dict or a string, not float"


def test_a_hook_verifier_keeps_its_argument_names() -> None:
    def hook(quest: Quest, prompt: str) -> None:
        return None

    verifier = HookVerifier("plugin p", hook, ("quest", "prompt"))
    assert (verifier.name, verifier.function, verifier.argnames) == (
        "plugin p",
        hook,
        ["quest", "prompt"],
    )


class _Impl:
    def __init__(
        self,
        name: str,
        function: Any,
        argnames: tuple[str, ...],
        hookwrapper: bool = False,
        wrapper: bool = False,
    ) -> None:
        self.plugin_name = name
        self.function = function
        self.argnames = argnames
        self.hookwrapper = hookwrapper
        self.wrapper = wrapper


class _Caller:
    def __init__(self, impls: list[_Impl]) -> None:
        self.impls = impls

    def get_hookimpls(self) -> list[_Impl]:
        return self.impls


class _Hooks:
    pass


class _PluginManager:
    def __init__(self, impls: list[_Impl] | None) -> None:
        self.hook = _Hooks()
        if impls is not None:
            self.hook.pytest_quest_verify = _Caller(impls)  # type: ignore[attr-defined]


def _one() -> None:
    return None


def _two() -> None:
    return None


def test_hook_verifiers_in_pluggy_call_order_without_wrappers() -> None:
    manager = _PluginManager(
        [
            _Impl("/root/conftest.py", _one, ("quest",)),
            _Impl("wrapping", _two, (), hookwrapper=True),
            _Impl("new-wrapping", _two, (), wrapper=True),
            _Impl("myplugin", _two, ("prompt", "tests")),
        ]
    )
    verifiers = hook_verifiers(manager, Path("/root"))
    assert [(v.name, v.function, v.argnames) for v in verifiers] == [
        ("plugin myplugin", _two, ["prompt", "tests"]),
        ("plugin conftest.py", _one, ["quest"]),
    ]
    assert [v.name for v in hook_verifiers(manager)] == [
        "plugin myplugin",
        "plugin /root/conftest.py",
    ]


def test_hook_verifiers_without_the_hook() -> None:
    assert hook_verifiers(_PluginManager(None)) == []
    assert hook_verifiers(_PluginManager([])) == []


def test_a_command_verifier_that_cannot_be_split_or_is_empty(tmp_path: Path) -> None:
    request = _request()
    broken = CommandVerifier("echo 'open", 5.0, tmp_path)(request, "p")
    assert (broken.verifier, broken.error) == (
        "echo 'open",
        "cannot split the command line: No closing quotation",
    )
    assert broken.seconds >= 0.0
    empty = CommandVerifier("   ", 5.0, tmp_path)(request, "p")
    assert empty.error == "empty command"
    missing = CommandVerifier("./nothing-here", 5.0, tmp_path)(request, "p")
    assert missing.error == "cannot start: [Errno 2] No such file or directory: './nothing-here'"


def _started(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


ECHO = "import sys; data = sys.stdin.buffer.read(); sys.stdout.buffer.write(data.upper()); sys.stderr.write('err')"


def test_exchange_gives_stdout_and_stderr(tmp_path: Path) -> None:
    verifier = CommandVerifier("x", 30.0, tmp_path)
    process = _started(ECHO)
    assert verifier._exchange(process, b"prompt text", time.monotonic()) == ("PROMPT TEXT", "err")
    assert process.wait() == 0


def test_exchange_of_a_flood_is_stopped_at_the_cap(tmp_path: Path) -> None:
    verifier = CommandVerifier("x", 30.0, tmp_path, max_output=2048)
    process = _started(
        "import sys, time; sys.stdout.write('x' * 5000); sys.stdout.flush(); time.sleep(30)"
    )
    try:
        problem = verifier._exchange(process, b"", time.monotonic())
    finally:
        process.kill()
        process.wait()
    assert problem == (
        "its output exceeded the cap of 2048 bytes (2 KB) and it was stopped; "
        "a verifier replies in a few kilobytes"
    )


class _InlineReader(CappedReader):
    """Reads to the end when started, in the caller's thread: never alive afterwards."""

    def start(self) -> None:
        self.run()

    def join(self, timeout: float | None = None) -> None:
        return None


def test_exchange_of_a_flood_seen_after_the_command_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("pytest_quest.verify.adapters.CappedReader", _InlineReader)
    verifier = CommandVerifier("x", 30.0, tmp_path, max_output=1000)
    process = _started("import sys; sys.stdout.write('y' * 3000)")
    process.wait()  # ended, and its output read whole before the loop: the loop never runs
    out = verifier._exchange(process, b"", time.monotonic())
    assert out == (
        "its output exceeded the cap of 1000 bytes (1000 bytes) and it was stopped; "
        "a verifier replies in a few kilobytes"
    )


def test_exchange_times_out(tmp_path: Path) -> None:
    verifier = CommandVerifier("x", 0.5, tmp_path)
    process = _started("import time; time.sleep(30)")
    try:
        problem = verifier._exchange(process, b"", time.monotonic())
    finally:
        process.kill()
        process.wait()
    assert problem == "timed out after 0.5s (--quest-verify-timeout)"
