"""run-tests.sh, run on a copy with a stand-in Python that records how it was called."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT

# Stands in for .venv/bin/python: one line per call, the PYTEST_ADDOPTS it saw and its arguments.
STUB = """#!/bin/sh
printf '%s|%s\\n' "${PYTEST_ADDOPTS-<unset>}" "$*" >> "$STUB_LOG"
if [ "$1" = - ]; then cat >/dev/null; fi
exit 0
"""


def calls(tmp_path: Path, **env: str) -> list[tuple[str, str]]:
    """The stand-in Python's calls when run-tests.sh runs with `env` added (nothing installed)."""
    shutil.copy(ROOT / "run-tests.sh", tmp_path / "run-tests.sh")
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(STUB)
    python.chmod(0o755)
    log = tmp_path / "calls.log"
    environ = dict(os.environ, QUEST_VENV=str(tmp_path / "venv"), QUEST_INSTALLED="1")
    environ.update(STUB_LOG=str(log), **env)
    done = subprocess.run(
        ["bash", str(tmp_path / "run-tests.sh"), "-k", "mine"],
        cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return [
        (seen, args)
        for seen, _, args in (line.partition("|") for line in log.read_text().splitlines())
    ]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash")
def test_the_ratchet_check_ignores_the_callers_pytest_addopts(tmp_path: Path) -> None:
    """A `-k` given for the suite must not deselect tests of the ratchet check."""
    made = calls(tmp_path, PYTEST_ADDOPTS="-k something")
    # The suite under coverage gets the caller's PYTEST_ADDOPTS and extra arguments...
    (suite,) = [call for call in made if call[1].startswith("-m coverage run -m pytest ")]
    assert suite[0] == "-k something" and suite[1].endswith(" -k mine")
    # ...the ratchet check neither.
    (check,) = [call for call in made if call[1].startswith("-m pytest --quest check ")]
    assert check[0] == "<unset>" and "mine" not in check[1]


def test_the_setup_installs_what_ci_runs_the_docs_build_too() -> None:
    """CI builds the site with mkdocs (the `docs` extra): the setup a developer follows has it."""
    script = (ROOT / "run-tests.sh").read_text(encoding="utf-8")
    assert 'bash .ci/install "$venv" test,docs' in script
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    developing = readme[readme.index("## Developing") :]
    assert '.venv/bin/pip install -e ".[test,docs]"' in developing
    assert "mkdocs build --strict" in (ROOT / ".ci" / "checks").read_text(encoding="utf-8")
