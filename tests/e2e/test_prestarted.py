"""The mutation child started alongside the measuring run (engine/prestart.py).

Given its work once steps 1-3 pass, it must judge as one started then does;
when they do not, it is stopped and nothing of it is left.
"""

from __future__ import annotations

import os
import textwrap
import threading
import time
from pathlib import Path

import pytest

from pytest_quest.engine import prestart
from pytest_quest.engine.mutation import MutationReport, run_mutation_check
from tests.e2e.test_fresh_parked import HONEST, SAVED, SOURCE
from tests.support.projects import CALC, TEST_DOUBLE, Project


def check(tmp_path: Path, tests: str) -> tuple[MutationReport, prestart.Prestarted]:
    tmp_path.mkdir()
    (tmp_path / "mod.py").write_text(SOURCE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(textwrap.dedent(tests))
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    launch = prestart.Launch(tmp_path, tmp_path / "pyproject.toml", (), tmp_path, True, True)
    with prestart.prestarted(launch, timeout=120) as started:
        assert started is not None
        time.sleep(0.5)  # as a measuring run would take: it starts and waits meanwhile
        report = run_mutation_check(
            ["tests/test_mod.py::test_sign"], file=tmp_path / "mod.py", start=1,
            rootdir=tmp_path, inifile=tmp_path / "pyproject.toml", timeout=120, cwd=tmp_path,
            seed="mod.py::sign",
        )  # fmt: skip
        assert prestart.take(launch) is None  # it was the one taken
    assert report.completed, report.problem
    assert report.survivors() == []
    return report, started


def test_a_child_started_before_its_work_confirms_honest_kills_and_not_a_saved_oracle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prestart, "hides_runs", lambda: True)  # here without a sandbox
    honest, started = check(tmp_path / "honest", HONEST)
    assert honest.kill_unconfirmed == {}
    assert started.ran is not None and started.ran.received.payload is not None
    # Its time is its work's: the second it waited is not in it.
    assert honest.duration < started.ran.duration
    saved, _ = check(tmp_path / "saved", SAVED)
    assert list(saved.kill_unconfirmed) == ["tests/test_mod.py::test_sign"]


WRONG_SIGN = """\
from pkg.calc import sign


def test_sign():
    assert sign(-5) == -1
    assert sign(5) == 2
"""


def gate_children(root: Path) -> set[int]:
    """The gate children (pytest with the mutation-child plugin: a fresh run too) in `root` now."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
            where = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        argv = command.split(b"\0")
        # pytest itself, not the shim or bwrap whose arguments name its command.
        if argv[1:3] == [b"-m", b"pytest"] and b"pytest_quest.plugin.mutation_child" in argv:
            if Path(where) == root:
                found.add(int(entry))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_submit_whose_tests_fail_stops_the_mutation_child_started_beside_it(
    project: Project,
) -> None:
    project.source("calc", "\n" + CALC)
    project.test("test_calc", TEST_DOUBLE)
    result, data = project.run_json("--quest", "scan")
    assert result.ret == 0
    if data.get("policy", {}).get("sandbox", "required") == "off":
        pytest.skip("no sandbox that hides runs here: no child is started beside")
    project.test("test_sign", WRONG_SIGN)
    root = project.path.resolve()
    most = [0]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            most[0] = max(most[0], len(gate_children(root)))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        result, data = project.run_json("--quest", "submit", "--quest-id", "src/pkg/calc.py::sign")
    finally:
        done.set()
        watcher.join()
    assert data["verdict"] == "FAIL", data
    assert data["step"] == "3-coverage", data  # its test failed: judged no further
    assert most[0] >= 2  # the measuring child and the mutation child, at once
    assert gate_children(root) == set()  # nothing of either left
