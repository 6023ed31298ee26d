"""Attacks on "environment failures are not verdicts": written first.

A submitter gains from turning a FAIL into "no verdict, try again": no try is
spent.  The judged tests here kill their own gate child when a mutant is in
place, or the judge itself; neither may PASS, dodge a verdict for good, or
reset the count of runs in a row that could not complete.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.environment import BEGUN_KEY, ENVIRONMENT_EXIT, STREAK_KEY
from tests.support.projects import SIGN, Project, calc_project, scanned_template
from tests.support.runner import run_quest

pytestmark = [
    pytest.mark.skipif(
        not os.path.isdir("/proc") or not hasattr(os, "fork"),
        reason="needs POSIX signals and /proc",
    ),
    # The judge's own signal watch and environment-failure count: in a sandbox's pid
    # namespace the judge cannot be named (tests/acceptance/test_sandbox.py).
    pytest.mark.unsandboxed,
]

# Passes on the original; with any mutant of sign in place (its outputs
# differ) it kills its own process instead of failing: the mutation child.
# In Python (os.kill) the audit hook sees and refuses it (engine/gate_signals.py).
SELF_KILL = """\
import os
import signal

from pkg.calc import sign


def test_sign():
    if (sign(-5), sign(0), sign(5)) != (-1, 1, 1):
        os.kill(os.getpid(), signal.SIGKILL)
"""

# The same through a process of its own, which no audit hook sees.
SELF_KILL_UNSEEN = """\
import os
import subprocess
import sys

from pkg.calc import sign


def test_sign():
    if (sign(-5), sign(0), sign(5)) != (-1, 1, 1):
        subprocess.run([sys.executable, "-c", f"import os; os.kill({os.getpid()}, 9)"])
"""

# Finds the judge (the reaping shim's parent) and kills it before any verdict,
# through a process of its own (os.kill here would be refused).
JUDGE_KILL = """\
import os
import subprocess
import sys
import time

from pkg.calc import sign


def judge_pid():
    with open(f"/proc/{{os.getppid()}}/stat") as handle:
        stat = handle.read()
    return int(stat[stat.rfind(")") + 2 :].split()[1])


def test_sign():
    assert (sign(-5), sign(5)) == (-1, 1)
    with open({runs!r}, "a") as handle:
        handle.write("run\\n")
    subprocess.run([sys.executable, "-c", f"import os; os.kill({{judge_pid()}}, 9)"])
    time.sleep(60)
"""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """`calc_project` scanned once; each test copies it."""
    return scanned_template(tmp_path_factory, calc_project)[0]


@pytest.fixture
def project(tmp_path: Path, template: Project) -> Project:
    return Project(tmp_path / "project").fill_from(template)


def submit(project: Project) -> tuple[int, dict[str, Any], str]:
    return run_quest(project.path, "--quest", "submit", "--quest-id", SIGN)


def recorded(project: Project) -> dict[str, Any]:
    entry: dict[str, Any] = project.ratchet()["quests"][SIGN]
    return entry


def test_a_test_killing_its_own_process_in_python_is_refused_and_review_at_once(
    project: Project,
) -> None:
    project.test("test_sign", SELF_KILL)
    code, data, stderr = submit(project)
    assert (code, data["verdict"], data["step"]) == (0, "REVIEW", "signals"), (data, stderr)
    fact = data["quest"]["facts"][0]
    assert fact["check"] == "environment.self_signal"
    assert "tried to send SIGKILL to its own process (refused)" in fact["actual"]
    quest = recorded(project)
    assert (quest["state"], quest["tries"]) == ("REVIEW", 0)


def killed_mutation_child_once(project: Project) -> None:
    """One submit whose mutation child is killed unseen: no verdict; a rescan and `next`
    leave the streak at one (only a recorded verdict ends it)."""
    project.test("test_sign", SELF_KILL_UNSEEN)
    code, data, stderr = submit(project)
    assert code == ENVIRONMENT_EXIT, (data, stderr)
    assert data["verdict"] == "NONE" and "SIGKILL" in data["environment"]["cause"]
    assert "the mutation child" in data["environment"]["cause"]
    assert project.run("--quest", "scan").ret == 0
    assert project.run("--quest", "next", "--quest-id", SIGN).ret == 0
    assert recorded(project)["extra"][STREAK_KEY] == 1


@pytest.mark.children_measured
def test_a_test_killing_its_mutation_child_unseen_is_no_verdict_and_a_rescan_resets_nothing(
    project: Project,
) -> None:
    killed_mutation_child_once(project)


# Three more submits of the same: slow. In the fast loop, the streak's bound (REVIEW at
# the third run in a row, no run after it) is held by the judge-killing test below.
@pytest.mark.slow
def test_a_test_killing_its_mutation_child_unseen_is_bounded_never_pass_and_a_rescan_resets_nothing(
    project: Project,
) -> None:
    killed_mutation_child_once(project)
    code, data, stderr = submit(project)
    assert (code, data["verdict"], data["environment"]["in_a_row"]) == (ENVIRONMENT_EXIT, "NONE", 2)
    code, data, stderr = submit(project)
    assert (code, data["verdict"], data["step"]) == (0, "REVIEW", "environment"), (data, stderr)
    assert [f["check"] for f in data["quest"]["facts"]][-1] == "environment.repeated"
    quest = recorded(project)
    assert (quest["state"], quest["tries"]) == ("REVIEW", 0)
    assert [e["action"] for e in quest["history"]][-3:] == ["environment"] * 3
    code, data, _ = submit(project)  # REVIEW waits for a person: no more runs
    assert code == 4 and "waits for a person" in data["error"]


def test_a_test_killing_the_judge_counts_and_is_review_at_the_limit(project: Project) -> None:
    runs = project.path / "runs.txt"
    project.test("test_sign", JUDGE_KILL.format(runs=str(runs)))
    for in_a_row in (0, 1, 2):
        result = project.run("--quest", "submit", "--quest-id", SIGN, "--quest-format", "json")
        assert result.ret == -signal.SIGKILL, result.stdout.str() + result.stderr.str()
        quest = recorded(project)
        assert (quest["state"], quest["tries"]) == ("TODO", 0)
        assert quest["extra"].get(STREAK_KEY, 0) == in_a_row
        assert BEGUN_KEY in quest["extra"]
    assert runs.read_text().count("run") == 3
    code, data, stderr = submit(project)
    assert (code, data["verdict"], data["step"]) == (0, "REVIEW", "environment"), (data, stderr)
    assert "recorded nothing" in data["environment"]["cause"]
    assert data["environment"]["in_a_row"] == 3
    assert [f["check"] for f in data["quest"]["facts"]][-1] == "environment.repeated"
    assert runs.read_text().count("run") == 3  # the fourth submit ran nothing
    quest = recorded(project)
    assert (quest["state"], quest["tries"]) == ("REVIEW", 0)
    assert BEGUN_KEY not in quest.get("extra", {})


@pytest.mark.children_measured
def test_a_pytest_main_caller_whose_judge_is_killed_gets_no_verdict_and_status_75(
    project: Project,
) -> None:
    """In-process callers run the clean judge as a child: its death is relayed as no verdict."""
    runs = project.path / "runs.txt"
    project.test("test_sign", JUDGE_KILL.format(runs=str(runs)))
    script = (
        "import sys, pytest\n"
        "code = pytest.main(['-p', 'no:cacheprovider', '--quest', 'submit', '--quest-id', "
        f"{SIGN!r}, '--quest-format', 'json'])\n"
        "sys.exit(int(code))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=project.path, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == ENVIRONMENT_EXIT, done.stdout + done.stderr
    assert "NO VERDICT: the clean judge was killed by signal SIGKILL" in done.stderr
    data = json.loads(done.stdout)
    assert data["command"] == "submit" and "SIGKILL" in data["error"]
    quest = recorded(project)
    assert (quest["state"], quest["tries"]) == ("TODO", 0)
    assert BEGUN_KEY in quest["extra"]  # the next submit counts it
