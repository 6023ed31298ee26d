"""A quest option's value that pytest took for a test path while it chose the rootdir.

pytest picks its rootdir before plugins load, so ``--quest-export-to /dev/null``
roots the run in ``/dev`` and misses the ini file.  Refused up front (exit 4),
naming ``--quest-export-to=/dev/null``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.plugin.option_table import _OPTIONS

determine_setup: Callable[..., Any] | None
try:  # pytest's own rootdir search (private: where it is missing, the check is skipped)
    from _pytest.config.findpaths import determine_setup
except ImportError:  # every pytest this plugin supports (8.0 on) has it
    determine_setup = None

#: The quest options that take a value (a flag alone takes none).
VALUE_FLAGS = frozenset(
    flag for option in _OPTIONS if not option.action.startswith("store_") for flag in option.flags
)


def values_read_as_paths(args: list[str], invocation_dir: Path) -> list[tuple[str, str]]:
    """(flag, value) for each ``--quest-x VALUE`` whose value names an existing path.

    As pytest reads a test path: a node id's ``::`` part is dropped first.
    """
    found = []
    for flag, value in pairwise(args):
        if flag in VALUE_FLAGS and not value.startswith("-"):
            try:
                exists = (invocation_dir / value.split("::")[0]).exists()
            except (OSError, ValueError):  # too long, a NUL: not a path pytest could use
                exists = False
            if exists:
                found.append((flag, value))
    return found


def rootdir_without(early_config: pytest.Config) -> Path | None:
    """The rootdir pytest finds from the real test paths alone; None if it cannot be asked."""
    if determine_setup is None:
        return None
    namespace = early_config.known_args_namespace
    given = {
        "inifile": getattr(namespace, "inifilename", None),
        "override_ini": getattr(namespace, "override_ini", None),
        "args": list(getattr(namespace, "file_or_dir", None) or []),
        "rootdir_cmd_arg": getattr(namespace, "rootdir", None) or None,
        "invocation_dir": early_config.invocation_params.dir,
        "config": None,
    }
    try:
        accepted = inspect.signature(determine_setup).parameters
        found = determine_setup(**{key: value for key, value in given.items() if key in accepted})
    except Exception:  # a pytest whose private API moved: the check is skipped
        return None
    return Path(found[0])


def misread_value_message(early_config: pytest.Config, args: list[str]) -> str | None:
    """Why the run would be rooted in the wrong folder, and how to write it; None when it is not."""
    found = values_read_as_paths(args, early_config.invocation_params.dir)
    if not found:
        return None
    expected = rootdir_without(early_config)
    if expected is None or expected == early_config.rootpath:
        return None
    flag, value = found[0]
    return (
        f"pytest read the value of {flag} ({value}) as a test path while choosing the rootdir "
        f"({early_config.rootpath} instead of {expected}); write {flag}={value}"
    )
