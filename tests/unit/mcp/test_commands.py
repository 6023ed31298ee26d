"""pytest_quest/mcp: the tools' arguments checked and turned into a fixed pytest command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_quest.mcp import cli
from pytest_quest.mcp.commands import ArgumentError, invocation, result_of

PERSON = ("--quest-reopen", "--quest-accept", "--quest-exclude", "--quest-policy", "--quest-reason")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "test_a.py").write_text("")
    return tmp_path


@pytest.mark.parametrize(
    ("tool", "arguments", "args"),
    [
        ("quest_next", {}, ["--quest", "next", "--quest-format", "json"]),
        ("quest_scan", {}, ["--quest", "scan", "--quest-format", "json"]),
        (
            "quest_scan",
            {"paths": ["tests/unit"]},
            ["--quest", "scan", "--quest-format", "json", "tests/unit"],
        ),
        (
            "quest_next",
            {"quest_id": "src/a.py::f", "since": "origin/main"},
            [
                "--quest",
                "next",
                "--quest-format",
                "json",
                "--quest-id=src/a.py::f",
                "--quest-since=origin/main",
            ],
        ),
        ("quest_submit", {"quest_id": None}, ["--quest", "submit", "--quest-format", "json"]),
        ("quest_status", {}, ["--quest-status", "--quest-format", "json"]),
        (
            "quest_submit",
            {"dispute": "m1a2b3c4d, m00000000", "reason": "-1 and 1 give the same square"},
            [
                "--quest",
                "submit",
                "--quest-format",
                "json",
                "--quest-dispute=m1a2b3c4d,m00000000",
                "--quest-reason=-1 and 1 give the same square",
            ],
        ),
        (
            "quest_check",
            {
                "since": "main",
                "require_pass": True,
                "paths": ["tests/unit", "tests/test_a.py::test_x"],
            },
            [
                "--quest",
                "check",
                "--quest-format",
                "json",
                "--quest-since=main",
                "--quest-require-pass",
                "tests/unit",
                "tests/test_a.py::test_x",
            ],
        ),
        ("quest_check", {"require_pass": False}, ["--quest", "check", "--quest-format", "json"]),
    ],
)
def test_each_tool_runs_one_fixed_command(
    root: Path, tool: str, arguments: dict[str, object], args: list[str]
) -> None:
    called = invocation(tool, arguments, root)
    assert called.args == args
    # A dispute's reason is the one person option's name a tool passes, and only with it.
    person = [arg for arg in called.args if arg.startswith(PERSON)]
    assert person == [
        arg for arg in args if arg.startswith("--quest-reason=") and "dispute" in arguments
    ]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("quest_accept", {}, "unknown tool 'quest_accept'"),
        (
            "quest_submit",
            {"since": "main"},
            "quest_submit takes dispute, quest_id, reason; not since",
        ),
        ("quest_submit", {"dispute": "m1a2b3c4d"}, "dispute and reason go together"),
        ("quest_submit", {"reason": "same"}, "dispute and reason go together"),
        (
            "quest_submit",
            {"dispute": "m1a2b3c4d --quest-accept", "reason": "x"},
            "expected mutant ids",
        ),
        ("quest_submit", {"dispute": "-m1a2b3c4d", "reason": "x"}, "may not start with '-'"),
        ("quest_submit", {"dispute": "m1a2b3c4d", "reason": "a\nb"}, "control characters"),
        ("quest_next", {"reason": "x"}, "quest_next takes quest_id, since; not reason"),
        ("quest_next", {"quest_id": "--quest-accept=src/a.py::f"}, "may not start with '-'"),
        ("quest_next", {"quest_id": "sign"}, "expected FILE::QUALNAME"),
        ("quest_next", {"quest_id": 3}, "quest_id: expected a string, got int"),
        ("quest_next", {"quest_id": "  "}, "quest_id: expected a non-empty string"),
        ("quest_next", {"quest_id": "a.py::f\nx"}, "control characters"),
        ("quest_next", {"quest_id": "a.py::" + "f" * 1000}, "longer than 1000"),
        ("quest_status", {"since": "-n1"}, "since: may not start with '-'"),
        ("quest_check", {"require_pass": "yes"}, "require_pass: expected true or false"),
        ("quest_check", {"paths": "tests"}, "paths: expected a list"),
        ("quest_check", {"paths": ["/etc"]}, "must be relative to the project root"),
        ("quest_check", {"paths": ["../x"]}, "outside the project root"),
        ("quest_check", {"paths": ["tests/missing.py"]}, "does not exist under the project root"),
        ("quest_check", {"paths": ["-p"]}, "may not start with '-'"),
        ("quest_scan", {"quest_source": ["src"]}, "quest_scan takes paths; not quest_source"),
        ("quest_scan", {"paths": ["../x"]}, "outside the project root"),
        ("quest_scan", {"paths": ["--quest-accept=a.py::f"]}, "may not start with '-'"),
    ],
)
def test_bad_arguments_are_refused(
    root: Path, tool: str, arguments: dict[str, object], message: str
) -> None:
    with pytest.raises(ArgumentError, match=message.replace("(", r"\(").replace("[", r"\[")):
        invocation(tool, arguments, root)


def test_a_link_out_of_the_root_is_outside(
    root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    (root / "tests" / "elsewhere").symlink_to(tmp_path_factory.mktemp("other"))
    with pytest.raises(ArgumentError, match="outside the project root"):
        invocation("quest_check", {"paths": ["tests/elsewhere"]}, root)


def completed(
    stdout: bytes, code: int = 0, stderr: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.CompletedProcess([], code, stdout, stderr)


def test_the_result_is_the_printed_object_and_an_error_object_is_an_error() -> None:
    ok = result_of(
        "next", completed(b'{"schema": "pytest-quest/1", "command": "next", "quest": null}')
    )
    assert (ok.data["quest"], ok.exitcode, ok.error) == (None, 0, False)
    failed = result_of("submit", completed(b'{"verdict": "FAIL"}', 1))
    assert (failed.exitcode, failed.error) == (1, False)  # a FAIL is a verdict, not an error
    usage = result_of("next", completed(b'{"error": "unknown quest id"}', 4))
    assert (usage.exitcode, usage.error) == (4, True)


@pytest.mark.parametrize("stdout", [b"", b"not json", b"[1, 2]", b"\xff"])
def test_no_json_object_is_an_error_object_naming_stderr(stdout: bytes) -> None:
    result = result_of("check", completed(stdout, 3, b"line one\nINTERNALERROR> boom\n"))
    assert result.error and result.exitcode == 3
    assert result.data["schema"] == "pytest-quest/1" and result.data["command"] == "check"
    assert result.data["error"].startswith("pytest exited 3 without printing one JSON object")
    assert "INTERNALERROR> boom" in result.data["error"]


def test_the_console_script_refuses_a_missing_root_and_quest_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--root", str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert cli.main(["--root", str(tmp_path), "--", "--quest-accept=src/a.py::f"]) == 2
    assert (
        "quest options are not passed through: --quest-accept=src/a.py::f"
        in capsys.readouterr().err
    )


def test_the_console_script_names_the_extra_when_the_sdk_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pytest_quest.mcp.server", None)  # import fails
    assert cli.main(["--root", str(tmp_path)]) == 1
    assert 'pip install "pytest-quest[mcp]"' in capsys.readouterr().err
    options = cli.parse_args(["--root", str(tmp_path), "--", "-p", "no:cacheprovider"])
    assert options.pytest_args == ["-p", "no:cacheprovider"] and options.python == sys.executable


def test_the_console_script_serves_over_stdio_with_the_options_read_from_argv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("mcp", reason="the MCP SDK is not installed")
    from pytest_quest.mcp import server

    served: list[tuple[object, ...]] = []

    class Server:
        def __init__(self, tools: server.QuestTools) -> None:
            self.tools = tools

        def run(self, transport: str) -> None:
            served.append((self.tools.root, self.tools.python, self.tools.pytest_args, transport))

    monkeypatch.setattr(server, "build_server", Server)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        sys, "argv", ["pytest-quest-mcp", "--root", "sub/../sub", "--python", "py3", "--", "-x"]
    )
    assert cli.main() == 0
    assert served == [(tmp_path / "sub", "py3", ["-x"], "stdio")]
    assert capsys.readouterr() == ("", "")


def test_the_console_script_messages_in_full(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    assert cli.main(["--root", str(missing)]) == 2
    assert capsys.readouterr().err == f"pytest-quest-mcp: --root {missing} is not a folder\n"
    assert cli.main(["--root", str(tmp_path), "--", "-q", "--quest-id=a", "--questx"]) == 2
    assert (
        capsys.readouterr().err
        == "pytest-quest-mcp: quest options are not passed through: --quest-id=a --questx\n"
    )


def test_the_console_script_hint_when_the_sdk_is_missing_in_full(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pytest_quest.mcp.server", None)
    assert cli.main(["--root", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        'pytest-quest-mcp needs the MCP SDK: pip install "pytest-quest[mcp]" '
        "(import of pytest_quest.mcp.server halted; None in sys.modules)\n"
    )
