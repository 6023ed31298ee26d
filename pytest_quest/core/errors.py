"""Exceptions of pytest-quest: one base class, small named subclasses.

Every message names the thing at fault (file, field, option) and says how to
fix it.  The plugin turns a :class:`QuestError` into pytest's usage error
(exit status 4); nothing is written when one is raised.
"""

from __future__ import annotations


class QuestError(Exception):
    """Base class of every error pytest-quest reports to its user."""


class QuestUsageError(QuestError):
    """Bad options or arguments: an unknown quest id, a missing source..."""


class RatchetFileError(QuestError):
    """The ratchet file is unreadable, corrupt or was edited by hand."""

    def __init__(self, path: str, problem: str, fix: str = "") -> None:
        self.path = path
        self.problem = problem
        self.fix = fix
        message = f"{path}: {problem}"
        if fix:
            message += f" ({fix})"
        super().__init__(message)


class LockTimeoutError(QuestError):
    """The ratchet file's lock could not be taken in time."""


class MeasurementError(QuestError):
    """Running the tests under coverage could not produce usable data."""
