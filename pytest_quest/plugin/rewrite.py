"""Modules of the code under test named on a gate child's command line load as any import loads them.

pytest's assertion rewriter compiles a module named on the command line (a
doctest id) from its source, bypassing a mutant in its bytecode file
(engine/ondisk.py).  In every gate child alike such a module is left to the
import system; test files, conftests and marked packages are rewritten as usual.
"""

from __future__ import annotations

import os
from pathlib import PurePath
from typing import Any

import pytest
from _pytest.assertion.rewrite import assertstate_key
from _pytest.pathlib import fnmatch_ex


def leave_sources_unrewritten(config: pytest.Config, sources: list[str]) -> None:
    """The rewriter of `config` skips modules under `sources` that are no test files."""
    if not sources:
        return
    hook: Any = getattr(config.stash.get(assertstate_key, None), "hook", None)
    original = getattr(hook, "_should_rewrite", None)
    if original is None:  # --assert=plain: nothing is rewritten
        return
    roots = [os.path.realpath(source) for source in sources]

    def should_rewrite(name: str, fn: str, state: Any) -> bool:
        real = os.path.realpath(fn)
        if (
            os.path.basename(fn) != "conftest.py"
            and any(real == root or real.startswith(root + os.sep) for root in roots)
            and not any(fnmatch_ex(pattern, PurePath(fn)) for pattern in hook.fnpats)
        ):
            return bool(hook._is_marked_for_rewrite(name, state))
        return bool(original(name, fn, state))

    hook._should_rewrite = should_rewrite
