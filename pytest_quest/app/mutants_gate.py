"""Glue between the gate and the mutation check: steps 4 and 5, L1 hooks, audit, guard.

`deep_checks` fills an :class:`~pytest_quest.core.gate.Evidence` for a
submission that steps 1-3 would PASS; `audit` runs the same check over the
scan's PASS baseline; `VerdictGuard` keeps the tests under judgment from
writing the verdict into the ratchet file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.gate import Evidence
from pytest_quest.core.run import SurvivingMutant
from pytest_quest.core.model import Fact, FunctionFacts, Ratchet, Verdict
from pytest_quest.engine.mutation import MutationReport, run_mutation_check


@dataclass
class ChildSetup:
    """How to start a child pytest like the one the user ran."""

    rootdir: Path
    inifile: Path | None
    cwd: Path
    plugin_args: list[str]
    timeout: float
    has_xdist: bool
    has_cov: bool

    @classmethod
    def of(cls, config: pytest.Config, timeout: float) -> ChildSetup:
        from pytest_quest.plugin.session import plugin_args

        inipath = config.inipath
        return cls(
            rootdir=Path(str(config.rootpath)),
            inifile=Path(str(inipath)) if inipath else None,
            # Node ids are relative to the rootdir, whatever folder pytest was run from.
            cwd=Path(str(config.rootpath)),
            plugin_args=plugin_args(config),
            timeout=timeout,
            has_xdist=config.pluginmanager.hasplugin("xdist"),
            has_cov=config.pluginmanager.hasplugin("pytest_cov"),
        )


def check_function(
    setup: ChildSetup, function: FunctionFacts, nodeids: list[str], mutants: bool
) -> MutationReport:
    """Baseline twice, then every mutant of `function`, against `nodeids` (one child)."""
    return run_mutation_check(
        nodeids,
        file=setup.rootdir / function.file,
        start=function.start,
        rootdir=setup.rootdir,
        inifile=setup.inifile,
        timeout=setup.timeout,
        cwd=setup.cwd,
        plugin_args=setup.plugin_args,
        mutants=mutants,
        has_xdist=setup.has_xdist,
        has_cov=setup.has_cov,
    )


def survivors(report: MutationReport, file: str) -> list[SurvivingMutant]:
    return [
        SurvivingMutant(
            file=file,
            line=int(m["line"]),
            original=str(m["original"]),
            mutated=str(m["mutated"]),
            operator=str(m["operator"]),
        )
        for m in report.survivors()
    ]


def deep_checks(
    config: pytest.Config, evidence: Evidence, timeout: float, mutants: bool
) -> MutationReport | None:
    """Steps 4 and 5 and the ``pytest_quest_l1_check`` hooks, filling `evidence` in place.

    Returns the mutation child's report (None when nothing could run).
    """
    function = evidence.current
    assert function is not None
    tests = sorted(function.covering_tests)
    report = None
    if not tests:
        evidence.mutation_problem = "no covering test was recorded for the function"
    else:
        report = check_function(ChildSetup.of(config, timeout), function, tests, mutants)
        if not report.completed:
            evidence.mutation_problem = report.problem
        else:
            evidence.unstable_tests = report.unstable(evidence.run.outcomes)
            # A flaky test can kill a mutant by chance: with one, step 5 decides.
            evidence.surviving_mutants = (
                [] if evidence.unstable_tests else survivors(report, function.file)
            )
            if not evidence.unstable_tests and not report.passed_again():
                evidence.mutation_problem = "no covering test passed when run again"
    evidence.extra_checks += seal_facts(evidence.quest)
    evidence.extra_checks += l1_checks(config, evidence)
    return report


def l1_checks(config: pytest.Config, evidence: Evidence) -> list[tuple[Verdict, Fact]]:
    """The project's own deterministic checks (``pytest_quest_l1_check``), FAIL or REVIEW only."""
    found: list[tuple[Verdict, Fact]] = []
    try:
        results = config.hook.pytest_quest_l1_check(
            quest=evidence.quest, function=evidence.current, run=evidence.run
        )
    except Exception as exc:  # noqa: BLE001 - a broken check cannot confirm a PASS
        return [
            (
                Verdict.REVIEW,
                Fact(
                    check="l1.error",
                    field=evidence.quest.id,
                    expected="the pytest_quest_l1_check hooks run",
                    actual=f"{type(exc).__name__}: {exc}",
                    message=f"could not confirm: an L1 check raised {type(exc).__name__}: {exc}",
                ),
            )
        ]
    for checks in results:
        for item in checks or []:
            verdict, fact = item
            if Verdict(verdict) is not Verdict.PASS:
                found.append((Verdict(verdict), fact))
    return found


# -- audit ----------------------------------------------------------------------------


@dataclass
class AuditFinding:
    id: str
    facts: list[Fact]
    problem: str = ""
    mutants: int = 0
    seconds: float = 0.0


@dataclass
class AuditReport:
    audited: list[str] = field(default_factory=list)
    findings: list[AuditFinding] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def audit(
    config: pytest.Config,
    ratchet: Ratchet,
    functions: list[FunctionFacts],
    timeout: float,
) -> AuditReport:
    """The mutation check over every PASS function of the scan baseline; changes nothing."""
    from pytest_quest.core.gate import step_mutants, step_stable
    from pytest_quest.engine.mutation import Target, run_mutation_checks

    setup = ChildSetup.of(config, timeout)
    current = {facts.quest_id: facts for facts in functions}
    report = AuditReport()
    chosen: list[tuple[Any, FunctionFacts]] = []
    for quest in ratchet.ordered():
        if quest.state.value != "PASS" or not quest.baseline:
            continue
        function = current.get(quest.id)
        if function is None:
            report.skipped[quest.id] = "not found in the current code"
        elif not function.covering_tests:
            report.skipped[quest.id] = "no passing test executes it now"
        else:
            chosen.append((quest, function))
    if not chosen:
        return report
    # One child for every function: one pytest start, one collection.  The
    # timeout is per function, as a submit's is per gate run.
    results = run_mutation_checks(
        [
            Target(setup.rootdir / f.file, f.start, tuple(sorted(f.covering_tests)))
            for _, f in chosen
        ],
        rootdir=setup.rootdir,
        inifile=setup.inifile,
        timeout=setup.timeout * len(chosen),
        cwd=setup.cwd,
        plugin_args=setup.plugin_args,
        mutants=True,
        has_xdist=setup.has_xdist,
        has_cov=setup.has_cov,
    )
    for (quest, function), result in zip(chosen, results):
        report.audited.append(quest.id)
        evidence = Evidence(quest=quest, current=function, run=_empty_run())
        if not result.completed:
            evidence.mutation_problem = result.problem
        else:
            evidence.unstable_tests = result.unstable()
            evidence.surviving_mutants = (
                [] if evidence.unstable_tests else survivors(result, function.file)
            )
            if not evidence.unstable_tests and not result.passed_again():
                evidence.mutation_problem = "no covering test passed when run again"
        decided = step_mutants(evidence) or step_stable(evidence)
        if decided is not None:
            report.findings.append(
                AuditFinding(
                    id=quest.id,
                    facts=decided.facts,
                    problem=evidence.mutation_problem,
                    mutants=len(result.mutants),
                    seconds=round(result.duration, 3),
                )
            )
    return report


def _empty_run() -> Any:
    from pytest_quest.core.run import RunReport

    return RunReport()


# -- the judged cannot write the verdict ------------------------------------------------


JUDGED_FIELDS = (
    "state",
    "tries",
    "fingerprint",
    "excluded_lines",
    "statements",
    "branches",
    "passed_at",
    "issued_at",
    "baseline",
    "history",
    "extra",
)

# The tests under judgment run with this variable naming the ratchet file;
# `protect_from_env` makes writes to it fail inside their process.
PROTECT_ENV = "PYTEST_QUEST_PROTECT"


def protect_from_env() -> None:
    """Refuse, in this process, every write to the file `PROTECT_ENV` names.

    An audit hook (PEP 578) sees ``open`` for writing, ``os.rename``,
    ``os.replace``, ``os.remove`` and ``os.truncate`` of that path and raises
    `PermissionError`.  It cannot see a subprocess or C code writing the file;
    `VerdictGuard` catches those after the run.
    """
    import os
    import sys

    target = os.environ.get(PROTECT_ENV)
    if not target:
        return
    protected = os.path.realpath(target)
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC

    def is_protected(path: Any) -> bool:
        if isinstance(path, int) or path is None:
            return False
        try:
            return os.path.realpath(os.fsdecode(path)) == protected
        except (TypeError, ValueError):
            return False

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                mode is None and isinstance(flags, int) and flags & write_flags
            )
            if writing and is_protected(path):
                raise PermissionError(f"pytest-quest: tests under judgment cannot write {target}")
        elif event in ("os.rename", "os.replace"):
            if is_protected(args[0]) or is_protected(args[1]):
                raise PermissionError(f"pytest-quest: tests under judgment cannot replace {target}")
        elif event in ("os.remove", "os.truncate") and is_protected(args[0]):
            raise PermissionError(f"pytest-quest: tests under judgment cannot change {target}")

    sys.addaudithook(hook)


class VerdictGuard:
    """What the ratchet file held before the tests under judgment ran.

    The tests run in a child process as the same user: nothing stops one
    from writing ``quest.json``.  The parent keeps the bytes it read before
    the run; afterwards, a judged quest whose entry changed was changed by
    no pytest-quest process (another submit of the same quest is refused
    before it writes), so its entry is put back and the verdict is REVIEW.
    A file left unreadable is restored whole (pytest-quest writes
    atomically, so a broken file is never one of its writes).
    """

    def __init__(self, path: Path, quest_id: str) -> None:
        self.path = path
        self.quest_id = quest_id
        self.before = path.read_bytes() if path.exists() else None
        self.facts: list[Fact] = []

    def _entry(self, ratchet: Ratchet) -> dict[str, Any] | None:
        from pytest_quest.engine.codec import quest_to_dict

        quest = ratchet.quests.get(self.quest_id)
        if quest is None:
            return None
        # A concurrent scan may move a TODO quest and refresh its missing
        # lines; only what the gate and the person actions decide counts.
        data = quest_to_dict(quest)
        return {key: data.get(key) for key in JUDGED_FIELDS}

    def inspect(self) -> list[Fact]:
        """Compare the file with the snapshot; repair a broken file; return tamper facts."""
        from pytest_quest.engine.codec import loads

        if self.before is None:
            return []
        now = self.path.read_bytes() if self.path.exists() else None
        if now == self.before:
            return []
        before = loads(self.before, str(self.path))
        try:
            after = loads(now, str(self.path)) if now is not None else None
        except RatchetFileError:
            after = None
        if after is None:
            _write_back(self.path, self.before)
            self.facts.append(self._fact("the ratchet file was deleted or broken; restored"))
        elif self._entry(after) != self._entry(before):
            self.facts.append(self._fact(f"the entry of {self.quest_id} was changed"))
        return self.facts

    def restore_entry(self, fresh: Ratchet) -> None:
        """Put the judged quest's entry back as it was before the run (under the lock)."""
        from pytest_quest.engine.codec import loads

        if self.before is None or not self.facts:
            return
        before = loads(self.before, str(self.path))
        if self.quest_id in before.quests:
            fresh.quests[self.quest_id] = before.quests[self.quest_id]

    def _fact(self, what: str) -> Fact:
        return Fact(
            check="guard.ratchet_written",
            field=str(self.path.name),
            expected="the ratchet file is written only by pytest-quest while tests are judged",
            actual=f"{what} during the gate's run",
            message=(
                f"{self.path.name} was written during the gate's run ({what}); the entry was "
                "restored and a person must review the tests"
            ),
        )


def _write_back(path: Path, data: bytes) -> None:
    from pytest_quest.engine.store import RatchetStore

    RatchetStore(path).restore(data)


__all__ = ["AuditReport", "VerdictGuard", "audit", "deep_checks", "l1_checks"]


def audit_output(session: Any) -> Any:
    """`pytest --quest audit`: the findings as an ``Output`` of ``commands.py``.

    Exit status 0 whatever is found: the audit reports on PASS quests, which
    stay PASS (the gate's PASS is immutable); CI that wants to fail on
    findings reads ``findings`` from the JSON output.
    """
    from pytest_quest.plugin.session import Output
    from pytest_quest.core.errors import QuestUsageError

    if not session.options.mutants:
        raise QuestUsageError(
            "audit is the mutation check, and --quest-mutants is off: drop "
            "--quest-mutants off (or the quest_mutants ini option) to audit"
        )
    ratchet = session.load()
    measured = session.measured_here()
    report = audit(session.config, ratchet, measured.functions, session.options.timeout)
    data = {
        "audited": report.audited,
        "findings": [
            {
                "id": finding.id,
                "facts": [fact.to_dict() for fact in finding.facts],
                "problem": finding.problem,
                "mutants": finding.mutants,
                "seconds": finding.seconds,
            }
            for finding in report.findings
        ],
        "skipped": report.skipped,
        "counts": ratchet.counts(),
        "remaining": ratchet.remaining,
    }
    lines = [
        (
            f"audit: {len(report.audited)} PASS baseline functions checked, "
            f"{len(report.findings)} run without being checked (or could not be confirmed)"
        )
    ]
    for finding in report.findings:
        lines.append(f"  {finding.id}:")
        lines += [f"    {fact.text()}" for fact in finding.facts]
    for quest_id, why in sorted(report.skipped.items()):
        lines.append(f"  skipped {quest_id}: {why}")
    lines.append("the audit changes no state: PASS quests stay PASS")
    return Output(data, lines, 0)


# -- the issued baseline is sealed ------------------------------------------------------


def issued_seal(quest: Any) -> str:
    """A digest of what the gate compares a submission with, written when a quest is issued.

    Covers the identity (id, file, qualname), the fingerprint of the code
    and the excluded lines (by offset, so the function may move) and the
    issue time.  No secret: it makes a hand edit of these fields visible, it
    does not stop someone who recomputes it (see docs/gate.md).
    """
    import hashlib
    import json

    body = {
        "id": quest.id,
        "file": quest.file,
        "qualname": quest.qualname,
        "fingerprint": quest.fingerprint,
        "excluded": sorted(line - quest.first for line in quest.excluded_lines),
        "issued_at": quest.issued_at,
    }
    text = json.dumps(body, sort_keys=True)
    return "sha256:" + hashlib.sha256(("pytest-quest-seal/1\n" + text).encode()).hexdigest()[:32]


def seal_facts(quest: Any) -> list[tuple[Verdict, Fact]]:
    """REVIEW when the quest's issued baseline does not match its seal (a hand edit)."""
    recorded = quest.issued_seal
    expected = issued_seal(quest)
    if recorded == expected:
        return []
    actual = "no seal" if not recorded else "fingerprint or excluded lines differ from the seal"
    return [
        (
            Verdict.REVIEW,
            Fact(
                check="guard.seal",
                field=f"{quest.file}:{quest.first}",
                expected="the quest's baseline as issued by the scan (sealed)",
                actual=actual,
                message=(
                    f"the ratchet entry of {quest.id} was edited by hand since it was issued "
                    "(fingerprint or excluded lines); a person must review it"
                ),
            ),
        )
    ]


def unmeasured_facts(quest: Any, rootdir: Path) -> FunctionFacts | None:
    """The function as found in its source, every statement missing (no test ran it).

    For a function the gate's run did not measure at all (its file omitted
    from measurement, or imported by no test): step 1 still sees whether it
    is the same function, step 2 whether the configuration changed, and
    step 3 lists its lines.
    """
    from pytest_quest.engine.source import facts_from_source

    return facts_from_source(quest.id, quest.file, rootdir, all_missing=True)
