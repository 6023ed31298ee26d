"""L2 verifiers as this pytest run configures them: the option's commands and the plugins' hooks."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_quest.app.options import QuestOptions
from pytest_quest.verify.adapters import Verifier, checked_verifiers, hook_verifiers


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
