"""Attacks on the judge: project code that patches the gate, and processes that outlive the run.

Each runs `pytest --quest submit` in a subprocess on a throwaway project
(the ``project`` fixture) whose tests check nothing, so the honest verdict is FAIL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.environment import BEGUN_KEY
from tests.support.projects import Project, built_template
from tests.support.quests import ratchet_view, without_begun_marks

CALC = """\
def sign(x):
    if x < 0:
        return -1
    return 1
"""
SIGN_ID = "src/pkg/calc.py::sign"

# The judge's own defenses (the reaping shim, signals to the judge) without a kernel
# sandbox; in one, the judge is out of the tests' reach (tests/acceptance/test_sandbox.py).
pytestmark = pytest.mark.unsandboxed
# Runs the function, checks nothing: every mutant survives, the verdict is FAIL.
WEAK_TEST = """\
from pkg.calc import sign


def test_sign():
    sign(-5)
    sign(3)
"""

# Each patch makes every verdict PASS if it runs in the process that judges.
PATCHES = {
    "gate-judge": """
import pytest_quest.core.gate as gate
import pytest_quest.app.submit as submit
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Verdict
gate.judge = submit.judge = lambda evidence: GateResult(Verdict.PASS, [], "forged")
""",
    "app-submit": """
import pytest_quest.app.submit as submit
import pytest_quest.plugin.session as session
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Verdict
real = submit.judge_quest
def forged(ctx, quest, ratchet, verifiers):
    judgement = real(ctx, quest, ratchet, verifiers)
    judgement.result = GateResult(Verdict.PASS, [], "forged")
    return judgement
submit.judge_quest = forged
""",
    "apply-verdict": """
import pytest_quest.core.states as states
import pytest_quest.app.submit as submit
from pytest_quest.core.model import State
def forged(quest, result, max_tries, now):
    quest.state = State.PASS
    return State.PASS
states.apply_verdict = submit.apply_verdict = forged
""",
    "ratchet-store": """
import pytest_quest.engine.store as store
from pytest_quest.core.model import State
real = store.RatchetStore.update
def forged(self, change):
    def wrapped(fresh):
        out = change(fresh)
        for quest in fresh.quests.values():
            quest.state = State.PASS
        return out
    return real(self, wrapped)
store.RatchetStore.update = forged
""",
}


def scanned(project: Project) -> None:
    project.source("calc", CALC)
    result, data = project.run_json("--quest", "scan")
    assert data["added"] == [SIGN_ID], (data, result.stderr.str())
    project.test("test_sign", WEAK_TEST)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """`scanned` once; the tests that start from it copy it."""
    return built_template(tmp_path_factory, scanned)


def submit(project: Project, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    return project.run_json("--quest", "submit", "--quest-id", SIGN_ID, *args)


def assert_not_forged(project: Project, data: dict[str, Any]) -> None:
    assert data["verdict"] == "FAIL", data
    quest = project.ratchet()["quests"][SIGN_ID]
    assert quest["state"] == "TODO"
    assert quest["tries"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("patch", sorted(PATCHES))
def test_a_conftest_that_patches_the_gate_has_no_effect(
    project: Project, template: Project, patch: str
) -> None:
    project.fill_from(template)
    (project.path / "tests" / "conftest.py").write_text(PATCHES[patch])
    _, data = submit(project)
    assert_not_forged(project, data)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["ini-addopts", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "-p"])
@pytest.mark.children_measured
def test_a_plugin_that_patches_the_gate_has_no_effect(
    project: Project, template: Project, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    project.fill_from(template)
    (project.path / "src" / "forge.py").write_text(PATCHES["gate-judge"])
    monkeypatch.setenv("PYTHONPATH", str(project.path / "src"))
    args: tuple[str, ...] = ()
    if where == "ini-addopts":
        text = (project.path / "pyproject.toml").read_text()
        text = text.replace(
            "[tool.pytest.ini_options]\n", '[tool.pytest.ini_options]\naddopts = "-p forge"\n'
        )
        (project.path / "pyproject.toml").write_text(text)
    elif where == "-p":
        args = ("-p", "forge")
    else:
        monkeypatch.setenv(where, "-p forge" if where == "PYTEST_ADDOPTS" else "forge")
    _, data = submit(project, *args)
    assert_not_forged(project, data)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def pids_in(folder: Path) -> list[int]:
    return [int(p.read_text()) for p in folder.glob("*.pid") if p.read_text().strip()]


# A test that starts processes which outlive it: detached (own session) and
# double-forked; each writes its pid, then holds quest.json's lock, or rewrites quest.json
# once the submit is over (the test says so with a file): whatever the submit's length,
# one that outlived it would write then.
DETACHING_TEST = '''\
import os, subprocess, sys
from pkg.calc import sign

PIDS = {pids!r}
FORGER = """
import os, sys, time, json
open(os.path.join(sys.argv[1], str(os.getpid()) + ".pid"), "w").write(str(os.getpid()))
if sys.argv[2] == "lock":
    import fcntl
    handle = open(".quest/quest.json.lock", "a")
    fcntl.flock(handle, fcntl.LOCK_EX)
    time.sleep(120)
for _ in range(2400):
    if os.path.exists(os.path.join(sys.argv[1], "submitted")):
        break
    time.sleep(0.05)
data = json.load(open("quest.json"))
for quest in data["quests"].values():
    quest["state"] = "PASS"
open("quest.json", "w").write(json.dumps(data))
"""


def test_sign():
    sign(-5)
    sign(3)
    subprocess.Popen([sys.executable, "-c", FORGER, PIDS, "rewrite"], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.Popen([sys.executable, "-c", FORGER, PIDS, "lock"], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", FORGER, PIDS, "rewrite"])
        os._exit(0)
    os.wait()
'''


@pytest.mark.slow
@pytest.mark.children_measured
def test_nothing_the_tests_start_outlives_the_submit(
    project: Project, template: Project, tmp_path: Path
) -> None:
    project.fill_from(template)
    pids = tmp_path / "pids"
    pids.mkdir()
    project.test("test_sign", DETACHING_TEST.format(pids=str(pids)))
    _, data = submit(project)
    assert data["verdict"] == "FAIL", data
    started = pids_in(pids)
    assert len(started) >= 3  # each run of the test starts three
    assert [pid for pid in started if alive(pid)] == []
    (pids / "submitted").write_text("")
    time.sleep(1)  # a forger still alive would have rewritten quest.json by now
    quest = project.ratchet()["quests"][SIGN_ID]
    assert (quest["state"], quest["tries"]) == ("TODO", 1)


SLOW_TEST = """\
import os, subprocess, sys, time
from pkg.calc import sign

PIDS = {pids!r}


def test_sign():
    sign(-5)
    sign(3)
    open(os.path.join(PIDS, str(os.getpid()) + ".pid"), "w").write(str(os.getpid()))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                             start_new_session=True)
    open(os.path.join(PIDS, str(child.pid) + ".pid"), "w").write(str(child.pid))
    time.sleep(120)
"""


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
            except OSError:
                continue
            if int(stat[stat.rfind(b")") + 2 :].split()[1]) == parent:
                out.append(int(entry))
                todo.append(int(entry))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_signalled_submit_records_nothing_and_leaves_nothing(
    project: Project, template: Project, tmp_path: Path, children_tmpdir: Path, sig: signal.Signals
) -> None:
    project.fill_from(template)
    pids = tmp_path / "pids"
    pids.mkdir()
    project.test("test_sign", SLOW_TEST.format(pids=str(pids)))
    before = (project.path / "quest.json").read_bytes()
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--quest", "submit",
         "--quest-id", SIGN_ID],
        cwd=project.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while len(pids_in(pids)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(pids_in(pids)) == 2, "the test never started"
    gate_children = descendants(process.pid)
    assert gate_children
    process.send_signal(sig)
    out, _ = process.communicate(timeout=30)
    if sig == signal.SIGTERM:
        assert process.returncode == 2, out
        assert b"no verdict was recorded" in out, out
        # Handled as Ctrl-C: the judge removed its temporary folders (after SIGKILL
        # nothing can, docs/judge.md: they stay in this test's TMPDIR).
        assert sorted(p.name for p in children_tmpdir.glob("pytest-quest-*")) == []
    deadline = time.monotonic() + 10
    leftovers = pids_in(pids) + gate_children
    while any(alive(pid) for pid in leftovers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in leftovers if alive(pid)] == []
    # No verdict: only the mark written before the run, which the next submit counts.
    after = (project.path / "quest.json").read_bytes()
    assert without_begun_marks(after) == ratchet_view(before)
    assert BEGUN_KEY in ratchet_view(after)["quests"][SIGN_ID]["extra"]


HONEST_TEST = """\
from pkg.calc import sign


def test_sign():
    assert sign(-5) == -1
    assert sign(-1) == -1
    assert sign(0) == 1
    assert sign(7) == 1
"""

L1_CONFTEST = """\
from pytest_quest.core.model import Fact, Verdict


def pytest_quest_l1_check(quest, function, run):
    assert function.covering_tests and run.outcomes
    return [(Verdict.REVIEW, Fact("project.rule", quest.id, "a rule", "broken", "broken rule"))]
"""


@pytest.mark.slow
@pytest.mark.children_measured
def test_the_projects_l1_hooks_run_in_a_child_and_still_count(project: Project) -> None:
    # The project's own L1 hooks, there when the ratchet is made.
    (project.path / "tests").mkdir(exist_ok=True)
    (project.path / "tests" / "conftest.py").write_text(L1_CONFTEST)
    scanned(project)
    project.test("test_sign", HONEST_TEST)
    _, data = submit(project)
    assert data["verdict"] == "REVIEW", data
    assert [f["check"] for f in data["quest"]["facts"]] == ["project.rule"]


@pytest.mark.slow
def test_an_in_process_pytest_main_caller_gets_the_clean_judges_verdict(
    project: Project, template: Project
) -> None:
    """`pytest.main()` inside another program: the judge runs as a subprocess, output relayed."""
    project.fill_from(template)
    (project.path / "tests" / "conftest.py").write_text(PATCHES["gate-judge"])
    script = (
        "import sys, pytest\n"
        "code = pytest.main(['-p', 'no:cacheprovider', '--quest', 'submit', '--quest-id', "
        f"{SIGN_ID!r}, '--quest-format', 'json'])\n"
        "sys.exit(int(code))\n"
    )
    process = subprocess.run(
        [sys.executable, "-c", script], cwd=project.path, capture_output=True, text=True
    )
    data = json.loads(process.stdout)
    assert process.returncode == 1, process.stderr
    assert_not_forged(project, data)
