"""app/submit_output.py's `sandbox_line`: what the submit says of the sandbox its runs used."""

from __future__ import annotations

from pytest_quest.app.submit_output import sandbox_line
from pytest_quest.engine import sandbox


def test_sandbox_line_of_an_engine() -> None:
    assert sandbox_line("bwrap") == "judged in the bwrap sandbox"
    assert sandbox_line("landlock") == "judged in the landlock sandbox"


def test_sandbox_line_unsandboxed() -> None:
    assert sandbox_line(sandbox.UNSANDBOXED) == (
        "judged unsandboxed (policy sandbox=off): only the judge's own detection "
        "stood between the tests and the judge"
    )
