"""The test harness's environment rule (tests/support/runner.py, tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.runner import SELF_COVERAGE_SWITCH, child_environ

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


MEASURED = {
    SELF_COVERAGE_SWITCH: "1",
    "COVERAGE_PROCESS_CONFIG": "{}",
    "COVERAGE_COVERAGE": "1",
    "COVERAGE_FILE": "/elsewhere/.coverage",
}


def test_a_measured_run_passes_its_measurement_on_and_nothing_else() -> None:
    env = child_environ(MEASURED)
    assert {key: env.get(key) for key in MEASURED} == {**MEASURED, "COVERAGE_FILE": None}
    assert env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1"


@pytest.mark.children_unmeasured
def test_a_test_marked_children_unmeasured_starts_unmeasured_children() -> None:
    """conftest's switch for the marked test: its children get no coverage.py variable."""
    switch = os.environ.get(SELF_COVERAGE_SWITCH)
    assert switch == "0"
    env = child_environ({**MEASURED, SELF_COVERAGE_SWITCH: switch})
    assert not [key for key in env if key.startswith(("COVERAGE_", "PYTEST_QUEST_"))]
