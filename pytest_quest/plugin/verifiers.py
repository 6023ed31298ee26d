"""L2 verifiers as this pytest run configures them: the option's commands and the plugins' hooks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.app.options import QuestOptions
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import FunctionFacts, Quest
from pytest_quest.verify.adapters import (
    Verifier,
    checked_verifiers,
    hook_verifiers,
    verify_submission,
)


def configured_verifiers(
    config: pytest.Config, options: QuestOptions, rootdir: Path
) -> list[Verifier]:
    """The verifier commands, then the plugin verifiers; usage errors for a setup that cannot work.

    ``submit`` calls it before running any test, so that a bad setup costs nothing.
    """
    return checked_verifiers(
        commands=options.verifier_cmds,
        hooks=hook_verifiers(config.pluginmanager, rootdir),
        timeout=options.verify_timeout,
        threshold=options.verify_threshold,
        rootdir=rootdir,
    )


def verify_configured(
    *,
    config: pytest.Config,
    options: QuestOptions,
    rootdir: Path,
    quest: Quest,
    current: FunctionFacts,
    changed_files: Sequence[str],
    result: GateResult,
) -> tuple[GateResult, dict[str, Any]]:
    """`verify_submission` with this run's verifiers and verification options.

    Usage errors (`QuestUsageError`) for a setup that cannot work, as ``submit`` has them.
    """
    return verify_submission(
        rootdir=rootdir,
        quest=quest,
        current=current,
        changed_files=changed_files,
        result=result,
        verifiers=configured_verifiers(config, options, rootdir),
        threshold=options.verify_threshold,
        questions=options.verify_questions,
        exclude=options.verify_exclude,
    )


__all__ = ["configured_verifiers", "verify_configured"]
