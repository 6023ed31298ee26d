"""Which kernel sandbox the judged runs of this command start in, as the recorded policy says.

``sandbox=required`` (what a scan records where one starts): the strongest
engine that starts here (engine/sandbox.py), and a usage error (exit 4) naming
why none did when none does.  ``sandbox=off`` (a person's choice, or a scan
where none started): unsandboxed, and every verdict records it.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

from pytest_quest.app.context import Context
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.policy import POLICY_ACTION, SANDBOX_OFF, SANDBOX_REQUIRED, GatePolicy
from pytest_quest.engine import sandbox
from pytest_quest.engine.store import journal_folder


def available() -> str:
    """The ``sandbox`` value a new policy records: required where one starts here."""
    return SANDBOX_REQUIRED if sandbox.choose().engine is not None else SANDBOX_OFF


def protected_paths(ctx: Context) -> tuple[Path, ...]:
    """What stays read-only in every judged run: the ratchet file, its locks, the environment."""
    store = ctx.store
    paths = [store.path, store.lock_path, store.claims_path, Path(sys.prefix)]
    for name in ("purelib", "platlib"):
        paths.append(Path(sysconfig.get_paths()[name]))
    return tuple(dict.fromkeys(Path(p) for p in paths))


def hidden_paths() -> tuple[Path, ...]:
    """What no judged run may read: the gate's own records in the user's cache."""
    return (journal_folder().parent,)


def enter_sandbox(ctx: Context, policy: GatePolicy | None) -> str:
    """Start this command's judged runs in the sandbox `policy` asks for; the engine's name.

    Raises `QuestUsageError` (exit 4) when the policy requires a sandbox and
    none starts here, with each engine's reason.
    """
    wanted = policy.sandbox if policy is not None else available()
    if wanted == SANDBOX_OFF:
        sandbox.use(None)
        return sandbox.UNSANDBOXED
    choice = sandbox.choose()
    if choice.engine is None:
        sandbox.use(None)
        reasons = "; ".join(choice.refused) or "none was tried"
        raise QuestUsageError(
            f"the gate policy has sandbox=required, and no sandbox starts here ({reasons}). "
            f"Judge where one starts, or a person records `{POLICY_ACTION.split(' KEY', maxsplit=1)[0]} "
            f"sandbox=off` (verdicts are then judged unsandboxed)"
        )
    sandbox.use(choice.engine, protected=protected_paths(ctx), hidden=hidden_paths())
    return choice.engine.name
