"""`pytest --quest submit`: judge the active quest's tests in a child run and record the verdict.

Read top to bottom: load and claim the quest, run its tests, judge, record, render.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_quest.app import submit_output
from pytest_quest.app.context import Context, load_ratchet, now_utc, resolve_sources
from pytest_quest.app.deep_checks import deep_checks
from pytest_quest.app.environment import begin_submit, outside_cause, record_outside_failure
from pytest_quest.app.next import pick
from pytest_quest.app.policy import ADDED_NOTE, ensure_policy, submit_policy, with_policy
from pytest_quest.app.sandbox import enter_sandbox
from pytest_quest.app.submit_checks import (
    NotCollected,
    refuse_unchanged,
    refuse_uncollected,
    unbegin,
)
from pytest_quest.core.environment import with_signal_attempts
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import Evidence, GateResult, judge
from pytest_quest.core.model import Fact, FunctionFacts, Quest, Ratchet, State, Verdict
from pytest_quest.core.policy import POLICY_ACTION
from pytest_quest.core.run import RunReport
from pytest_quest.core.seal import config_digest
from pytest_quest.core.states import apply_verdict, ensure_submittable, kept_fail, record_pass_facts
from pytest_quest.engine import prestart, sandbox
from pytest_quest.engine.guard import VerdictGuard
from pytest_quest.engine.measure import MeasuredSource
from pytest_quest.engine.mutation import MutationReport
from pytest_quest.engine.runner import run_child
from pytest_quest.engine.source import (
    check_syntax,
    facts_from_source,
    new_exclusions,
    new_partial_exclusions,
    read_source,
)
from pytest_quest.engine.startup_files import startup_watch, with_startup_changes
from pytest_quest.engine.testfiles import changed_files, digest_test_files, kept_covering_tests
from pytest_quest.report.json import Output
from pytest_quest.verify.adapters import (
    AnsweredVerifier,
    Verifier,
    answer_from_dict,
    request_to_dict,
    verify_submission,
)
from pytest_quest.verify.prompt import build_prompt, build_request
from pytest_quest.verify.vote import excluded_by


@dataclass
class Judgement:
    """The gate's verdict on one submission, and what the quest's record keeps of the run."""

    result: GateResult
    current: FunctionFacts | None
    run: RunReport
    mutation_seconds: float | None = None
    verification: dict[str, Any] | None = None
    mutation: MutationReport | None = None  # steps 4-5's report, if they ran
    #: Set when the run could not complete for a reason outside the submission.
    environment: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)  # what the measuring run left out
    #: What was judged (engine/submitted.py `judged_digest`), kept on a FAIL.
    digest: str = ""
    #: The test files the run was given (whole, or some of their tests).
    files: list[str] = field(default_factory=list)


def submit(
    ctx: Context, *, judging: Callable[[Context, Quest], Callable[..., Judgement]] | None = None
) -> Output:
    """Judge the quest (active, or ``--quest-id``); exit 1 while it stays TODO (`judging`: a dispute's)."""
    quest, ratchet, verifiers = claim_quest(ctx)
    # Not the same tests on the same code twice (a dispute judges something else).
    judged = refuse_unchanged(ctx, quest) if judging is None else ""
    judge_with = judge_quest if judging is None else judging(ctx, quest)
    # Written ahead: a judge killed from here on still counts (core/environment.py).
    ratchet, quest, stopped = begin_submit(ctx, quest.id, now_utc())
    if stopped is not None:
        result, environment = stopped
        return submit_output.said(
            ctx, quest.id, result, State.REVIEW, ratchet, environment=environment
        )
    guard = VerdictGuard(ctx.store.path, quest.id, ctx.store)
    startup = startup_watch()  # nor plant code in the next judge (engine/startup_files.py)
    try:
        # The judged cannot write the verdict (engine/guard.py), nor kill the gate.
        os.environ.update(guard.judged_env())
        try:
            judgement = judge_with(ctx, quest, ratchet, verifiers)
        except BaseException as exc:
            # No verdict to record, but a forgery made before the failure is still undone.
            undo_forgery(ctx, guard)
            if isinstance(exc, NotCollected):
                unbegin(ctx, quest.id)  # nothing was judged: not a run that could not complete
            raise
        finally:
            for name in guard.judged_env():
                os.environ.pop(name, None)
            planted = startup.restore() if startup is not None else []
        judgement.digest = judged
        judgement.result = with_startup_changes(judgement.result, planted)
        judgement.result = with_signal_attempts(judgement.result, guard.signal_lines())
        state, written = record(
            ctx,
            quest=quest,
            judgement=judgement,
            now=now_utc(),
            guard=guard,
        )
    finally:
        guard.close()
    output = submit_output.said(
        ctx, quest.id, judgement.result, state, written, environment=judgement.environment
    )
    output.lines += [f"left out: {note}" for note in judgement.notes]
    if quest.config_digest is None:
        output.lines.append(
            "note: this quest was issued before the coverage configuration was sealed; "
            "step 2 compared the ratchet file's own coverage_config"
        )
    if ratchet.policy is None and written.policy is not None:
        output.lines.append(
            ADDED_NOTE.format(policy=written.policy.compact(), action=POLICY_ACTION)
        )
    return output


def claim_quest(ctx: Context) -> tuple[Quest, Ratchet, list[Verifier]]:
    """The quest to judge, claimed for this process, and the ratchet as it is once claimed.

    Every usage error comes before any test runs: no active quest, a settled
    one, a verification setup that cannot work, missing or broken code.
    """
    ratchet = load_ratchet(ctx)
    # The recorded gate policy, tightened by this run's options (weakening: exit 4).
    ctx.options = with_policy(
        ctx.options, submit_policy(ctx.options, ratchet, ctx.rootdir), ctx.rootdir
    )
    enter_sandbox(ctx, ctx.options.policy)  # none where one is required: exit 4, nothing recorded
    quest_id = ctx.options.quest_id
    if not quest_id and not (ratchet.active and ratchet.active in ratchet.quests):
        raise QuestUsageError(
            "no active quest: run `pytest --quest next` first, or pass --quest-id ID"
        )
    quest = pick(ratchet, quest_id)
    assert quest is not None
    if not quest_id and quest.id != ratchet.active:
        raise QuestUsageError(
            f"the active quest {ratchet.active} is settled: run `pytest --quest next`"
        )
    verifiers = ctx.verifiers() if ctx.options.verify == "on" else []
    # One judge per quest at a time (RatchetStore.claim, held until this
    # process ends): a second submit of it is told at once, and no other
    # process records this quest while its tests run.
    ctx.store.claim(quest.id)
    # Code under test that is missing or does not parse is a usage error,
    # as in scan: not a verdict (no try spent, nothing recorded).
    sources = [str(p) for p in ctx.options.sources]
    roots = resolve_sources(ctx.rootdir, sources)
    check_syntax(_with_quest_file(sources, roots, quest.file, ctx.rootdir), ctx.rootdir)
    # Read again now that the claim is held: another process may have judged it.
    ratchet = load_ratchet(ctx)
    quest = ratchet.quests.get(quest.id, quest)
    ensure_submittable(quest)
    return quest, ratchet, verifiers


def _with_quest_file(sources: list[str], roots: list[str], file: str, rootdir: Path) -> list[str]:
    """The sources, plus the quest's file when it lies outside them (each file parsed once)."""
    path = (rootdir / file).resolve()
    if any(path.is_relative_to(Path(root).resolve()) for root in roots):
        return sources
    return [*sources, file]


def judge_quest(
    ctx: Context,
    quest: Quest,
    ratchet: Ratchet,
    verifiers: list[Verifier],
    *,
    assume: Callable[[FunctionFacts], FunctionFacts] | None = None,
) -> Judgement:
    """Run the quest's tests in a child process and judge them (L1, then L2).

    The changed test files that name the function run first, with its
    covering tests: a PASS there stands (those tests alone meet every step).
    Any other verdict is judged again with every test file changed since the
    scan (docs/gate.md, "What a submit runs").  `assume`: the measured facts
    as the gate judges them (a dispute's lines taken as reached); the
    judgement keeps the measured ones.
    """
    test_files = digest_test_files(ctx.tests, ctx.rootdir)
    changed = changed_files(ratchet.test_files, test_files)
    reopened = any(event.action == "reopen" for event in quest.history)
    if not reopened:
        naming = naming_files(ctx.rootdir, changed, quest)
        if len(naming) < len(changed):
            first = judge_files(ctx, quest, ratchet, verifiers, test_files, naming, assume=assume)
            if first.result.verdict is Verdict.PASS:
                left = len(changed) - len(naming)
                first.notes.append(
                    f"{left} changed test file{'s' if left != 1 else ''} not naming "
                    f"{quest.qualname.rpartition('.')[2]} left out: its tests passed without them"
                )
                return first
    return judge_files(
        ctx, quest, ratchet, verifiers, test_files, changed, every=reopened, assume=assume
    )


def naming_files(rootdir: Path, changed: list[str], quest: Quest) -> list[str]:
    """The changed test files whose text names the quest's function (its last name part).

    Which files run first only: a verdict other than PASS on them is judged
    again with every changed file, so a file this misses costs time, never a verdict.
    """
    name = quest.qualname.rpartition(".")[2]
    found = []
    for path in changed:
        try:
            text = (rootdir / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = name  # unreadable here: let the run say what it is
        if name in text:
            found.append(path)
    return found


def judge_files(
    ctx: Context,
    quest: Quest,
    ratchet: Ratchet,
    verifiers: list[Verifier],
    test_files: dict[str, str],
    changed: list[str],
    *,
    every: bool = False,
    assume: Callable[[FunctionFacts], FunctionFacts] | None = None,
) -> Judgement:
    """Judge the quest on the `changed` test files and its covering tests (`every`: all files)."""
    selection = sorted(set(changed))
    changed_set = set(changed)
    if every:
        # A person reopened it: its covering tests are the list of an earlier scan, and a
        # test added since (then rescanned) is in none of them: every test file runs.
        selection = sorted(test_files)
    selection += kept_covering_tests(
        quest.covering_tests, changed_set | set(selection), test_files, ctx.rootdir
    )
    # The mutation child starts with the measuring run (its start needs no result of it).
    with prestart.prestarted(mutation_launch(ctx), ctx.options.timeout):
        run, source = run_selection(ctx, selection, quest)
        refuse_uncollected(run, changed)
        current = source.by_id().get(quest.id) if source else None
        evidence = gather_evidence(
            ctx, quest, ratchet=ratchet, run=run, source=source, current=current
        )
        evidence.submitted = list(changed)
        if assume is not None and evidence.current is not None:
            evidence.current = assume(evidence.current)
        notes = list(source.notes) if source else []
        judgement = Judgement(judge(evidence), current, run, notes=notes)
        judgement.files = sorted({item.split("::")[0] for item in selection})
        report = None
        if judgement.result.verdict is Verdict.PASS and current is not None:
            # Steps 4 and 5 and the project's own L1 checks only run for a
            # submission that steps 1-3 would PASS: they cost test runs.
            report = deep_checks(ctx, evidence, plugin_verify_request(ctx, evidence, changed))
            if report is not None:
                judgement.mutation_seconds = round(report.duration, 3)
                judgement.mutation = report
            judgement.result = judge(evidence)
    if (
        ctx.options.verify == "on"
        and judgement.result.verdict is Verdict.PASS
        and current is not None
    ):
        # The project's plugin verifiers were asked in the mutation child.
        answered = [answer_from_dict(a) for a in (report.answers or [])] if report else []
        judgement.result, judgement.verification = verify_l2(
            ctx,
            evidence,
            judgement.result,
            changed=changed,
            verifiers=[*verifiers, *(AnsweredVerifier(a) for a in answered)],
        )
    return judgement


def mutation_launch(ctx: Context) -> prestart.Launch:
    """How the mutation child of this submit starts (app/deep_checks.py `check_function`'s)."""
    policy = ctx.options.policy
    return prestart.Launch(
        rootdir=ctx.rootdir,
        inifile=ctx.child.inifile,
        plugin_args=tuple(ctx.child.plugin_args),
        cwd=ctx.rootdir,
        subprocesses=policy.subprocesses if policy is not None else True,
        mutants=ctx.options.mutants,
        sources=tuple(str(source) for source in ctx.options.sources),
    )


def gather_evidence(
    ctx: Context,
    quest: Quest,
    *,
    ratchet: Ratchet,
    run: RunReport,
    source: MeasuredSource | None,
    current: FunctionFacts | None,
) -> Evidence:
    """What the gate's steps 1-3 compare: the quest as issued and the function as measured now.

    `current` is the function in `source` (None when the run did not measure it).
    """
    evidence = Evidence(quest=quest, current=current, run=run)
    if source is None:
        # The run did not complete; step 1 can still be decided from the source.
        evidence.current = facts_from_source(quest.id, quest.file, ctx.rootdir, all_missing=False)
        return evidence
    if current is None:
        # Not measured (an omit, a file no test imports): if the function
        # is still there, it is judged as run by no test (steps 2 and 3).
        evidence.current = unmeasured_facts(quest, ctx.rootdir)
    evidence.config_then = ratchet.coverage_config
    evidence.config_now = source.config
    if current is not None:
        evidence.line_tests = source.line_tests.get(current.file, {})
        source_lines = read_source(ctx.rootdir / current.file).splitlines()
        patterns = list(source.config.get("report:exclude_lines") or [])
        evidence.new_exclusions = new_exclusions(
            current,
            {line - quest.first for line in quest.excluded_lines},
            source_lines=source_lines,
            patterns=patterns,
        )
        evidence.new_exclusions += new_partial_exclusions(
            current,
            quest.partial_lines,
            source_lines=source_lines,
            patterns=[str(p) for p in source.config.get("report:partial_branches") or []],
        )
    evidence.sealed_config = quest.config_digest
    evidence.config_digest_now = config_digest(source.config, ratchet.policy)
    return evidence


def unmeasured_facts(quest: Quest, rootdir: Path) -> FunctionFacts | None:
    """The function as found in its source, every statement missing (no test ran it).

    For a function the gate's run did not measure at all (its file omitted
    from measurement, or imported by no test): step 1 still sees whether it
    is the same function, step 2 whether the configuration changed, and
    step 3 lists its lines.
    """
    return facts_from_source(quest.id, quest.file, rootdir, all_missing=True)


def run_selection(
    ctx: Context, selection: list[str], quest: Quest
) -> tuple[RunReport, MeasuredSource | None]:
    """Run `selection` in a child pytest measuring the quest's file."""
    empty_dir = None
    if not selection:
        # Nothing to run: an empty folder collects no test, and the
        # function is measured as executed by none.
        empty_dir = tempfile.mkdtemp(prefix="pytest-quest-empty-")
        selection = [empty_dir]
    try:
        return run_child(
            selection,
            rootdir=ctx.rootdir,
            inifile=ctx.child.inifile,
            sources=list(ctx.options.sources),
            only_files=[quest.file],
            timeout=ctx.options.timeout,
            # Node ids are relative to the rootdir, whatever folder pytest was run from.
            cwd=ctx.rootdir,
            plugin_args=ctx.child.plugin_args,
            subprocesses=subprocesses_on(ctx),
        )
    finally:
        if empty_dir:
            shutil.rmtree(empty_dir, ignore_errors=True)


def subprocesses_on(ctx: Context) -> bool:
    """Whether the gate measures (and mutates) the processes the tests start: the policy's say."""
    policy = ctx.options.policy
    return policy.subprocesses if policy is not None else True


def plugin_verify_request(
    ctx: Context, evidence: Evidence, changed: list[str]
) -> dict[str, Any] | None:
    """What the mutation child shows the project's plugin verifiers (None: L2 will not run)."""
    quest, current = evidence.quest, evidence.current
    if ctx.options.verify != "on" or current is None:
        return None
    if excluded_by(quest, ctx.options.verify_exclude) is not None:
        return None
    request = build_request(
        rootdir=ctx.rootdir,
        quest=quest,
        current=current,
        covering_tests=current.covering_tests,
        changed_files=changed,
        questions=ctx.options.verify_questions,
    )
    return request_to_dict(request, build_prompt(request))


def verify_l2(
    ctx: Context,
    evidence: Evidence,
    result: GateResult,
    *,
    changed: list[str],
    verifiers: list[Verifier],
) -> tuple[GateResult, dict[str, Any]]:
    """L2 for a submission L1 would PASS: the (possibly raised) result and its record.

    It may turn a PASS into REVIEW, never anything else.
    """
    current = evidence.current
    assert current is not None
    return verify_submission(
        rootdir=ctx.rootdir,
        quest=evidence.quest,
        current=current,
        changed_files=changed,
        result=result,
        verifiers=verifiers,
        threshold=ctx.options.verify_threshold,
        questions=ctx.options.verify_questions,
        exclude=ctx.options.verify_exclude,
    )


def _record_run(ctx: Context, target: Quest, state: State, judgement: Judgement) -> None:
    """What the quest keeps of the run that judged it: facts, times, policy, survivors."""
    if judgement.result.verdict is Verdict.FAIL:
        kept_fail(target, judgement.digest)
    current = judgement.current
    if state is State.PASS and ctx.options.policy is not None:
        target.passed_policy = ctx.options.policy.compact()
    if current is not None:
        if state is State.PASS:
            record_pass_facts(target, current)
        else:
            target.missing_lines = list(current.missing_lines)
            target.missing_branches = list(current.missing_branches)
    target.last_run_seconds = round(judgement.run.duration, 3)
    if judgement.mutation_seconds is not None:
        target.mutation_seconds = judgement.mutation_seconds
    if judgement.verification is not None:
        target.verification = judgement.verification
    target.unwitnessed = judgement.result.unwitnessed or None


def record(
    ctx: Context,
    *,
    quest: Quest,
    judgement: Judgement,
    now: str,
    guard: VerdictGuard | None = None,
) -> tuple[State, Ratchet]:
    """Write the verdict on `quest` into the ratchet file; returns its state and the ratchet written.

    Refused (nothing recorded) when another process judged the quest meanwhile.
    With a `guard`, the file is first checked under the same lock: a write
    that was not pytest-quest's is undone (even when the verdict is then
    refused) and the verdict becomes REVIEW.
    """
    before = (quest.state, quest.tries)
    refused: list[str] = []

    def change(fresh: Ratchet) -> tuple[State, Ratchet]:
        if guard is not None and guard.facts:
            guard.repair(fresh)
            judgement.result = _guarded(judgement.result, guard.facts)
        target = fresh.quests.get(quest.id)
        problem = None
        if target is None:
            problem = f"quest {quest.id} vanished from the ratchet file during the run"
        elif (target.state, target.tries) != before:
            problem = (
                f"quest {quest.id} was judged by another process while this one ran "
                f"(now {target.state.value}, tries {target.tries}); nothing recorded"
            )
        if problem is not None:
            if guard is None or not guard.facts:
                raise QuestUsageError(problem)
            refused.append(problem)  # the repair is still written
            return State.TODO, fresh
        assert target is not None
        ensure_policy(fresh, ctx.options, ctx.rootdir)
        target.sandbox = sandbox.active_name()
        cause = outside_cause(judgement.run, judgement.result, judgement.mutation)
        if cause[0]:
            state, judgement.result, judgement.environment = record_outside_failure(
                ctx, target, cause, judgement.result, now
            )
            return state, fresh
        state = apply_verdict(target, judgement.result, ctx.options.max_tries, now)
        _record_run(ctx, target, state, judgement)
        # A submit by --quest-id leaves another active quest active; a settled
        # or missing active quest gives way to this one (if still TODO) or the next.
        active = fresh.quests.get(fresh.active) if fresh.active else None
        if active is None or active.state.terminal:
            nxt = target if target.state is State.TODO else fresh.next_todo()
            fresh.active = nxt.id if nxt else None
        return state, fresh

    result = ctx.store.update(change, vet=guard.vet if guard is not None else None)
    if refused:
        raise QuestUsageError(refused[0])
    return result


def undo_forgery(ctx: Context, guard: VerdictGuard) -> None:
    """Check the file and undo what was not pytest-quest's, recording no verdict (best effort)."""
    try:
        ctx.store.update(guard.repair, vet=guard.vet)
    except Exception:  # the judge's own error is the one to report
        pass


def _guarded(result: GateResult, facts: list[Fact]) -> GateResult:
    """REVIEW with the guard's facts first (a FAIL's facts are kept after them)."""
    return GateResult(Verdict.REVIEW, [*facts, *result.facts], "guard")
