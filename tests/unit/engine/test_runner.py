"""A gate child over the judge's channel (engine/runner.py), and how the parents read its end.

The child here is a small script, not pytest: what is under test is the
parent's side (timeout, crash, tampering, an unreadable message), the same for
the measuring run (`run_child`) and the mutation check (`run_mutation_checks`).
"""

from __future__ import annotations

import base64
import json
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.model import FunctionFacts
from pytest_quest.core.run import RunReport
from pytest_quest.engine import mutation, processes, runner
from pytest_quest.engine.measure import MeasuredSource

CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    from pytest_quest.plugin import child_channel

    channel, mode = sys.argv[1], sys.argv[2]
    instructions = child_channel.open_channel(channel)
    print("line one")
    print("line two")
    if mode == "echo":
        child_channel.send({"echo": instructions})
    elif mode == "send":
        child_channel.send(json.loads(sys.argv[3]))
    elif mode == "forge":
        os.write(int(channel.split(",")[0]), b"not a message")
    elif mode == "sleep":
        time.sleep(60)
    elif mode == "send-hang":
        child_channel.send({"sent": True})
        time.sleep(60)
    elif mode == "forge-hang":
        from pytest_quest.engine.channel import frame
        os.write(int(channel.split(",")[0]), frame(b"0" * 16, {"forged": True}))
        time.sleep(60)
    elif mode == "send-held-hang":
        kept = os.dup(int(channel.split(",")[0]))  # its channel end held open: no end of file
        child_channel.send({"sent": True})
        time.sleep(60)
    elif mode == "send-more-hang":
        kept = os.dup(int(channel.split(",")[0]))
        child_channel.send({"sent": True})
        os.write(kept, b"more")
        time.sleep(60)
    print("last words")
    sys.exit(3)
    """
)


@pytest.fixture
def child(tmp_path: Path) -> Callable[..., Callable[[str], list[str]]]:
    """The command of the script child in `mode` (extra arguments after it)."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)

    def command(mode: str, *extra: str) -> Callable[[str], list[str]]:
        return lambda channel: [sys.executable, str(script), channel, mode, *extra]

    return command


def test_a_child_gets_the_handshake_and_its_output_is_kept(
    child: Callable[..., Callable[[str], list[str]]], tmp_path: Path
) -> None:
    ran = runner.run_over_channel(
        {"role": "measure", "n": 1}, child("echo"), cwd=tmp_path, timeout=60
    )
    assert ran.returncode is not None
    assert ran.received.payload == {"echo": {"role": "measure", "n": 1}}
    # What it wrote before its report; after it, the child may be stopped before it writes more.
    assert ran.output.split()[:4] == ["line", "one", "line", "two"]
    assert ran.tail().startswith("line one | line two")
    assert ran.duration > 0


def test_a_child_that_crashes_keeps_its_exit_status_and_output(
    child: Callable[..., Callable[[str], list[str]]], tmp_path: Path
) -> None:
    ran = runner.run_over_channel({}, child("none"), cwd=tmp_path, timeout=60)
    assert ran.returncode == 3
    assert ran.received.payload is None
    assert ran.tail() == "line one | line two | last words"


def test_a_child_over_its_time_is_stopped(
    child: Callable[..., Callable[[str], list[str]]], tmp_path: Path
) -> None:
    ran = runner.run_over_channel({}, child("sleep"), cwd=tmp_path, timeout=0.5)
    assert ran.returncode is None
    assert ran.received.payload is None
    assert 0.5 <= ran.duration < 30


def test_a_child_that_reported_and_closed_its_channel_is_stopped_at_once_its_report_stands(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What it does after (pytest's summary, its exit, a deadlocked pool finalizer, an
    # atexit handler) cannot reach the judge: the judge does not wait for it.
    monkeypatch.setattr(processes, "REPORTED_GRACE", 30)
    ran = runner.run_over_channel({}, child("send-hang"), cwd=tmp_path, timeout=20)
    assert ran.returncode is not None
    assert ran.received.payload == {"sent": True}
    assert ran.duration < 10
    assert "had not exited" not in ran.output


def test_a_child_that_reported_and_hangs_with_its_channel_held_is_stopped_at_the_grace(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # e.g. a test forked a process that kept the channel's end: it could still write.
    monkeypatch.setattr(processes, "REPORTED_GRACE", 0.5)
    ran = runner.run_over_channel({}, child("send-held-hang"), cwd=tmp_path, timeout=20)
    assert ran.returncode is not None
    assert ran.received.payload == {"sent": True}
    assert ran.duration < 15
    assert "sent its report but had not exited 0.5s later" in ran.output


def test_a_child_that_reported_then_wrote_more_before_it_was_stopped_is_tampered(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(processes, "REPORTED_GRACE", 0.5)
    ran = runner.run_over_channel({}, child("send-more-hang"), cwd=tmp_path, timeout=20)
    assert ran.received.payload is None
    assert ran.received.tampered == "4 extra bytes after the message"
    assert ran.duration < 15


def test_a_whole_frame_forged_without_the_nonce_then_a_hang_is_tampered_not_believed(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # My attack on the grace: a test writes a whole frame early and keeps the run going
    # past it, so that its own report is the only one when the child is stopped.
    monkeypatch.setattr(processes, "REPORTED_GRACE", 0.5)
    ran = runner.run_over_channel({}, child("forge-hang"), cwd=tmp_path, timeout=20)
    assert ran.received.payload is None
    assert ran.received.tampered == "a message with the wrong nonce"


def test_a_child_with_no_whole_report_still_gets_its_whole_time(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(processes, "REPORTED_GRACE", 0.1)
    ran = runner.run_over_channel({}, child("sleep"), cwd=tmp_path, timeout=2)
    assert ran.returncode is None
    assert ran.duration >= 2


def _run_child(
    command: Callable[[str], list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    timeout: float = 60,
) -> tuple[RunReport, MeasuredSource | None]:
    monkeypatch.setattr(runner, "child_command", lambda *a, channel, **k: command(channel))
    return runner.run_child(
        ["tests"], rootdir=tmp_path, inifile=None, sources=[], only_files=[],
        timeout=timeout, cwd=tmp_path,
    )  # fmt: skip


def test_the_measuring_run_reads_the_facts_it_was_sent(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    facts = FunctionFacts(
        file="src/m.py", qualname="f", ordinal=0, start=2, first=3, last=4,
        fingerprint="abc", statements=2, branches=2, missing_branches=[(3, 4)],
    )  # fmt: skip
    sent = runner.measured_to_dict(
        MeasuredSource(functions=[facts], files=["src/m.py"]),
        RunReport(outcomes={"t.py::test": "passed"}),
    )
    run, measured = _run_child(child("send", json.dumps(sent)), tmp_path, monkeypatch)
    assert run.completed and run.outcomes == {"t.py::test": "passed"}
    assert run.duration > 0
    assert measured is not None
    assert measured.functions == [facts]
    assert measured.files == ["src/m.py"]


@pytest.mark.parametrize(
    ("mode", "extra", "problem", "tampered"),
    [
        ("sleep", (), "the test run exceeded --quest-timeout (1s) and was stopped", ""),
        ("forge", (), "the test runner's report was tampered with: bytes that are not", "bytes"),
        ("crash", (), "the test runner crashed (exit status 3): line one | line two | last", ""),
        ("send", ('{"functions": 1}',), "the test runner's facts were unreadable", "a message"),
    ],
)
def test_the_measuring_run_that_did_not_end_well_is_incomplete(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    extra: tuple[str, ...],
    problem: str,
    tampered: str,
) -> None:
    # Only the sleeping child needs a short limit: the others must end on their own,
    # even on a loaded machine.
    timeout = 1 if mode == "sleep" else 60
    run, measured = _run_child(child(mode, *extra), tmp_path, monkeypatch, timeout=timeout)
    assert measured is None
    assert not run.completed
    assert run.problem.startswith(problem), run.problem
    assert run.tampered.startswith(tampered) and bool(run.tampered) == bool(tampered)


def _check(
    command: Callable[[str], list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    l1: dict[str, Any] | None = None,
    timeout: float = 60,
) -> list[mutation.MutationReport]:
    monkeypatch.setattr(mutation, "mutation_command", lambda *a, channel, **k: command(channel))
    targets = [
        mutation.Target(tmp_path / "m.py", 2, ("t.py::a",)),
        mutation.Target(tmp_path / "m.py", 9, ("t.py::b",), seed="s"),
    ]
    return mutation.run_mutation_checks(
        targets, rootdir=tmp_path, inifile=None, timeout=timeout, cwd=tmp_path, l1=l1
    )


def _function_report(problem: str, seconds: float) -> dict[str, object]:
    return {
        "problem": problem, "runs": [{"t.py::a": "passed"}], "run_seconds": [0.5],
        "mutants": [{"line": 3}], "seconds": seconds, "original_reached": ["t.py::a"],
        "detects_run": [], "probed": True,
    }  # fmt: skip


def test_the_mutation_child_reports_one_entry_per_function(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent = {
        "functions": [_function_report("", 1.5), _function_report("no baseline", 2.0)],
        "l1": [{"verdict": "PASS", "fact": "ok"}],
        "answers": "not a list",
    }
    reports = _check(child("send", json.dumps(sent)), tmp_path, monkeypatch, l1={"verify": []})
    assert [(r.completed, r.problem, r.duration) for r in reports] == [
        (True, "", 1.5), (False, "no baseline", 2.0)
    ]  # fmt: skip
    assert reports[0].runs == [{"t.py::a": "passed"}] and reports[0].mutants == [{"line": 3}]
    assert reports[0].original_reached == ["t.py::a"] and reports[0].probed
    assert reports[1].l1 == [{"verdict": "PASS", "fact": "ok"}]
    assert reports[1].answers is None
    # Without `l1` the hooks' results are not taken, whatever the child said.
    plain = _check(child("send", json.dumps(sent)), tmp_path, monkeypatch)
    assert plain[0].l1 is None


def test_the_mutation_childs_unreadable_report_is_tampering(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reports = _check(child("echo"), tmp_path, monkeypatch)
    assert [r.completed for r in reports] == [False, False]
    assert reports[0].problem.startswith("the mutation report was unreadable")
    assert reports[0].tampered.startswith("a message of the wrong shape")
    short = {"functions": [_function_report("", 1.0)]}
    reports = _check(child("send", json.dumps(short)), tmp_path, monkeypatch)
    assert reports[1].problem == "the mutation report was unreadable: 2 function reports expected"


def test_the_mutation_child_that_did_not_end_well(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slow = _check(child("sleep"), tmp_path, monkeypatch, timeout=1)
    assert [r.problem for r in slow] == [
        "the mutation check exceeded --quest-timeout (1s) and was stopped"
    ] * 2
    forged = _check(child("forge"), tmp_path, monkeypatch)
    assert all(r.tampered.startswith("bytes that are not") for r in forged)
    assert forged[0].problem.startswith("the mutation report was tampered with: bytes")
    crashed = _check(child("crash"), tmp_path, monkeypatch)
    assert crashed[1].problem == (
        "the mutation runner crashed (exit status 3): line one | line two | last words"
    )
    assert not any(r.tampered for r in slow + crashed)


class _Recorder:
    """A sandbox engine that confines nothing and records what it was asked to wrap."""

    name = "recorder"

    def __init__(
        self, contains_signals: bool, throwaway: bool = False, overlay: bool = False
    ) -> None:
        self.contains_signals = contains_signals
        self.throwaway = throwaway
        self.overlay = overlay
        self.confined: list[Any] = []
        self.env: dict[str, str] = {}

    def wrap(self, command: list[str], confinement: Any) -> list[str]:
        self.confined.append(confinement)
        return command

    def environment(self, env: dict[str, str], confinement: Any) -> dict[str, str]:
        self.env = dict(env)
        return {**env, "PQ_SANDBOXED": "1"}


@pytest.mark.parametrize("contains_signals", [True, False])
def test_a_sandboxed_child_is_wrapped_with_the_folders_the_judge_reads_back(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    contains_signals: bool,
) -> None:
    from pytest_quest.engine import sandbox
    from pytest_quest.engine.gate_signals import SIGNALS_ENV

    engine = _Recorder(contains_signals)
    monkeypatch.setenv(SIGNALS_ENV, str(tmp_path / "signals.log"))
    monkeypatch.setattr(sandbox, "_ACTIVE", [engine])
    bound = tmp_path / "bound"
    bound.mkdir()
    ran = runner.run_over_channel(
        {"n": 1}, child("echo"), cwd=tmp_path, timeout=60, bound=(str(bound),)
    )
    assert ran.received.payload == {"echo": {"n": 1}}
    (confined,) = engine.confined
    assert confined.project == tmp_path and bound in confined.bound
    # The signal log is bound only where the engine lets signals out (it is then still watched).
    assert (tmp_path / "signals.log" in confined.bound) is not contains_signals
    assert not confined.scratch.exists()  # removed with the run


@pytest.mark.parametrize("overlay", [True, False])
def test_the_child_is_told_the_project_is_a_throwaway_layer_only_where_it_is(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    overlay: bool,
) -> None:
    # The mutation child writes its mutants into the project's files only where
    # the engine gives the run a throwaway layer over it (engine/ondisk.py).
    from pytest_quest.engine import sandbox

    monkeypatch.setattr(sandbox, "_ACTIVE", [_Recorder(True, overlay=overlay)])
    ran = runner.run_over_channel({"n": 1}, child("echo"), cwd=tmp_path, timeout=60)
    expected = {"n": 1, "overlay": str(tmp_path)} if overlay else {"n": 1}
    assert ran.received.payload == {"echo": expected}


@pytest.mark.parametrize("throwaway", [True, False])
def test_the_ratchet_file_is_guarded_in_the_judged_only_where_the_engine_leaves_it_writable(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    throwaway: bool,
) -> None:
    from pytest_quest.engine import sandbox
    from pytest_quest.engine.guard import PROTECT_ENV, REFUSED_ENV

    engine = _Recorder(contains_signals=True, throwaway=throwaway)
    monkeypatch.setenv(PROTECT_ENV, str(tmp_path / "quest.json"))
    monkeypatch.setenv(REFUSED_ENV, str(tmp_path / "refused.log"))
    monkeypatch.setattr(sandbox, "_ACTIVE", [engine])
    runner.run_over_channel({"n": 1}, child("echo"), cwd=tmp_path, timeout=60)
    assert (PROTECT_ENV in engine.env, REFUSED_ENV in engine.env) == (not throwaway, not throwaway)


def test_an_unsandboxed_child_is_started_as_given(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_quest.engine import sandbox

    monkeypatch.setattr(sandbox, "_ACTIVE", [None])
    ran = runner.run_over_channel({"n": 2}, child("echo"), cwd=tmp_path, timeout=60)
    assert ran.received.payload == {"echo": {"n": 2}}


def test_the_clean_search_is_timed_once_for_every_function_of_the_child(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searched: list[list[Any]] = []

    def search_cleanly(pairs: list[Any], **_: Any) -> float:
        searched.append(pairs)
        return 1.25

    monkeypatch.setattr(mutation, "search_cleanly", search_cleanly)
    sent = {"functions": [_function_report("", 1.5), _function_report("", 2.0)]}
    reports = _check(child("send", json.dumps(sent)), tmp_path, monkeypatch)
    (pairs,) = searched
    assert [mutants for _, mutants in pairs] == [[{"line": 3}], [{"line": 3}]]
    assert reports[0].phases["clean_search"] == 1.25 and "clean_search" not in reports[1].phases


def test_a_check_without_mutants_starts_no_clean_search(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def search_cleanly(pairs: list[Any], **_: Any) -> float:
        raise AssertionError("no mutant ran: nothing to search")

    monkeypatch.setattr(mutation, "search_cleanly", search_cleanly)
    monkeypatch.setattr(mutation, "mutation_command", lambda *a, channel, **k: child("send", json.dumps(
        {"functions": [_function_report("", 1.5)]}))(channel))  # fmt: skip
    (report,) = mutation.run_mutation_checks(
        [mutation.Target(tmp_path / "m.py", 2, ("t.py::a",))],
        rootdir=tmp_path, inifile=None, timeout=60, cwd=tmp_path, mutants=False,
    )  # fmt: skip
    assert report.completed and "clean_search" not in report.phases


def test_a_child_that_keeps_its_writes_is_told_of_no_throwaway_layer(
    child: Callable[..., Callable[[str], list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # check's child keeps what it writes in the project (pytest-cov's reports): it is
    # confined to the project given, and no mutant is written into a file there.
    from pytest_quest.engine import sandbox

    engine = _Recorder(True, overlay=True)
    monkeypatch.setattr(sandbox, "_ACTIVE", [engine])
    project = tmp_path / "project"
    project.mkdir()
    ran = runner.run_over_channel(
        {"n": 1}, child("echo"), cwd=tmp_path, timeout=60, project=project, keep_writes=True
    )
    assert ran.received.payload == {"echo": {"n": 1}}
    (confined,) = engine.confined
    assert confined.project == project and confined.keep_writes


def _config(data_file: str) -> str:
    return base64.b64encode(json.dumps({"data_file": data_file, "branch": True}).encode()).decode()


def _data_file(raw: str) -> str:
    return str(json.loads(base64.b64decode(raw))["data_file"])


def test_coverage_data_named_outside_the_writable_tree_is_written_in_the_judges_folder(
    tmp_path: Path,
) -> None:
    project, user, workdir = tmp_path / "project", tmp_path / "user", tmp_path / "work"
    for folder in (project, user, workdir):
        folder.mkdir()
    env = {
        "COVERAGE_FILE": str(user / ".cov"),
        "COVERAGE_PROCESS_CONFIG": _config(str(user / ".c")),
    }
    moved = runner.coverage_outputs(env, workdir, project, keep_writes=True)
    assert env["COVERAGE_FILE"] == str(workdir / "coverage-file" / ".cov")
    assert _data_file(env["COVERAGE_PROCESS_CONFIG"]) == str(workdir / "coverage-process" / ".c")
    (workdir / "coverage-file" / ".cov").write_text("data")
    (workdir / "coverage-process" / ".c.host.pid2.x").write_text("part")
    (workdir / "coverage-process" / ".cx").write_text("another name")
    (workdir / "coverage-process" / ".c.link").symlink_to(tmp_path / "elsewhere")
    runner.copy_coverage_outputs(moved)
    assert sorted(path.name for path in user.iterdir()) == [".c.host.pid2.x", ".cov"]
    assert (user / ".cov").read_text() == "data"


def test_coverage_data_the_run_may_write_where_it_is_named_stays_there(tmp_path: Path) -> None:
    project = tmp_path / "project"
    inside = str(project / ".coverage")
    env = {"COVERAGE_FILE": inside, "COVERAGE_PROCESS_CONFIG": _config(inside)}
    assert runner.coverage_outputs(dict(env), tmp_path, project, keep_writes=True) == []
    # A run whose writes to the project vanish: only the data a process hands on moves.
    moved = runner.coverage_outputs(env, tmp_path, project, keep_writes=False)
    assert env["COVERAGE_FILE"] == inside
    assert moved == [(tmp_path / "coverage-process", project, ".coverage")]
    bad = {"COVERAGE_PROCESS_CONFIG": "not base64 json"}
    assert runner.coverage_outputs(bad, tmp_path, project, keep_writes=False) == []
    assert bad == {"COVERAGE_PROCESS_CONFIG": "not base64 json"}
