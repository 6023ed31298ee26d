"""The plugin object of one quest command: collects outcomes, measures per test, dispatches to app/.

Registered only when a quest command is given; commands that run no test skip collection.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_quest.app.context import Context, Inputs, RunData, Terminal, resolve_sources
from pytest_quest.app.options import QuestOptions
from pytest_quest.app.preflight import preflight
from pytest_quest.core.errors import QuestError, QuestUsageError
from pytest_quest.core.run import FAILED, CollectionError, RunReport, failed_tests, passed_tests
from pytest_quest.engine import incremental as records
from pytest_quest.engine.borrowed import BorrowedCoverage
from pytest_quest.engine.measure import MeasuredSource, Measurement, Measurer, analyze
from pytest_quest.engine.runner import DATA_PARENT_ENV, measured_to_dict
from pytest_quest.engine.store import RatchetStore
from pytest_quest.engine.testfiles import FileSearch, as_recorded, digest_test_files
from pytest_quest.plugin import child_channel, selection
from pytest_quest.plugin.incremental import IncrementalRun, for_child
from pytest_quest.plugin.invocation import (
    answered,
    build_context,
    progress_steps,
    reporter_terminal,
    safe_lines,
    search_for_tests,
)
from pytest_quest.plugin.options import recorded_sources
from pytest_quest.plugin.quiet import is_quiet
from pytest_quest.plugin.xdist import combine_workers, controller_folder, hand_over
from pytest_quest.report.escape import github_json, in_github_actions
from pytest_quest.report.json import Output, dumps

if TYPE_CHECKING:
    from pytest_quest.app.check_run import SuiteRun
    from pytest_quest.engine.incremental import RunRecord

RUNNING_COMMANDS = ("scan", "check", "audit", "_measure")
# The commands whose inputs are checked before the suite runs (app/preflight.py).
PREFLIGHT_COMMANDS = ("scan", "check", "audit")


def use_case(command: str) -> Callable[[Context], Output] | None:
    """The use case of `command`, or None.

    Its module is imported when its command runs, for start-up time: a scan
    or a check does not load the gate, the mutation check and the commands
    that run no test (0.2 s of a small suite's scan).
    """
    if command == "scan":
        from pytest_quest.app.scan import scan

        return scan
    if command == "check":
        from pytest_quest.app.check import check

        return check
    if command in ("next", "status", "export", "combine"):
        from pytest_quest.app.export import export
        from pytest_quest.app.next import next_quest
        from pytest_quest.app.shard import combine
        from pytest_quest.app.status import status

        return {"next": next_quest, "status": status, "export": export, "combine": combine}[command]
    if command in ("submit", "audit"):
        from pytest_quest.app.audit import audit
        from pytest_quest.app.dispute import submit_or_dispute

        return submit_or_dispute if command == "submit" else audit
    if command in ("reopen", "accept", "exclude", "policy"):
        from pytest_quest.app.person import accept, exclude, reopen
        from pytest_quest.app.policy import change_policy

        return {"reopen": reopen, "accept": accept, "exclude": exclude, "policy": change_policy}[
            command
        ]
    return None


def start_measuring(early_config: pytest.Config) -> Measurer | None:
    """Start the gate's measuring child's coverage, before conftests are imported."""
    rootdir = Path(str(early_config.rootpath))
    namespace = early_config.known_args_namespace
    given = list(getattr(namespace, "quest_source", None) or [])
    if not given:
        given = list(early_config.getini("quest_source") or [])
    if not given:
        given = recorded_sources(early_config, rootdir)
    sources = resolve_sources(rootdir, given)
    data_dir = tempfile.mkdtemp(
        prefix="pytest-quest-data-", dir=os.environ.get(DATA_PARENT_ENV) or None
    )
    children, children_root = measure_children()
    measurer = Measurer(
        rootdir,
        sources,
        os.path.join(data_dir, ".coverage"),
        data_dir=data_dir,
        children=children,
        children_root=children_root,
    )
    if not sources and not measurer.cov.get_option("run:source"):
        shutil.rmtree(data_dir, ignore_errors=True)
        raise QuestUsageError(
            "no source configured: pass --quest-source PATH, set quest_source in the "
            "[tool.pytest] or [tool.pytest.ini_options] table of pyproject.toml, or set source in "
            "coverage.py's [run] section"
        )
    measurer.start()
    return measurer


def measure_children() -> tuple[bool, str | None]:
    """Whether to measure the processes the tests start, and the folder the judge made for
    them: as the judge's instructions say."""
    instructions = child_channel.instructions()
    folder = instructions.get("children_dir")
    return bool(instructions.get("subprocesses", True)), (
        folder if isinstance(folder, str) and os.path.isdir(folder) else None
    )


class QuestSession:
    """The plugin object of one quest command in one pytest process."""

    def __init__(
        self, config: pytest.Config, options: QuestOptions, measurer: Measurement | None
    ) -> None:
        self.config = config
        self.options = options
        self.measurer = measurer
        self.rootdir = Path(str(config.rootpath))
        self.store = RatchetStore(options.quest_file, options.lock_timeout, self.rootdir)
        self.outcomes: dict[str, str] = {}
        self.seconds: dict[str, float] = {}
        self.errors: dict[str, str] = {}  # a test that did not pass -> its error's first lines
        self.collection_errors: list[CollectionError] = []
        self.output: Output | None = None
        # pytest-xdist (xdist.py): a worker hands its data to `worker_dir`;
        # the controller combines what its workers left in `_workers_dir`.
        self.worker_dir: str | None = None
        self.worker_id = ""
        self._workers_dir: str | None = None
        # What the command read before its tests (app/preflight.py), or why it refused to run them.
        self.inputs: Inputs | None = None
        self.refused: QuestError | None = None
        self.deselected = 0
        # check, scan and audit decide here and run the suite in a child (plugin/check_judge.py).
        self.judging = options.command in ("check", "scan", "audit")
        # The exit status pytest gave this session, before the command's replaces it.
        self.pytest_status: int | None = None
        # scan, check: run only the tests a change can affect (plugin/incremental.py):
        # their child does it for its judge, as the judge's instructions say.
        self.suite: SuiteRun | None = None  # check's judge: what its child reported
        self.incremental: IncrementalRun | None = None
        if options.command == "_measure":
            self.incremental = for_child(
                config, options, measurer, child_channel.instructions().get("incremental")
            )

    # -- pytest hooks --

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Inputs are checked once, by the process that answers (not by xdist's workers).
        if self.options.command not in PREFLIGHT_COMMANDS or self.is_worker():
            return
        try:
            self.inputs = preflight(self.context())
        except QuestError as exc:
            self.refused = exc  # answered in pytest_sessionfinish; no test runs

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool | None:
        if self.judging:
            return True  # the judge imports no test module: its child collects
        if self.options.command in RUNNING_COMMANDS and self.refused is None:
            return None
        return True

    def scanned_roots(self, config: pytest.Config) -> list[str] | None:
        """The folders a check given no path collects, when not pytest's own choice; else None."""
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            return None  # a path given wins
        ratchet = self.inputs.ratchet if self.inputs is not None else None
        if ratchet is None:
            try:
                ratchet = self.store.load(lazy=True)
            except Exception:
                return None  # the command reports the file's defect
        search = FileSearch(roots=[self.rootdir / "."])
        roots = as_recorded(search, ratchet.test_paths, self.rootdir).roots
        return [str(root) for root in roots] if roots != search.roots else None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        if self.judging:
            return True
        if self.options.command in RUNNING_COMMANDS and self.refused is None:
            return None
        return True

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        # Last: after -k, -m and --deselect, so only tests the user selected are judged.
        if self.incremental is not None and self.refused is None:
            self.incremental.select(items)

    def is_worker(self) -> bool:
        return hasattr(self.config, "workerinput")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        if self.measurer is not None:
            self.measurer.switch_context(item.nodeid)
        try:
            return (yield)
        finally:
            if self.measurer is not None:
                outcome = self.outcomes.get(item.nodeid)
                self.measurer.end_test(outcome == "passed", failed=outcome in FAILED)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.outcomes[report.nodeid] = combine_outcome(self.outcomes.get(report.nodeid), report)
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration
        if report.failed and report.nodeid not in self.errors:
            self.errors[report.nodeid] = error_summary(report)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += len(items)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(collection_error(report, self.rootdir))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.incremental is not None:
            self.incremental.replay(self.outcomes, self.seconds)
        if self.measurer is not None:
            self.measurer.stop()
        if self.worker_dir is not None or hasattr(self.config, "workerinput"):
            # An xdist worker: its data goes to the controller, which judges
            # (pytest-cov's, borrowed, goes by pytest-cov's own way).
            if self.measurer is not None and self.worker_dir is not None:
                if not isinstance(self.measurer, BorrowedCoverage):
                    hand_over(self.measurer, self.worker_dir, self.worker_id)
            return
        if self._workers_dir is not None and self.measurer is not None:
            combine_workers(self.measurer, self._workers_dir)

        self.pytest_status = int(session.exitstatus)

        def run() -> Output:
            if self.refused is not None:
                raise self.refused
            # pytest also says INTERRUPTED after collection errors; those are the
            # commands' to report (scan: usage error, the gate's child: FAIL).
            if session.exitstatus == pytest.ExitCode.INTERRUPTED and not self.collection_errors:
                # Ctrl-C stopped the run half-way: what it measured is partial.
                raise KeyboardInterrupt
            if (
                session.exitstatus == pytest.ExitCode.USAGE_ERROR
                and self.options.command in RUNNING_COMMANDS
                and not self.collection_errors
            ):
                # pytest refused its arguments (a node id not found...): nothing ran.
                raise QuestUsageError("pytest stopped with a usage error; nothing was recorded")
            return self.run_command()

        output = answered(self.options.command, self.store, run)
        self.output = output
        self._finish_incremental(session, output)
        if (
            self.options.command == "scan"
            and output.exitcode == 0
            and self.pytest_status == pytest.ExitCode.TESTS_FAILED
        ):
            # The quests are recorded, and the suite still failed: say so as pytest does.
            output.exitcode = int(pytest.ExitCode.TESTS_FAILED)
        session.exitstatus = output.exitcode
        self.write_output(output)

    def write_output(self, output: Output) -> None:
        """The command's lines (JSON mode: at unconfigure); a gate child's usage error only."""
        if output.stderr:
            self.write_stderr(output.stderr)
        if self.options.command == "_measure":
            if output.exitcode == int(pytest.ExitCode.USAGE_ERROR):
                self.write_stderr(output.lines)  # its judge says it (app/check_run.py)
        elif not self.options.json:
            self.write_text(output.lines)

    def _finish_incremental(self, session: pytest.Session, output: Output) -> None:
        """Keep this run's record for the next incremental run, and say what it ran."""
        if self.suite is not None:  # check's judge: its child's part (plugin/check_judge.py)
            from pytest_quest.plugin.check_judge import finish_judged

            finish_judged(self.suite, output)
            return
        if self.incremental is None or self.options.command == "_measure":
            return  # check's child sent its part to its judge (`write_measurement`)
        whole = self.whole_run() and output.exitcode != 4
        lines, data = self.incremental.finish(self.outcomes, self.seconds, whole)
        output.lines[:0] = lines
        if data is not None and output.exitcode != 4:
            output.data["run"] = data

    def whole_run(self) -> bool:
        """The suite ran as selected: its measurement may be recorded for the next run."""
        return (
            self.refused is None
            and not self.collection_errors
            and self.pytest_status
            in (
                pytest.ExitCode.OK,
                pytest.ExitCode.TESTS_FAILED,
                pytest.ExitCode.NO_TESTS_COLLECTED,
            )
        )

    def workers_dir(self) -> str | None:
        """The folder xdist workers copy their coverage data into (created on first use)."""
        if self._workers_dir is None and self.options.command in RUNNING_COMMANDS:
            self._workers_dir = controller_folder(self.measurer)
        return self._workers_dir

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.measurer is not None and self.measurer.data_dir:
            shutil.rmtree(self.measurer.data_dir, ignore_errors=True)
        if self.output is not None and self.options.json:
            text = dumps(self.output.data)
            sys.stdout.write(github_json(text) if in_github_actions(os.environ) else text)
            sys.stdout.flush()

    # -- output --

    def write_text(self, lines: list[str]) -> None:
        lines = self.safe_lines(lines, markup=self.config.get_terminal_writer().hasmarkup)
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            for line in lines:
                print(line)
            return
        if self.config.get_terminal_writer().width_of_current_line:
            reporter.write_line("")  # the `[100%]` progress line is still open
        if self.judging or not is_quiet(self.config):  # after a test run: set apart
            reporter.write_sep("=", "pytest-quest", bold=True)
        for line in lines:
            reporter.write_line(line)

    def write_stderr(self, lines: list[str]) -> None:
        # In JSON mode the terminal reporter is on stderr too, and may be mid-line.
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and self.config.get_terminal_writer().width_of_current_line:
            reporter.write_line("")
        for line in self.safe_lines(lines, markup=False):
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def safe_lines(self, lines: list[str], *, markup: bool) -> list[str]:
        return safe_lines(lines, markup=markup)

    # -- dispatch --

    def run_command(self, view: Terminal | None = None) -> Output:
        """Run the command; `view` is the terminal when pytest's reporter is not there to ask."""
        command = self.options.command
        if command == "_measure":
            return self.write_measurement()
        if self.options.shard_out is not None:  # a CI job's part of the suite (app/shard.py)
            return self.write_shard()
        if self.judging:
            self.take_suite()
        found = use_case(command or "")
        if found is None:
            raise QuestUsageError(f"the quest command {command!r} is not available yet")
        return found(self.context(view))

    def write_shard(self) -> Output:
        """A CI job's shard: its part of the suite run in the gate's child, the shard written here."""
        from pytest_quest.app.shard import shard_out  # start-up time (see use_case)
        from pytest_quest.plugin.shards import shard_run

        with tempfile.TemporaryDirectory(prefix="pytest-quest-shard-") as folder:
            data = Path(folder) / "data"
            self.take_suite(shard_data=data)
            assert self.suite is not None
            run = shard_run(
                self.suite,
                data,
                errors=self.errors,
                test_digests=digest_test_files(
                    search_for_tests(self.config, use_args=False), self.rootdir
                ),
            )
            return shard_out(self.context(), run)

    def take_suite(self, shard_data: Path | None = None) -> None:
        """check's and scan's judge: the suite run in its child, whose run becomes this one.

        `shard_data`: where the child leaves its coverage data for a shard's judge.
        """
        from pytest_quest.plugin.check_judge import run_suite_in_child

        options = self.options
        roots = self.scanned_roots(self.config) if options.command == "check" else None
        ratchet = self.inputs.ratchet if self.inputs is not None else None
        suite = run_suite_in_child(
            self.config, options, self.context(), ratchet, roots, shard_data=shard_data
        )
        self.suite = suite
        run = suite.run
        self.outcomes.update(run.outcomes)
        self.seconds.update(suite.seconds)
        self.errors.update(run.errors)
        self.collection_errors[:] = run.collection_errors
        self.deselected = suite.deselected
        failed = any(outcome in FAILED for outcome in run.outcomes.values())
        self.pytest_status = pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK

    def context(self, view: Terminal | None = None) -> Context:
        """What the use cases need from this pytest invocation, as plain values and callables."""
        run = RunData(
            outcomes=self.outcomes,
            seconds=self.seconds,
            collection_errors=self.collection_errors,
            # Only read after a collection error (pytest-cov's object may be gone).
            measured_roots=self.measured_roots() if self.collection_errors else [],
            analyze=self.measure_source if self.measurer is not None else self.suite_measured(),
            inputs=self.inputs,
            deselected=self.deselected,
        )
        return build_context(
            self.config,
            self.options,
            store=self.store,
            run=run,
            view=view or reporter_terminal(self.config),
        )

    def measured_roots(self) -> list[str]:
        if self.judging:  # its child measured the sources it was given
            return [str(source) for source in self.options.sources]
        if self.measurer is None:
            return []
        configured = self.measurer.cov.get_option("run:source")
        return self.measurer.sources or [
            str(item) for item in (configured if isinstance(configured, list) else [])
        ]

    def suite_measured(self) -> Callable[[], MeasuredSource] | None:
        """check's judge: what its child measured (None before the child ran, or without one)."""
        measured = self.suite.measured if self.suite is not None else None
        if measured is None:
            return None
        return lambda: measured

    def measure_source(self) -> MeasuredSource:
        """What the passing tests of this run executed, function by function."""
        assert self.measurer is not None
        passed, failed = passed_tests(self.outcomes), failed_tests(self.outcomes)
        only = self.config.getoption("quest_measure_only", default=None)
        if only is None:
            only = self.measurer.only_files()  # borrowed from pytest-cov: our sources only
        notes = getattr(self.measurer, "notes", [])
        steps = progress_steps(self.config, json_mode=self.options.json)
        with steps(f"{self.options.command}: coverage of each function") as progress:

            def files_done(done: int, total: int) -> None:
                if done == 0:
                    progress.total(total)
                else:
                    progress.advance()

            return analyze(
                self.measurer.cov,
                self.rootdir,
                passed,
                only_files=only,
                notes=notes,
                failed=failed,
                files_done=files_done,
            )

    def write_measurement(self) -> Output:
        """The gate's child run: what it measured, the one message on its judge's channel."""
        assert self.measurer is not None and self.options.measure_out
        passed, failed = passed_tests(self.outcomes), failed_tests(self.outcomes)
        only = self.config.getoption("quest_measure_only", default=None)
        notes = [*getattr(self.measurer, "notes", []), *_not_collected(self.config)]
        measured = analyze(
            self.measurer.cov, self.rootdir, passed, only_files=only, notes=notes, failed=failed
        )
        run = RunReport(
            outcomes=self.outcomes, collection_errors=self.collection_errors, errors=self.errors
        )
        payload = measured_to_dict(measured, run)
        payload["deselected"] = self.deselected
        payload["seconds"] = self.seconds
        if child_channel.instructions().get("line_tests"):  # audit's: who ran each line
            payload["line_tests"] = {
                name: {str(line): sorted(tests) for line, tests in lines.items()}
                for name, lines in measured.line_tests.items()
            }
        shard = child_channel.instructions().get("shard")
        if isinstance(shard, dict):  # a CI job's shard: its judge writes it (app/shard.py)
            from pytest_quest.plugin.shards import hand_over_data  # start-up time (see use_case)

            payload["shard"] = hand_over_data(
                self.measurer,
                self.rootdir,
                str(shard.get("data")),
                measured_roots=self.measured_roots(),
                notes=list(getattr(self.measurer, "notes", [])),
                only_files=only,
            )
        if self.incremental is not None:  # check's child: its record, for its judge to write
            payload["incremental"] = self.incremental_part()
        child_channel.send(payload)
        return Output({}, [], 0)

    def incremental_part(self) -> dict[str, object]:
        """check's child's incremental run: what to say, and the record its judge writes."""
        assert self.incremental is not None
        made: list[RunRecord] = []
        self.incremental.send_record = made.append
        whole = self.whole_run()
        lines, data = self.incremental.finish(self.outcomes, self.seconds, whole)
        return {
            "lines": lines,
            "data": data,
            "whole": whole,
            "record": records.to_body(made[0]) if made else None,
        }


# -- what the use cases need from pytest ---------------------------------------------


# -- pytest's reports --------------------------------------------------------------


def combine_outcome(previous: str | None, report: pytest.TestReport) -> str:
    """One outcome per test from its setup, call and teardown reports.

    Only ``passed`` counts for coverage: a failing setup or teardown, a skip,
    an xfail and an unexpected pass of an xfail-marked test do not.
    """
    wasxfail = hasattr(report, "wasxfail")
    if report.when == "setup":
        if report.failed:
            return "error"
        if report.skipped:
            return "xfailed" if wasxfail else "skipped"
        return "setup-passed"
    if report.when == "call":
        # A test can log several call reports (subtests); a failed one fails the
        # test whatever follows.  pytest's subtests plugin marks the test's own
        # report failed only in the terminal reporter's hook, which may run after ours.
        if report.failed or previous == "failed":
            return "failed"
        if report.skipped:
            return "xfailed" if wasxfail else "skipped"
        return "xpassed" if wasxfail else "passed"
    # teardown
    if report.failed:
        return "error"
    if previous == "setup-passed":
        return "error"
    return previous or "error"


def error_summary(report: pytest.TestReport, lines: int = 3) -> str:
    """The first lines of a failed report's error (``RecursionError: ...``), one line."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = str(getattr(crash, "message", "") or "")
    if not text:
        rows = [row for row in str(report.longrepr or "").splitlines() if row.strip()]
        text = "\n".join(row[2:] for row in rows if row.startswith("E ")) or (
            rows[-1] if rows else ""
        )
    kept = [row.strip() for row in text.splitlines() if row.strip()][:lines]
    said = " | ".join(kept)
    if report.when != "call" and said:
        said = f"in {report.when}: {said}"
    return said[:300]


def collection_error(report: pytest.CollectReport, rootdir: Path) -> CollectionError:
    """A failed collection as file, line and the last line of its message."""
    text = str(report.longrepr) if report.longrepr else ""
    file = report.nodeid.split("::")[0] or report.nodeid
    line = 0
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "lineno", None):
        line = int(crash.lineno)
    else:
        matches = re.findall(r'File "([^"]+)", line (\d+)', text) or re.findall(
            r"^([^\s:]+\.py):(\d+)", text, re.MULTILINE
        )
        if matches:
            path, number = matches[-1]
            line = int(number)
            try:
                candidate = Path(os.path.relpath(Path(path).resolve(), rootdir)).as_posix()
                if not candidate.startswith(".."):
                    file = candidate
            except ValueError:
                pass
    last = [row for row in text.strip().splitlines() if row.strip()]
    message = last[-1].strip() if last else "collection failed"
    if message.startswith("E "):
        message = message[2:].strip()
    return CollectionError(file=file, line=line, message=message)


def _not_collected(config: pytest.Config) -> list[str]:
    """The tests the judge named that no longer collect, as notes of the measurement."""
    return [
        f"{nodeid} (recorded at the scan) no longer collects: judged without it"
        for nodeid in selection.missing_tests(config)
    ]
