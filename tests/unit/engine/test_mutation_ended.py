"""A mutation child that sent no report: a crash is REVIEW, a kill from outside no verdict."""

from __future__ import annotations

import signal
from pathlib import Path

from pytest_quest.engine.channel import Received
from pytest_quest.engine.mutation import MutationReport, _ended_early
from pytest_quest.engine.runner import ChannelRun

OUTPUT = "collected 1 item\n\ntests/test_sign.py .\n"


def failed(problem: str, duration: float) -> list[MutationReport]:
    return [MutationReport(completed=False, problem=problem, duration=duration) for _ in range(2)]


def test_a_signal_the_gate_did_not_send_names_itself_the_child_and_the_output() -> None:
    ran = ChannelRun(128 + signal.SIGKILL, Received(), OUTPUT, 1.5)
    reports = _ended_early(ran, failed)
    assert len(reports) == 2
    for report in reports:
        assert not report.completed
        assert report.environment.startswith("killed by signal SIGKILL, not sent by the gate")
        assert report.environment.endswith("(the mutation child, step 4)")
        assert report.output_tail == ["collected 1 item", "tests/test_sign.py ."]
        assert "last output: collected 1 item" in report.problem
        assert report.problem.endswith("tests/test_sign.py .")
        assert report.duration == 1.5


def test_the_interpreter_failing_to_start_is_an_environment_failure() -> None:
    ran = ChannelRun(127, Received(), "", 0.1)
    (report,) = _ended_early(ran, lambda p, d: [MutationReport(completed=False, problem=p)])
    assert "the interpreter failed to start" in report.environment
    assert "last output: (none)" in report.problem


def test_a_crash_of_the_code_under_test_stays_could_not_confirm() -> None:
    ran = ChannelRun(
        128 + signal.SIGSEGV, Received(), "Fatal Python error: Segmentation fault", 1.0
    )
    (report,) = _ended_early(ran, lambda p, d: [MutationReport(completed=False, problem=p)])
    assert report.environment == ""
    assert report.output_tail == []
    assert report.problem.startswith(f"the mutation runner crashed (exit status {128 + 11})")


class _Started:
    """A mutation child started before its work: it is given the handshake, and ends as told."""

    def __init__(self, ran: ChannelRun) -> None:
        self.ran = ran
        self.given: list[dict[str, object]] = []

    def run(self, instructions: dict[str, object], timeout: float) -> ChannelRun:
        self.given.append(instructions)
        return self.ran


def test_a_pre_started_child_gets_the_work_and_its_end_is_judged_as_any(tmp_path: Path) -> None:
    from pytest_quest.engine.mutation import Target, _run_checks

    source = tmp_path / "calc.py"
    source.write_text("def sign(x):\n    return 1 if x > 0 else -1\n")
    started = _Started(ChannelRun(None, Received(), "", 2.0))
    reports = _run_checks(
        [Target(source, 1, ("tests/test_calc.py::test_sign",))],
        ["tests/test_calc.py::test_sign"],
        "",
        lambda p, d: [MutationReport(completed=False, problem=p, duration=d)],
        rootdir=tmp_path, inifile=None, timeout=5.0, cwd=tmp_path, plugin_args=None,
        mutants=False, has_xdist=False, has_cov=False, l1=None,
        started=started,  # type: ignore[arg-type]
    )  # fmt: skip
    (given,) = started.given
    assert given["role"] == "check"
    (report,) = reports
    assert not report.completed
    assert report.problem == "the mutation check exceeded --quest-timeout (5s) and was stopped"
