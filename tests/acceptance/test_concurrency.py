"""Many processes, one ratchet file: no update is ever lost.

Run with ``pytest -m stress tests/test_concurrency.py``.  The store-level
test drives ``RatchetStore.update`` from 8 separate Python processes at
once; the end-to-end tests run real ``pytest --quest submit`` processes side
by side on one project.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.engine.codec import loads
from tests.support.projects import Project, quest_files
from tests.support.runner import child_environ, popen_pytest

pytestmark = pytest.mark.stress

WRITER = """
import sys, time
from pathlib import Path
from pytest_quest.core.model import Event, Quest
from pytest_quest.engine.store import RatchetStore

path, qid, rounds, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
store = RatchetStore(Path(path), lock_timeout=60)
while time.time() < start:  # all writers begin together
    time.sleep(0.001)
for n in range(rounds):
    def change(ratchet, n=n):
        quest = ratchet.quests.get(qid)
        if quest is None:
            file, qualname = qid.split("::")
            quest = Quest(id=qid, file=file, qualname=qualname, first=1, last=2, fingerprint="fp")
            ratchet.quests[qid] = quest
        quest.tries += 1
        quest.history.append(Event(at=str(n), action="submit", verdict="FAIL"))
        ratchet.active = qid  # a field every writer fights over
    store.update(change)
print("done", flush=True)
"""

WRITERS = 8
ROUNDS = 40


@pytest.mark.parametrize("repeat", range(3))
def test_eight_writers_lose_no_update(tmp_path: Path, repeat: int) -> None:
    path = tmp_path / "quest.json"
    ids = [f"src/pkg/mod{index}.py::func{index}" for index in range(WRITERS)]
    start = time.time() + 1.0  # after every interpreter has started
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), qid, str(ROUNDS), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_environ(),
        )
        for qid in ids
    ]
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        assert out == "done\n"
    ratchet = loads(path.read_bytes(), str(path))
    assert sorted(ratchet.quests) == sorted(ids)
    for qid in ids:
        quest = ratchet.quests[qid]
        assert quest.tries == ROUNDS, f"{qid}: {ROUNDS - quest.tries} updates lost"
        assert [event.at for event in quest.history] == [str(n) for n in range(ROUNDS)]
    assert ratchet.active in ids
    assert sorted(p.name for p in tmp_path.iterdir()) == [".quest", "quest.json"]


SCANNER = """
import sys, time
from pathlib import Path
from pytest_quest.core.model import FunctionFacts
from pytest_quest.core.ratchet import merge_scan
from pytest_quest.engine.store import RatchetStore

path, ids, rounds, start = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), float(sys.argv[4])
functions = []
for qid in ids + ["src/pkg/new.py::fresh"]:
    file, qualname = qid.split("::")
    functions.append(FunctionFacts(
        file=file, qualname=qualname, ordinal=1, start=1, first=1, last=2,
        fingerprint="fp", statements=2, branches=0, missing_lines=[2],
    ))
store = RatchetStore(Path(path), lock_timeout=60)
while time.time() < start:
    time.sleep(0.001)
for n in range(rounds):
    store.update(lambda ratchet, n=n: merge_scan(ratchet, functions, [], {}, {}, f"scan {n}"))
print("done", flush=True)
"""


def test_scans_and_verdicts_at_once_keep_both(tmp_path: Path) -> None:
    # 6 processes record verdicts while 2 rescan: a scan merges into what is
    # there now, so it never resets a verdict recorded meanwhile.
    path = tmp_path / "quest.json"
    ids = [f"src/pkg/mod{index}.py::func{index}" for index in range(6)]
    start = time.time() + 1.0
    commands = [[WRITER, str(path), qid, str(ROUNDS), str(start)] for qid in ids]
    commands += [[SCANNER, str(path), ",".join(ids), str(ROUNDS), str(start)]] * 2
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_environ(),
        )
        for command in commands
    ]
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert out == "done\n"
    ratchet = loads(path.read_bytes(), str(path))
    assert sorted(ratchet.quests) == sorted([*ids, "src/pkg/new.py::fresh"])
    for qid in ids:
        assert ratchet.quests[qid].tries == ROUNDS, f"{qid}: verdicts lost to a scan"
        assert len(ratchet.quests[qid].history) == ROUNDS
    assert ratchet.removed == []
    assert ratchet.scanned_at == f"scan {ROUNDS - 1}"


# -- end to end: real submit processes ---------------------------------------------------

FUNCS = """\
def f{n}(x):
    if x > {n}:
        return x - {n}
    return {n}
"""

PASSING_TEST = """\
from pkg.mod{n} import f{n}


def test_f{n}():
    assert f{n}({n} + 5) == 5
    assert f{n}(-1) == {n}
"""

FAILING_TEST = """\
from pkg.mod{n} import f{n}


def test_f{n}():
    assert f{n}({n} + 5) == 5
"""


def submit(project: Project, *args: str) -> subprocess.Popen[str]:
    return popen_pytest(
        project.path,
        "--quest",
        "submit",
        "--quest-format",
        "json",
        "--quest-lock-timeout",
        "60",
        # Gate step 4 reruns the tests under mutants: costly, and not
        # what these tests are about.
        "--quest-mutants",
        "off",
        *args,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, dict[str, Any], str]:
    out, err = process.communicate(timeout=300)
    try:
        data = json.loads(out)
    except ValueError:
        raise AssertionError(f"stdout is not one JSON object:\n{out}\n{err}")
    return process.returncode, data, err


def test_four_submit_processes_all_recorded(project: Project) -> None:
    for n in range(4):
        project.source(f"mod{n}", FUNCS.format(n=n))
    result, data = project.run_json("--quest", "scan", "--quest-mutants", "off")
    assert result.ret == 0
    assert data["remaining"] == 4
    # Two quests get tests that cover them fully (PASS), two only half (FAIL).
    for n in range(4):
        project.test(f"test_mod{n}", (PASSING_TEST if n % 2 == 0 else FAILING_TEST).format(n=n))
    ids = [f"src/pkg/mod{n}.py::f{n}" for n in range(4)]
    processes = [submit(project, "--quest-id", qid) for qid in ids]
    results = [finish(process) for process in processes]
    ratchet = project.ratchet()["quests"]
    for n, (qid, (returncode, data, err)) in enumerate(zip(ids, results)):
        expected = "PASS" if n % 2 == 0 else "FAIL"
        assert data["verdict"] == expected, (data, err)
        assert returncode == (0 if expected == "PASS" else 1)
        assert ratchet[qid]["state"] == ("PASS" if expected == "PASS" else "TODO")
        assert ratchet[qid]["tries"] == (0 if expected == "PASS" else 1)
        assert [event["verdict"] for event in ratchet[qid]["history"]] == [expected]
    assert quest_files(project) == [
        ".quest/quest.json.judging.lock",
        ".quest/quest.json.lock",
        "quest.json",
    ]


SLOW_TEST = """\
import time

from pkg.mod0 import f0


def test_f0():
    time.sleep(2)  # both submits have read the file before either records
    assert f0(5) == 5
    assert f0(-1) == 0
"""


def test_two_submits_of_one_quest_one_wins_the_other_is_told(project: Project) -> None:
    project.source("mod0", FUNCS.format(n=0))
    result, _ = project.run_json("--quest", "scan", "--quest-mutants", "off")
    assert result.ret == 0
    project.test("test_mod0", SLOW_TEST)
    qid = "src/pkg/mod0.py::f0"
    first = submit(project, "--quest-id", qid)
    second = submit(project, "--quest-id", qid)
    outcomes = sorted([finish(first), finish(second)], key=lambda outcome: outcome[0])
    (won_code, won, _), (lost_code, lost, lost_err) = outcomes
    assert won_code == 0 and won["verdict"] == "PASS", won
    assert lost_code == 4, lost_err
    # The second is stopped while the first judges (the usual case: the test
    # sleeps), or refused by the state it finds if the first already finished.
    assert lost["error"] in (
        (
            f"quest {qid} is being judged by another process right now; "
            "wait for it to finish, then run `pytest --quest next`"
        ),
        f"quest {qid} is PASS and refuses resubmission",
    )
    quest = project.ratchet()["quests"][qid]
    assert quest["state"] == "PASS"
    assert [event["verdict"] for event in quest["history"]] == ["PASS"]


# Judged processes may not open the lock for writing (docs/judge.md), so the
# probe opens it read-only.
LOCK_PROBE_TEST = """\
import fcntl, os
from pathlib import Path


def test_lock_is_free_while_tests_run():
    path = Path(__file__).resolve().parents[1] / ".quest" / "".join(["quest.js", "on.lock"])
    if not path.exists():
        return
    fd = os.open(path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if the command holds the lock
    os.close(fd)
"""


def test_lock_is_not_held_while_tests_run(project: Project) -> None:
    project.source("mod0", FUNCS.format(n=0))
    lock = str(Path(project.path) / ".quest" / "quest.json.lock")
    project.test("test_probe", LOCK_PROBE_TEST.format(lock=lock))
    result, data = project.run_json("--quest", "scan", "--quest-mutants", "off")
    assert result.ret == 0
    assert data["tests_not_passed"] == []  # scan ran the probe without the lock held
    project.test(
        "test_probe",
        LOCK_PROBE_TEST.format(lock=lock)
        + textwrap.dedent(PASSING_TEST.format(n=0)).replace("from pkg", "\nfrom pkg"),
    )
    returncode, data, err = finish(submit(project, "--quest-id", "src/pkg/mod0.py::f0"))
    assert data["verdict"] == "PASS", (data, err)  # so the probe passed in the gate's run
    assert returncode == 0
