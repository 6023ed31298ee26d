"""The gate policy as the commands use it: recorded at scan, enforced at submit, changed by a person."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone
from pathlib import Path

from pytest_quest.app.context import Context, load_ratchet
from pytest_quest.app.options import QuestOptions
from pytest_quest.app.person import require_person
from pytest_quest.app.sandbox import available
from pytest_quest.core import policy as gate_policy
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Ratchet, State
from pytest_quest.core.policy import OPERATORS, GatePolicy, PolicyError
from pytest_quest.core.seal import policy_digest_part, seal_issued
from pytest_quest.core.view import weaker_passes
from pytest_quest.engine.base import commit_date, refuse_option
from pytest_quest.engine.source import relpath
from pytest_quest.report.json import Output
from pytest_quest.report.text import weaker_lines

#: How often the mutation child re-runs the covering tests for gate step 5 (fixed today).
STABILITY_RERUNS = 1

#: Which option sets which policy key.
OPTION_KEYS = {
    "quest_mutants": "mutants",
    "quest_max_tries": "max_tries",
    "quest_timeout": "timeout_floor",
    "quest_verify": "verify",
    "quest_verify_threshold": "verify_threshold",
    "quest_source": "sources",
}

ADDED_NOTE = (
    "the ratchet file had no gate policy: recorded the settings in force "
    "({policy}); only a person changes it from now on ({action})"
)


def options_policy(options: QuestOptions, rootdir: Path) -> GatePolicy:
    """The policy the options and ini of this run ask for."""
    return GatePolicy(
        mutants=options.mutants_rule if options.mutants else "off",
        operators=OPERATORS,
        max_tries=options.max_tries,
        timeout_floor=options.timeout,
        stability_reruns=STABILITY_RERUNS,
        verify=options.verify == "on",
        verify_threshold=options.verify_threshold,
        sources=tuple(sorted({_relative(path, rootdir) for path in options.sources})),
        sandbox=available(),
    )


def _relative(path: Path, rootdir: Path) -> str:
    return relpath(str(path if path.is_absolute() else rootdir / path), rootdir)


def given_keys(options: QuestOptions) -> set[str]:
    """The policy keys this run's command line or ini sets (defaults set none)."""
    if options.given is None:
        return set(OPTION_KEYS.values())
    return {key for name, key in OPTION_KEYS.items() if name in options.given}


def ensure_policy(ratchet: Ratchet, options: QuestOptions, rootdir: Path) -> str:
    """Record the settings in force as `ratchet`'s policy when it has none; the note saying so, or ""."""
    if ratchet.policy is not None:
        return ""
    ratchet.policy = options_policy(options, rootdir)
    return ADDED_NOTE.format(policy=ratchet.policy.compact(), action=gate_policy.POLICY_ACTION)


def with_policy(options: QuestOptions, policy: GatePolicy, rootdir: Path) -> QuestOptions:
    """`options` with the values `policy` decides."""
    return dataclasses.replace(
        options,
        mutants=policy.checks_mutants,
        mutants_rule=policy.mutants,
        max_tries=policy.max_tries,
        timeout=policy.timeout_floor,
        verify="on" if policy.verify else "off",
        verify_threshold=policy.verify_threshold,
        sources=[rootdir / source for source in policy.sources] or options.sources,
        policy=policy,
    )


def submit_policy(options: QuestOptions, ratchet: Ratchet, rootdir: Path) -> GatePolicy:
    """The policy a submit runs under: the recorded one, tightened by what this run gives.

    A given value that would weaken the record is a usage error (exit 4)
    naming the recorded value and the person action that changes it.
    """
    requested = options_policy(options, rootdir)
    if ratchet.policy is None:
        return requested
    return gate_policy.effective(ratchet.policy, requested, given_keys(options))


def remembered_sources(options: QuestOptions, ratchet: Ratchet, rootdir: Path) -> QuestOptions:
    """`options` with the recorded sources when none was given (check, audit, next)."""
    if options.sources or ratchet.policy is None or not ratchet.policy.sources:
        return options
    return dataclasses.replace(options, sources=[rootdir / s for s in ratchet.policy.sources])


def passed_since(passed_at: str, since: datetime) -> bool:
    try:
        when = datetime.fromisoformat(passed_at.replace("Z", "+00:00"))
    except ValueError:
        return True  # an unreadable time is audited rather than skipped
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when >= since


def since_time(text: str, rootdir: Path) -> datetime:
    """``--quest-since``: an ISO date or time, else a git ref's commit date."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        refuse_option(text, "--quest-since")  # `--output=FILE` would have git write a file
        found = commit_date(text, rootdir)
        if found is None:
            raise QuestUsageError(
                f"--quest-since {text!r}: neither an ISO date (2026-12-01) nor a git ref "
                "with a commit date"
            ) from None
        when = datetime.fromisoformat(found)
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when


# -- the person action -----------------------------------------------------------


def record_policy_change(
    ctx: Context, changes: list[tuple[str, str]], *, by: str, now: str, reason: str = ""
) -> tuple[GatePolicy, GatePolicy, Ratchet]:
    """Change the recorded policy (a person's action): the old and new policy, the ratchet written.

    Each changed key is recorded in ``policy_history`` with who, when, the
    old and the new value; the seals of unsettled quests take the new policy
    (a person changed it, so the gate's step 2 does not hold it against them).
    """
    load_ratchet(ctx)

    def change(fresh: Ratchet) -> tuple[GatePolicy, GatePolicy, Ratchet]:
        old = fresh.policy or options_policy(ctx.options, ctx.rootdir)
        try:
            new = gate_policy.change(old, changes)
        except PolicyError as exc:
            raise QuestUsageError(f"--quest-policy {exc}") from None
        for key, _ in changes:
            before, after = old.shown(key), new.shown(key)
            fresh.policy_history.append(
                {
                    "at": now,
                    "by": by,
                    "key": key,
                    "old": before.partition("=")[2],
                    "new": after.partition("=")[2],
                    **({"reason": reason} if reason else {}),
                }
            )
        fresh.policy = new
        for quest in fresh.quests.values():
            if quest.state is not State.PASS and quest.config_digest:
                quest.config_digest = policy_digest_part(quest.config_digest, new)
                seal_issued(quest)
        return old, new, fresh

    return ctx.store.update(change)


def change_policy(ctx: Context) -> Output:
    """``--quest-policy KEY=VALUE``: the person action that changes the gate policy."""
    try:
        changes = [gate_policy.parse_assignment(text) for text in ctx.options.policy_changes]
    except PolicyError as exc:
        raise QuestUsageError(f"--quest-policy {exc}") from None
    confirmation = ",".join(f"{key}={value}" for key, value in changes)
    person = require_person(
        ctx, "--quest-policy", confirmation, [f"change the recorded gate policy: {confirmation}"]
    )
    by, now = person.by, person.at
    old, new, ratchet = record_policy_change(ctx, changes, by=by, now=now, reason=person.reason)
    lines = [f"policy: {old.shown(key)} -> {new.shown(key)} (by {by}, {now})" for key, _ in changes]
    found = weaker_passes(ratchet)
    lines += weaker_lines(found)
    data = {
        "action": "policy",
        "by": by,
        "at": now,
        "old": old.to_dict(),
        "policy": new.to_dict(),
        "weaker_policy_passes": found,
    }
    return Output(data, lines)
