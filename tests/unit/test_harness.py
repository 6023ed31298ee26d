"""The test harness's environment rule (tests/support/runner.py, tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.runner import child_environ

ASK = "import tempfile; print(tempfile.mkdtemp(prefix='pytest-quest-probe-'))"


def test_a_childs_temporary_files_go_to_this_tests_folder(
    children_tmpdir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Not /tmp: what a killed judge leaves (docs/gate.md) must not pile up there."""
    for env in (child_environ(), None):  # through the runner, and inherited by a bare Popen
        made = subprocess.run(
            [sys.executable, "-c", ASK], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        assert Path(made).parent == children_tmpdir
    assert len(list(children_tmpdir.iterdir())) == 2
    # A folder of this run's basetemp, which pytest removes with its old runs.
    assert children_tmpdir.is_relative_to(tmp_path_factory.getbasetemp())
    # This process's own temporary files stay where they were.
    assert Path(tempfile.gettempdir()) != children_tmpdir
