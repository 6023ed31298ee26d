"""The quest commands, and the plugin object that runs them in a pytest session.

`QuestSession` is registered only when a quest command is given.  Commands
that run tests (scan, check, audit) measure in this process; ``submit`` runs
the tests under judgment in a child process (``runner.py``); the others run
no test and skip collection.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.report import text as render
from pytest_quest.core.errors import QuestError, QuestUsageError
from pytest_quest.core.gate import Evidence, GateResult, judge
from pytest_quest.core.run import CollectionError, RunReport
from pytest_quest.engine.measure import MeasuredSource, Measurement, Measurer, analyze
from pytest_quest.engine.source import new_exclusions, read_source
from pytest_quest.core.model import JSON_SCHEMA, FunctionFacts, Quest, Ratchet, State, Verdict
from pytest_quest.app.options import QuestOptions
from pytest_quest.engine.store import RatchetStore

RUNNING_COMMANDS = ("scan", "check", "audit", "_measure")


def now_utc() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def who() -> str:
    """The person acting: git's user.name, else the OS user."""
    try:
        name = subprocess.run(
            ["git", "config", "user.name"], check=False, capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        name = ""
    if name:
        return name
    try:
        return getpass.getuser()
    except Exception:  # getuser raises several kinds when no name is known
        return "unknown"


# -- measuring ------------------------------------------------------------------


def resolve_sources(rootdir: Path, given: list[Any]) -> list[str]:
    sources = []
    for item in given:
        path = Path(str(item))
        if not path.is_absolute():
            path = rootdir / path
        if not path.exists():
            raise QuestUsageError(
                f"source {item} does not exist (under {rootdir}); fix --quest-source or "
                "the quest_source ini option"
            )
        if not path.is_dir():
            # coverage.py reads a source that is no folder as a module name and
            # would silently measure nothing.
            raise QuestUsageError(
                f"source {item} is a file; --quest-source and quest_source take a folder "
                "(a package or a source tree): name the folder that holds it"
            )
        sources.append(str(path))
    return sources


def start_measuring(early_config: pytest.Config, command: str) -> Measurer | None:
    """Start coverage for a measuring command, before conftests are imported."""
    rootdir = Path(str(early_config.rootpath))
    namespace = early_config.known_args_namespace
    given = list(getattr(namespace, "quest_source", None) or [])
    if not given:
        given = list(early_config.getini("quest_source") or [])
    sources = resolve_sources(rootdir, given)
    data_dir = tempfile.mkdtemp(prefix="pytest-quest-data-")
    measurer = Measurer(rootdir, sources, os.path.join(data_dir, ".coverage"), data_dir=data_dir)
    if not sources and not measurer.cov.get_option("run:source"):
        shutil.rmtree(data_dir, ignore_errors=True)
        raise QuestUsageError(
            "no source configured: pass --quest-source PATH, or set quest_source in "
            "[tool.pytest.ini_options], or source in coverage.py's [run] section"
        )
    measurer.start()
    return measurer


# -- output ----------------------------------------------------------------------


@dataclass
class Output:
    """What a command says: a JSON object and its text rendering, and the exit status."""

    data: dict[str, Any]
    lines: list[str] = field(default_factory=list)
    exitcode: int = 0


def quest_json(
    quest: Quest,
    ratchet: Ratchet,
    options: QuestOptions,
    rootdir: Path,
    full: bool = True,
) -> dict[str, Any]:
    from pytest_quest.engine.examples import example_for

    data: dict[str, Any] = {
        "id": quest.id,
        "file": quest.file,
        "qualname": quest.qualname,
        "lines": [quest.first, quest.last],
        "state": quest.state.value,
        "tries": quest.tries,
        "max_tries": options.max_tries,
        "missing_lines": list(quest.missing_lines),
        "missing_branches": [list(arc) for arc in quest.missing_branches],
        "facts": [fact.to_dict() for fact in quest.facts],
        "statements": quest.statements,
        "branches": quest.branches,
        "covering_tests": list(quest.covering_tests),
        "issued_at": quest.issued_at,
        "passed_at": quest.passed_at,
        "submit": render.submit_command(quest.id),
    }
    extra = quest.extra_record()
    if extra:
        data["extra"] = extra
    if full:
        data["source"] = render.source_with_marks(quest, rootdir)
        data["example"] = example_for(quest, ratchet, rootdir)
    return data


# -- the session plugin ------------------------------------------------------------


class QuestSession:
    """The plugin object of one quest command in one pytest process."""

    def __init__(
        self, config: pytest.Config, options: QuestOptions, measurer: Measurement | None
    ) -> None:
        self.config = config
        self.options = options
        self.measurer = measurer
        self.rootdir = Path(str(config.rootpath))
        self.store = RatchetStore(options.quest_file, options.lock_timeout)
        self.outcomes: dict[str, str] = {}
        self.collection_errors: list[CollectionError] = []
        self.output: Output | None = None
        # pytest-xdist (xdist.py): a worker hands its data to `worker_dir`;
        # the controller combines what its workers left in `_workers_dir`.
        self.worker_dir: str | None = None
        self.worker_id = ""
        self._workers_dir: str | None = None
        # L2 (verify.py): the test files new or changed since the scan, and what
        # verification found, for the quest's record.
        self.changed_test_files: list[str] = []
        # Gate step 4 (mutants_gate.py): the mutation child's wall time.
        self.mutation_seconds: float | None = None
        self.verification: dict[str, Any] | None = None

    # -- pytest hooks --

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool | None:
        if self.options.command in RUNNING_COMMANDS:
            return None
        return True

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        if self.options.command in RUNNING_COMMANDS:
            return None
        return True

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        if self.measurer is not None:
            self.measurer.switch_context(item.nodeid)
        try:
            return (yield)
        finally:
            if self.measurer is not None:
                self.measurer.end_test(self.outcomes.get(item.nodeid) == "passed")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.outcomes[report.nodeid] = combine_outcome(self.outcomes.get(report.nodeid), report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(collection_error(report, self.rootdir))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.measurer is not None:
            self.measurer.stop()
        if self.worker_dir is not None:
            # An xdist worker: its data goes to the controller, which judges.
            from pytest_quest.engine.borrowed import BorrowedCoverage
            from pytest_quest.plugin.xdist import hand_over

            if self.measurer is not None and not isinstance(self.measurer, BorrowedCoverage):
                hand_over(self.measurer, self.worker_dir, self.worker_id)
            return
        if self._workers_dir is not None and self.measurer is not None:
            from pytest_quest.plugin.xdist import combine_workers

            combine_workers(self.measurer, self._workers_dir)
        try:
            # pytest also says INTERRUPTED after collection errors; those are the
            # commands' to report (scan: usage error, the gate's child: FAIL).
            if session.exitstatus == pytest.ExitCode.INTERRUPTED and not self.collection_errors:
                # Ctrl-C stopped the run half-way: what it measured is partial.
                raise KeyboardInterrupt
            self.output = self.run_command()
        except QuestError as exc:
            self.output = Output(
                {"error": str(exc)}, [f"ERROR: {exc}"], int(pytest.ExitCode.USAGE_ERROR)
            )
        except KeyboardInterrupt:
            # A write of the ratchet file is all or nothing; say which happened.
            done = (
                "the ratchet file was already written"
                if self.store.writes
                else "nothing was recorded"
            )
            self.output = Output(
                {"error": f"interrupted: {done}"},
                [f"INTERRUPTED: {done}; run the command again"],
                int(pytest.ExitCode.INTERRUPTED),
            )
        self.output.data = {
            "schema": JSON_SCHEMA,
            "command": self.options.command,
            **self.output.data,
        }
        session.exitstatus = self.output.exitcode
        if not self.options.json and self.options.command != "_measure":
            self.write_text(self.output.lines)

    def workers_dir(self) -> str | None:
        """The folder xdist workers copy their coverage data into (created on first use)."""
        if self._workers_dir is None and self.options.command in RUNNING_COMMANDS:
            from pytest_quest.plugin.xdist import controller_folder

            self._workers_dir = controller_folder(self.measurer)
        return self._workers_dir

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.measurer is not None and self.measurer.data_dir:
            shutil.rmtree(self.measurer.data_dir, ignore_errors=True)
        if self.output is not None and self.options.json:
            sys.stdout.write(json.dumps(self.output.data, indent=2, sort_keys=True) + "\n")
            sys.stdout.flush()

    def write_text(self, lines: list[str]) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            for line in lines:
                print(line)
            return
        if self.config.get_terminal_writer().width_of_current_line:
            reporter.write_line("")  # the `[100%]` progress line is still open
        reporter.write_sep("=", "pytest-quest", bold=True)
        for line in lines:
            reporter.write_line(line)

    # -- commands --

    def run_command(self) -> Output:
        command = self.options.command
        handler = getattr(self, f"cmd_{command.lstrip('_')}", None) if command else None
        if handler is None:
            raise QuestUsageError(f"the quest command {command!r} is not available yet")
        result: Output = handler()
        return result

    def load(self) -> Ratchet:
        if not self.store.exists():
            raise QuestUsageError(
                f"no ratchet file at {self.options.quest_file}: run `pytest --quest scan` first"
            )
        return self.store.load()

    def measured_here(self) -> MeasuredSource:
        assert self.measurer is not None
        if self.collection_errors:
            from pytest_quest.engine.source import check_syntax

            configured = self.measurer.cov.get_option("run:source")
            check_syntax(
                self.measurer.sources
                or [str(item) for item in (configured if isinstance(configured, list) else [])],
                self.rootdir,
            )
            where = "; ".join(
                (f"{e.file}:{e.line}" if e.line else e.file) + f": {e.message}"
                for e in self.collection_errors
            )
            raise QuestUsageError(
                f"collection error in the tests ({where}): fix it, then run the command again"
            )
        passed = {nodeid for nodeid, outcome in self.outcomes.items() if outcome == "passed"}
        only = self.config.getoption("quest_measure_only", default=None)
        if only is None:
            only = self.measurer.only_files()  # borrowed from pytest-cov: our sources only
        return analyze(self.measurer.cov, self.rootdir, passed, only_files=only)

    def cmd_measure(self) -> Output:
        from pytest_quest.engine.runner import measured_to_dict

        assert self.measurer is not None and self.options.measure_out
        passed = {nodeid for nodeid, outcome in self.outcomes.items() if outcome == "passed"}
        only = self.config.getoption("quest_measure_only", default=None)
        measured = analyze(self.measurer.cov, self.rootdir, passed, only_files=only)
        run = RunReport(outcomes=self.outcomes, collection_errors=self.collection_errors)
        Path(self.options.measure_out).write_text(
            json.dumps(measured_to_dict(measured, run)), encoding="utf-8"
        )
        return Output({}, [], 0)

    def cmd_scan(self) -> Output:
        from pytest_quest.core.ratchet import merge_scan
        from pytest_quest.engine.testfiles import digest_test_files

        measured = self.measured_here()
        test_files = digest_test_files(self.config, self.rootdir)
        now = now_utc()

        written: list[Ratchet] = []

        def change(ratchet: Ratchet) -> Any:
            written.append(ratchet)
            return merge_scan(
                ratchet,
                measured.functions,
                measured.excluded_functions,
                measured.config,
                test_files,
                now,
            )

        report = self.store.update(change)
        # The ratchet just written, not a re-read of it: reading a 10,000-quest
        # file back costs 0.3 s and a second copy in memory (docs/performance.md).
        ratchet = written[-1]
        not_passed = sorted(n for n, o in self.outcomes.items() if o != "passed")
        lines = [render.progress_line(ratchet)]
        lines.append(
            f"scan: {len(report.added)} new quests, {len(report.added_pass)} functions "
            f"fully covered (PASS baseline), {len(report.removed)} removed"
        )
        lines += [f"  removed: {qid}" for qid in report.removed]
        if report.config_changes:
            lines.append(
                "  coverage settings changed since the first scan: "
                + ", ".join(report.config_changes)
                + " (submits FAIL until they are restored)"
            )
        if not_passed:
            lines.append(
                f"  {len(not_passed)} tests did not pass; what they executed does not count"
            )
        lines.append("next: pytest --quest next")
        return Output(
            {
                "added": report.added,
                "added_pass": report.added_pass,
                "removed": report.removed,
                "config_changes": report.config_changes,
                "tests_not_passed": not_passed,
                "counts": ratchet.counts(),
                "remaining": ratchet.remaining,
            },
            lines,
        )

    def pick(self, ratchet: Ratchet) -> Quest | None:
        """The quest `next`/`submit` act on: --quest-id, else the active one, else the next TODO."""
        if self.options.quest_id:
            quest = ratchet.quests.get(self.options.quest_id)
            if quest is None:
                raise QuestUsageError(
                    f"unknown quest id {self.options.quest_id!r}; "
                    "`pytest --quest-status --quest-format json` lists them"
                )
            return quest
        if ratchet.active and ratchet.active in ratchet.quests:
            active = ratchet.quests[ratchet.active]
            if active.state is State.TODO:
                return active
        return ratchet.next_todo()

    def cmd_next(self) -> Output:
        ratchet = self.load()
        quest = self.pick(ratchet)
        if quest is not None and quest.state.terminal:
            raise QuestUsageError(
                f"quest {quest.id} is {quest.state.value} and cannot be worked on "
                "(PASS, REVIEW and DONE are settled)"
            )
        target = quest.id if quest else None
        if ratchet.active != target:

            def set_active(fresh: Ratchet) -> None:
                if target is None or (
                    target in fresh.quests and not fresh.quests[target].state.terminal
                ):
                    fresh.active = target

            self.store.update(set_active)
        data: dict[str, Any] = {
            "remaining": ratchet.remaining,
            "counts": ratchet.counts(),
            "quest": None,
        }
        if quest is None:
            return Output(
                data, [render.progress_line(ratchet), "nothing remains: every quest is settled"]
            )
        data["quest"] = quest_json(quest, ratchet, self.options, self.rootdir)
        lines = [render.progress_line(ratchet)] + render.quest_text(
            quest, self.options.max_tries, data["quest"]
        )
        return Output(data, lines)

    def cmd_status(self) -> Output:
        ratchet = self.load()
        markup, width = False, 80
        if self.config.pluginmanager.get_plugin("terminalreporter") is not None:
            writer = self.config.get_terminal_writer()
            markup, width = writer.hasmarkup, writer.fullwidth
        text = render.status_text(ratchet, self.options.max_tries, markup, width)
        data = {
            "remaining": ratchet.remaining,
            "counts": ratchet.counts(),
            "active": ratchet.active,
            "quests": [
                quest_json(q, ratchet, self.options, self.rootdir, full=False)
                for q in ratchet.ordered()
            ],
        }
        return Output(data, text.splitlines())

    # -- check, person actions, export (issue 3; reporting lives in ci.py and export.py) --

    def cmd_audit(self) -> Output:
        """Gate step 4 over the scan's PASS baseline; reports, changes no state (issue 4)."""
        from pytest_quest.app.mutants_gate import audit_output

        output: Output = audit_output(self)
        return output

    def cmd_check(self) -> Output:
        """The CI ratchet: every PASS quest re-measured; writes nothing but an asked-for export."""
        from pytest_quest.report import ci
        from pytest_quest.core.ratchet import check_ratchet

        ratchet = self.load()
        export = self.export_target() if self.options.export_to else None
        if self.collection_errors:
            outcome = ci.interrupted(self.collection_errors, ratchet)
        else:
            report = check_ratchet(ratchet, self.measured_here().functions)
            outcome = ci.check_outcome(report, ratchet, self.options.strict, self.outcomes)
            if ci.in_github_actions(os.environ):
                commands = ci.workflow_annotations(report, self.options.strict)
                if self.options.json:
                    # stdout carries one JSON object: workflow commands go to
                    # stderr, which the Actions runner reads for them too.  The
                    # terminal reporter is on stderr then, and may be mid-line.
                    reporter = self.config.pluginmanager.get_plugin("terminalreporter")
                    writer = self.config.get_terminal_writer() if reporter else None
                    if reporter is not None and writer and writer.width_of_current_line:
                        reporter.write_line("")
                    for command in commands:
                        sys.stderr.write(command + "\n")
                    sys.stderr.flush()
                else:
                    outcome.lines += commands
        if ci.in_github_actions(os.environ) and os.environ.get("GITHUB_STEP_SUMMARY"):
            problem = ci.append_step_summary(
                os.environ["GITHUB_STEP_SUMMARY"], ci.step_summary(outcome)
            )
            if problem:
                outcome.lines.append(f"warning: {problem}")
        if export is not None and self.collection_errors:
            # An empty list of regressions from a suite that did not run would lie.
            outcome.lines.append(f"report not written to {export[0]}: the suite did not run")
        elif export is not None:
            outcome.data["export"] = self.write_export(ratchet, export, outcome.data["regressions"])
            outcome.lines.append(f"report written to {outcome.data['export']}")
        return Output(outcome.data, outcome.lines, outcome.exitcode)

    def cmd_reopen(self) -> Output:
        from pytest_quest.core.states import reopen

        return self.person_action("reopen", self.options.reopen, reopen)

    def cmd_accept(self) -> Output:
        from pytest_quest.core.states import accept

        return self.person_action("accept", self.options.accept, accept)

    def person_action(self, action: str, quest_id: str | None, apply: Any) -> Output:
        """`reopen` or `accept` one quest, recorded with who and when; exit 4 on bad input."""
        ratchet = self.load()
        if not quest_id or quest_id not in ratchet.quests:
            raise QuestUsageError(
                f"--quest-{action} {quest_id!r}: unknown quest id; "
                "`pytest --quest-status --quest-format json` lists them"
            )
        by, now = who(), now_utc()
        current = static_facts(ratchet.quests[quest_id], self.rootdir)

        def change(fresh: Ratchet) -> None:
            target = fresh.quests.get(quest_id)
            if target is None:
                raise QuestUsageError(f"quest {quest_id} vanished from the ratchet file")
            if action == "reopen":
                # Re-issued for the code as it is now: the person has looked at it.
                apply(target, by, now, current.fingerprint if current else None)
                if current is not None:
                    shift = current.first - target.first
                    target.excluded_lines = [line + shift for line in target.excluded_lines]
                    target.first, target.last = current.first, current.last
            else:
                apply(target, by, now)
                if fresh.active == quest_id:
                    fresh.active = None

        self.store.update(change)
        ratchet = self.store.load()
        quest = ratchet.quests[quest_id]
        data = {
            "action": action,
            "by": by,
            "at": now,
            "quest": quest_json(quest, ratchet, self.options, self.rootdir, full=False),
            "counts": ratchet.counts(),
            "remaining": ratchet.remaining,
        }
        lines = [
            f"{action}: {quest_id} is now {quest.state.value} (by {by}, {now})",
            render.progress_line(ratchet),
        ]
        if action == "reopen":
            lines.append(f"work on it: pytest --quest next --quest-id {quest_id}")
        return Output(data, lines)

    def cmd_export(self) -> Output:
        """A report of every quest as recorded; runs no test."""
        if not self.options.export_to:
            raise QuestUsageError(
                "--quest export needs --quest-export-to PATH (.json, .csv, .md, .sarif)"
            )
        ratchet = self.load()
        target = self.export_target()
        written = self.write_export(ratchet, target, None)
        data = {
            "export": written,
            "format": target[1],
            "counts": ratchet.counts(),
            "remaining": ratchet.remaining,
        }
        return Output(data, [f"export: {len(ratchet.quests)} quests written to {written}"])

    def export_target(self) -> tuple[Path, str]:
        from pytest_quest.report import export

        assert self.options.export_to
        quest_file = self.options.quest_file
        return export.target(
            self.options.export_to,
            Path(str(self.config.invocation_params.dir)),
            self.options.export_force,
            [quest_file, quest_file.with_name(quest_file.name + ".lock")],
            self.options.sources,
        )

    def write_export(
        self, ratchet: Ratchet, target: tuple[Path, str], regressions: list[Any] | None
    ) -> str:
        from pytest_quest.report import export

        path, fmt = target
        quests = [
            quest_json(q, ratchet, self.options, self.rootdir, full=False)
            for q in ratchet.ordered()
        ]
        export.write(
            path, export.render(fmt, ratchet, quests, regressions, self.rootdir, now_utc())
        )
        return str(path)

    def cmd_submit(self) -> Output:
        from pytest_quest.core.states import apply_verdict, ensure_submittable, record_pass_facts

        ratchet = self.load()
        if not self.options.quest_id and not (ratchet.active and ratchet.active in ratchet.quests):
            raise QuestUsageError(
                "no active quest: run `pytest --quest next` first, or pass --quest-id ID"
            )
        quest = self.pick(ratchet)
        assert quest is not None
        if not self.options.quest_id and quest.id != ratchet.active:
            raise QuestUsageError(
                f"the active quest {ratchet.active} is settled: run `pytest --quest next`"
            )
        if self.options.verify == "on":
            from pytest_quest.plugin.verifiers import configured_verifiers

            configured_verifiers(self.config, self.options, self.rootdir)  # usage errors first
        # One judge per quest at a time (store.RatchetStore.claim, held until
        # this process ends): a second submit of it is told at once, and no
        # other process records this quest while its tests run.
        self.store.claim(quest.id)
        # Code under test that is missing or does not parse is a usage error,
        # as in scan: not a verdict (no try spent, nothing recorded).
        from pytest_quest.engine.source import check_syntax

        resolve_sources(self.rootdir, self.source_args())
        check_syntax([*self.source_args(), quest.file], self.rootdir)
        ratchet = self.load()  # as it is now that the claim is held
        quest = ratchet.quests.get(quest.id, quest)
        ensure_submittable(quest)
        before = (quest.state, quest.tries)
        # The judged cannot write the verdict (mutants_gate.VerdictGuard).
        from pytest_quest.app.mutants_gate import PROTECT_ENV, VerdictGuard

        guard = VerdictGuard(self.store.path, quest.id)
        os.environ[PROTECT_ENV] = str(self.store.path)
        try:
            result, current, run = self.judge_quest(quest, ratchet)
        finally:
            os.environ.pop(PROTECT_ENV, None)
        tampered = guard.inspect()
        if tampered:
            result = GateResult(Verdict.REVIEW, tampered, "guard")
        now = now_utc()

        def record(fresh: Ratchet) -> State:
            guard.restore_entry(fresh)
            target = fresh.quests.get(quest.id)
            if target is None:
                raise QuestUsageError(
                    f"quest {quest.id} vanished from the ratchet file during the run"
                )
            if (target.state, target.tries) != before:
                raise QuestUsageError(
                    f"quest {quest.id} was judged by another process while this one ran "
                    f"(now {target.state.value}, tries {target.tries}); nothing recorded"
                )
            state = apply_verdict(target, result, self.options.max_tries, now)
            if current is not None:
                if state is State.PASS:
                    record_pass_facts(target, current)
                else:
                    target.missing_lines = list(current.missing_lines)
                    target.missing_branches = list(current.missing_branches)
            target.last_run_seconds = round(run.duration, 3)
            if self.mutation_seconds is not None:
                target.mutation_seconds = self.mutation_seconds
            if self.verification is not None:
                target.verification = self.verification
            # A submit by --quest-id leaves another active quest active; a settled
            # or missing active quest gives way to this one (if still TODO) or the next.
            active = fresh.quests.get(fresh.active) if fresh.active else None
            if active is None or active.state.terminal:
                nxt = target if target.state is State.TODO else fresh.next_todo()
                fresh.active = nxt.id if nxt else None
            return state

        state = self.store.update(record)
        ratchet = self.store.load()
        judged = ratchet.quests[quest.id]
        data: dict[str, Any] = {
            "verdict": result.verdict.value,
            "step": result.step,
            "remaining": ratchet.remaining,
            "counts": ratchet.counts(),
            "quest": quest_json(judged, ratchet, self.options, self.rootdir),
            "next_quest": None,
        }
        lines = [
            f"{result.verdict.value}: {quest.id} is now {state.value} (tries {judged.tries}/{self.options.max_tries})"
        ]
        lines += render.facts_text(result.facts)
        nxt = ratchet.quests.get(ratchet.active) if ratchet.active else None
        if state.terminal and nxt is not None:
            data["next_quest"] = quest_json(nxt, ratchet, self.options, self.rootdir)
            lines.append("next quest:")
            lines += render.quest_text(nxt, self.options.max_tries, data["next_quest"])
        elif state is State.TODO:
            lines.append(f"submit again: {render.submit_command(quest.id)}")
        lines.append(render.progress_line(ratchet))
        exitcode = 1 if state is State.TODO else 0
        return Output(data, lines, exitcode)

    def judge_quest(
        self, quest: Quest, ratchet: Ratchet
    ) -> tuple[GateResult, FunctionFacts | None, RunReport]:
        """Run the quest's tests in a child process and judge the result (gate L1)."""
        from pytest_quest.engine.testfiles import changed_files, digest_test_files

        test_files = digest_test_files(self.config, self.rootdir)
        changed = changed_files(ratchet.test_files, test_files)
        self.changed_test_files = list(changed)
        selection = sorted(set(changed))
        changed_set = set(changed)
        for nodeid in quest.covering_tests:
            if nodeid.split("::")[0] not in changed_set and nodeid.split("::")[0] in test_files:
                selection.append(nodeid)
        run, measured = self.run_selection(selection, quest)
        current = measured.by_id().get(quest.id) if measured else None
        evidence = Evidence(quest=quest, current=current, run=run)
        if measured is not None and current is None:
            # Not measured (an omit, a file no test imports): if the function
            # is still there, it is judged as run by no test (steps 2 and 3).
            from pytest_quest.app.mutants_gate import unmeasured_facts

            evidence.current = unmeasured_facts(quest, self.rootdir)
        if measured is not None:
            evidence.config_then = ratchet.coverage_config
            evidence.config_now = measured.config
            if current is not None:
                source_lines = read_source(self.rootdir / current.file).splitlines()
                patterns = list(measured.config.get("report:exclude_lines") or [])
                evidence.new_exclusions = new_exclusions(
                    current,
                    {line - quest.first for line in quest.excluded_lines},
                    source_lines=source_lines,
                    patterns=patterns,
                )
        else:
            # The run did not complete; step 1 can still be decided from the source.
            evidence.current = static_facts(quest, self.rootdir)
        result = judge(evidence)
        if result.verdict is Verdict.PASS and current is not None:
            # Steps 4 and 5 and the project's own L1 checks only run for a
            # submission that steps 1-3 would PASS: they cost test runs.
            self.deep_checks(evidence, selection)
            result = judge(evidence)
        if result.verdict is Verdict.PASS and current is not None:
            result = self.verify_l2(evidence, result)
        return result, current, run

    def deep_checks(self, evidence: Evidence, selection: list[str]) -> None:
        """Gate steps 4 (mutants) and 5 (stability), and ``pytest_quest_l1_check`` hooks.

        Fills `evidence` in place (see ``mutants_gate.py``).
        """
        from pytest_quest.app import mutants_gate

        report = mutants_gate.deep_checks(
            self.config, evidence, self.options.timeout, self.options.mutants
        )
        if report is not None:
            self.mutation_seconds = round(report.duration, 3)

    def verify_l2(self, evidence: Evidence, result: GateResult) -> GateResult:
        """L2 verification (optional): may turn a PASS into REVIEW, never anything else.

        Off (the default): returns at once; no prompt is built, nothing runs.
        """
        if self.options.verify != "on" or result.verdict is not Verdict.PASS:
            return result
        from pytest_quest.plugin.verifiers import verify_configured

        assert evidence.current is not None
        verified, self.verification = verify_configured(
            config=self.config,
            options=self.options,
            rootdir=self.rootdir,
            quest=evidence.quest,
            current=evidence.current,
            changed_files=self.changed_test_files,
            result=result,
        )
        return verified

    def run_selection(
        self, selection: list[str], quest: Quest
    ) -> tuple[RunReport, MeasuredSource | None]:
        from pytest_quest.engine.runner import run_child

        empty_dir = None
        if not selection:
            # Nothing to run: an empty folder collects no test, and the
            # function is measured as executed by none.
            empty_dir = tempfile.mkdtemp(prefix="pytest-quest-empty-")
            selection = [empty_dir]
        try:
            inipath = self.config.inipath
            return run_child(
                selection,
                rootdir=self.rootdir,
                inifile=Path(str(inipath)) if inipath else None,
                sources=[Path(s) for s in self.source_args()],
                only_files=[quest.file],
                timeout=self.options.timeout,
                # Node ids are relative to the rootdir, whatever folder pytest was run from.
                cwd=self.rootdir,
                plugin_args=plugin_args(self.config),
            )
        finally:
            if empty_dir:
                shutil.rmtree(empty_dir, ignore_errors=True)

    def source_args(self) -> list[str]:
        return [str(p) for p in self.options.sources]


def plugin_args(config: pytest.Config) -> list[str]:
    """The ``-p`` and ``-o`` options of this invocation, for the gate's child run."""
    args = [str(a) for a in config.invocation_params.args]
    kept: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-p", "-o", "--override-ini") and index + 1 < len(args):
            value = args[index + 1]
            if not (arg == "-p" and value.startswith("no:quest")):
                kept += [arg, value]
            index += 2
            continue
        if (arg.startswith("-p") and len(arg) > 2) or arg.startswith("--override-ini="):
            kept.append(arg)
        index += 1
    return kept


def static_facts(quest: Quest, rootdir: Path) -> FunctionFacts | None:
    """The function's identity from its source alone (no measurement)."""
    from pytest_quest.engine.source import facts_from_source

    return facts_from_source(quest.id, quest.file, rootdir, all_missing=False)


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


def collection_error(report: pytest.CollectReport, rootdir: Path) -> CollectionError:
    import re

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


__all__ = ["QuestSession", "start_measuring"]
