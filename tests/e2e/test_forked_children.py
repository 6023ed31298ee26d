"""Processes the tests fork or spawn end on SIGTERM as under plain pytest: no command hangs.

The measuring pytest raises KeyboardInterrupt on SIGTERM; a process its
tests fork must not inherit that.  A ``multiprocessing`` pool's
``terminate()`` (its ``with`` block's end) SIGTERMs the workers, one of
them waiting on a lock the pool holds, and waits for them: a worker that
did not end hung the command.  The project's tests check what plain pytest
gives them: a forked child SIGTERMed at once, or while it waits on a lock,
dies of SIGTERM; fork, forkserver and spawn pools end.
"""

from __future__ import annotations

import pytest

from tests.support.projects import CALC, TEST_SIGN, Project
from tests.support.runner import run_pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork"),
]

FORKS = """\
import multiprocessing
import os
import signal
import tempfile
import time

import pytest

from pkg.calc import double

# The forkserver's socket path must stay short (AF_UNIX): not under the harness's deep TMPDIR.
tempfile.tempdir = "/tmp"

def wait_for(lock):
    with lock:
        pass


def test_a_forked_child_terminated_at_once_dies_of_sigterm():
    pid = os.fork()
    if pid == 0:
        try:
            time.sleep(30)
        finally:
            os._exit(3)
    os.kill(pid, signal.SIGTERM)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, status


def test_a_fork_worker_terminated_while_waiting_on_a_lock_dies_of_sigterm():
    context = multiprocessing.get_context("fork")
    lock = context.Lock()
    lock.acquire()
    child = context.Process(target=wait_for, args=(lock,))
    child.start()
    time.sleep(0.5)  # past its start-up: waiting on the lock
    child.terminate()
    child.join(30)
    if child.exitcode is None:
        child.kill()
        child.join()
    assert child.exitcode == -signal.SIGTERM


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_double_in_a_pool(method):
    for _ in range(10):
        with multiprocessing.get_context(method).Pool(2) as pool:
            assert pool.map(double, [1, 2]) == [2, 4]
"""

# Each command, its arguments after ``--quest``; none may take this long.
LIMIT = 240


def forking_project(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_forks", FORKS)


def run(project: Project, *args: str) -> pytest.RunResult:
    result = run_pytest(project.path, *args, timeout=LIMIT)
    return result


def test_plain_pytest_passes_the_forking_tests(project: Project) -> None:
    forking_project(project)
    result = run(project, "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=5)


def test_scan_check_next_and_submit_end_with_the_forking_tests_passing(project: Project) -> None:
    forking_project(project)
    scanned = run(project, "--quest", "scan", "-p", "no:cacheprovider")
    output = scanned.stdout.str() + scanned.stderr.str()
    assert scanned.ret == 0, output
    assert "5 passed" in output, output
    checked = run(project, "--quest", "check", "-p", "no:cacheprovider")
    assert checked.ret == 0, checked.stdout.str() + checked.stderr.str()
    issued = run(project, "--quest", "next", "--quest-format", "json")
    assert issued.ret == 0, issued.stdout.str() + issued.stderr.str()
    assert "src/pkg/calc.py::sign" in issued.stdout.str()
    project.test("test_sign", TEST_SIGN)
    submitted = run(project, "--quest", "submit", "--quest-format", "json")
    assert '"verdict": "PASS"' in submitted.stdout.str(), (
        submitted.stdout.str() + submitted.stderr.str()
    )
