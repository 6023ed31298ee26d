"""Text output on a console that cannot write every character (``PYTHONIOENCODING=ascii``, cp1252).

A quest's id and source may hold any character Python allows; what the
console's encoding lacks is written as its backslash escape, as pytest does,
instead of stopping the command with ``UnicodeEncodeError``.
"""

from __future__ import annotations

import pytest

from tests.support.projects import Project

SOURCE = """\
def grüße(x):
    if x:
        return "café ✓"
    return "no"
"""
TEST = """\
from pkg.greet import grüße


def test_greets():
    assert grüße(1) == "café ✓"
"""


def test_text_output_escapes_what_the_console_cannot_write(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.source("greet", SOURCE)
    project.test("test_greet", TEST)
    monkeypatch.setenv("PYTHONIOENCODING", "ascii")
    scan = project.run("--quest", "scan")
    assert scan.ret == 0, scan.stdout.str() + scan.stderr.str()
    for command in ("next", "status"):
        result = project.run("--quest", command)
        assert result.ret == 0, result.stdout.str() + result.stderr.str()
        assert "UnicodeEncodeError" not in result.stderr.str()
    shown = project.run("--quest", "next").stdout.str()
    assert "quest src/pkg/greet.py::gr\\xfc\\xdfe" in shown
    assert 'return "caf\\xe9 \\u2713"' in shown
    # The id as shown, copied from the suggested submit command, names the quest.
    submit = next(line for line in shown.splitlines() if "submit: pytest --quest submit" in line)
    copied = submit.split("--quest-id ", 1)[1].strip("'")
    result, data = project.run_json("--quest", "next", "--quest-id", copied)
    assert result.ret == 0, result.stderr.str()
    assert data["quest"]["id"] == "src/pkg/greet.py::grüße"
