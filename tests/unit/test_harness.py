"""The test harness's environment rule (tests/support/runner.py, tests/conftest.py)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.carriers import config_saving_in, safe
from tests.support.runner import SELF_COVERAGE_SWITCH, child_environ, children_self_coverage

ASK = "import tempfile; print(tempfile.mkdtemp(prefix='pytest-quest-probe-'))"


def test_a_childs_temporary_files_go_to_this_tests_folder(
    children_tmpdir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Not /tmp: what a killed judge leaves (docs/judge.md) must not pile up there."""
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


@pytest.mark.parametrize(
    ("session", "end_to_end", "marked", "switch"),
    [
        ("1", True, False, "0"),  # an end-to-end test's children: unmeasured unless marked
        ("1", True, True, "1"),
        ("all", True, False, "1"),  # benchmarks/coverage_carriers.py measures every test's
        ("all", False, False, None),
        ("1", False, False, None),  # unit tests: as the session
        (None, True, True, None),  # no self-measurement: nothing to switch on
        ("0", True, True, None),
    ],
)
def test_children_are_measured_where_an_end_to_end_test_is_marked(
    session: str | None, end_to_end: bool, marked: bool, switch: str | None
) -> None:
    assert children_self_coverage(session, end_to_end=end_to_end, marked=marked) == switch


def test_an_unmeasured_switch_gives_the_children_no_coverage_variable() -> None:
    env = child_environ({**MEASURED, SELF_COVERAGE_SWITCH: "0"})
    assert not [key for key in env if key.startswith(("COVERAGE_", "PYTEST_QUEST_"))]


def test_the_carriers_plugin_moves_only_the_data_file_of_the_subprocess_configuration(
    tmp_path: Path,
) -> None:
    raw = base64.b64encode(json.dumps({"data_file": "/x/.coverage", "branch": True}).encode())
    moved = json.loads(base64.b64decode(config_saving_in(raw.decode(), tmp_path / "t")))
    assert moved == {"data_file": str(tmp_path / "t" / ".coverage"), "branch": True}
    assert (tmp_path / "t").is_dir()
    assert safe("tests/e2e/test_x.py::test_y[a/b c]") == "tests_e2e_test_x.py__test_y_a_b_c_"
