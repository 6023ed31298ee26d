"""The processes a test starts measure for that test (engine/subproc.py), with real children."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from coverage import CoverageData

from pytest_quest.engine.subproc import (
    USER_ENV,
    ChildMeasurement,
    _end_process,
    rcfile_text,
    read_arcs,
    stop_forkserver,
)

CODE = textwrap.dedent(
    """\
    def sign(x):
        if x < 0:
            return -1
        return 1
    """
)


@pytest.fixture
def src(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "signmod.py").write_text(CODE)
    return folder


@pytest.fixture
def children(tmp_path: Path, src: Path, monkeypatch: pytest.MonkeyPatch) -> ChildMeasurement:
    for name in USER_ENV:
        monkeypatch.delenv(name, raising=False)
    return ChildMeasurement(root=str(tmp_path / "data"), source=[str(src)])


def run_child(src: Path, value: int, env: dict[str, str] | None = None) -> None:
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = str(src)
    code = f"import signmod; print(signmod.sign({value}))"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)


def folded(children: ChildMeasurement) -> CoverageData:
    data = CoverageData(no_disk=True)
    children.fold(data)
    return data


def arcs_of(data: CoverageData, context: str, filename: str) -> set[tuple[int, int]]:
    data.set_query_contexts([context])
    return set(data.arcs(filename) or ())


def test_the_rcfile_names_the_running_test_s_data_file_and_the_user_s_variables_come_back(
    children: ChildMeasurement, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COVERAGE_PROCESS_START", "/user/.coveragerc")
    monkeypatch.setenv("COVERAGE_FILE", "/user/.coverage")
    children.start()
    try:
        rcfile = os.environ["COVERAGE_PROCESS_START"]
        assert rcfile.startswith(children.root)
        assert "COVERAGE_FILE" not in os.environ
        children.switch("tests/test_a.py::test_one")
        text = Path(rcfile).read_text()
        assert f"data_file = {children.root}/.coverage-0\n" in text
        assert "branch = True" in text and "parallel = True" in text
        children.switch("")
        assert f"data_file = {children.root}/.coverage-outside\n" in Path(rcfile).read_text()
    finally:
        children.stop()
    assert os.environ["COVERAGE_PROCESS_START"] == "/user/.coveragerc"
    assert os.environ["COVERAGE_FILE"] == "/user/.coverage"


def test_a_percent_in_a_path_is_not_interpolation() -> None:
    text = rcfile_text("/tmp/a%b/.coverage-1", source=["/x%y"], source_pkgs=[], omit=[])
    assert "a%%b" in text and "/x%%y" in text


def test_a_python_child_counts_for_the_test_that_started_it(
    children: ChildMeasurement, src: Path
) -> None:
    filename = str(src / "signmod.py")
    env_at_import = dict(os.environ)  # copied before measuring: still the running test's
    children.start()
    try:
        env_at_import["COVERAGE_PROCESS_START"] = os.environ["COVERAGE_PROCESS_START"]
        children.switch("t.py::test_negative")
        run_child(src, -3, env_at_import)
        children.switch("")
        run_child(src, 5)  # between tests: measured, for no test
        children.switch("t.py::test_nothing")
        children.switch("")
    finally:
        children.stop()
    data = folded(children)
    assert (2, 3) in arcs_of(data, "t.py::test_negative", filename)
    assert (2, 4) not in arcs_of(data, "t.py::test_negative", filename)
    assert (2, 4) in arcs_of(data, "", filename)
    assert arcs_of(data, "t.py::test_nothing", filename) == set()
    assert children.notes == []
    assert not any(name.startswith(".coverage") for name in os.listdir(src))


def test_a_forked_child_counts_for_the_test_that_forked_it(
    children: ChildMeasurement, src: Path
) -> None:
    sys.path.insert(0, str(src))
    try:
        import signmod  # type: ignore[import-not-found]  # written by the `src` fixture

        children.start()
        try:
            children.switch("t.py::test_fork")
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                signmod.sign(-1)
                os._exit(0)
            os.waitpid(pid, 0)
            children.switch("")
        finally:
            children.stop()
    finally:
        sys.path.remove(str(src))
        sys.modules.pop("signmod", None)
    data = folded(children)
    assert (2, 3) in arcs_of(data, "t.py::test_fork", str(src / "signmod.py"))


def test_late_and_unreadable_data_are_left_out_with_a_note_naming_the_test(
    children: ChildMeasurement, src: Path
) -> None:
    children.start()
    try:
        children.switch("t.py::test_late")
        children.switch("t.py::test_torn")
        children.switch("")
    finally:
        children.stop()
    root = Path(children.root)
    good = CoverageData(basename=str(root / "scratch"))
    good.add_arcs({str(src / "signmod.py"): [(2, 3)]})
    good.write()
    late = root / ".coverage-0.host.1.X"
    late.write_bytes((root / "scratch").read_bytes())
    future = time.time() + 60
    os.utime(late, (future, future))
    torn = root / ".coverage-1.host.2.X"
    torn.write_bytes(b"SQLite format 3\x00 torn")
    os.utime(torn, (1.0, 1.0))  # written before its test ended
    data = folded(children)
    assert arcs_of(data, "t.py::test_late", str(src / "signmod.py")) == set()
    assert arcs_of(data, "t.py::test_torn", str(src / "signmod.py")) == set()
    assert children.notes == [
        "t.py::test_late: 1 process it started wrote their coverage data after the test "
        "ended; what they executed counts for no test",
        "t.py::test_torn: the coverage data of 1 process it started is missing, partial "
        "or unreadable; left out",
    ]
    assert read_arcs(str(root / "missing")) is None


def test_a_measuring_pytest_started_by_a_measured_test_stops_the_hook_s_tracer(
    children: ChildMeasurement, src: Path
) -> None:
    code = "from pytest_quest.engine.subproc import stop_auto_started as s; print(s(), s())"
    children.start()
    try:
        children.switch("t.py::test_outer")
        ours = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        children.switch("")
    finally:
        children.stop()
    assert ours.stdout.split() == ["True", "False"]
    other = Path(children.root) / "user.rc"
    other.write_text("[run]\nparallel = true\n")
    env = dict(os.environ, COVERAGE_PROCESS_START=str(other), COVERAGE_FILE=str(other) + ".data")
    theirs = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert theirs.stdout.split() == ["False", "False"]  # the user's measurement is left alone


def _forkserver_pid() -> int | None:
    from multiprocessing import forkserver

    pid = forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
    return pid if isinstance(pid, int) else None


def test_a_forkserver_started_by_one_test_ends_with_it_and_the_next_starts_its_own(
    children: ChildMeasurement, src: Path
) -> None:
    import multiprocessing

    context = multiprocessing.get_context("forkserver")
    sys.path.insert(0, str(src))
    context.set_forkserver_preload([])
    pids = []
    try:
        import signmod

        children.start()
        try:
            for nodeid, value in (("t.py::test_a", -1), ("t.py::test_b", 1)):
                children.switch(nodeid)
                pool = context.Pool(1)
                try:
                    assert pool.map(signmod.sign, [value]) == [value]
                finally:
                    pool.close()
                    pool.join()
                pids.append(_forkserver_pid())
                children.switch("")
                assert _forkserver_pid() is None  # ended with its test
        finally:
            children.stop()
    finally:
        context.set_forkserver_preload(["__main__"])
        sys.path.remove(str(src))
        sys.modules.pop("signmod", None)
    assert None not in pids and pids[0] != pids[1]
    for pid in pids:
        assert pid is not None
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped
    data = folded(children)
    filename = str(src / "signmod.py")
    assert (2, 3) in arcs_of(data, "t.py::test_a", filename)
    assert (2, 4) not in arcs_of(data, "t.py::test_a", filename)
    assert (2, 4) in arcs_of(data, "t.py::test_b", filename)
    assert (2, 3) not in arcs_of(data, "t.py::test_b", filename)
    # Test B's worker was forked by B's own server: nothing written under A's name late.
    assert children.notes == []


def test_a_server_ignoring_sigterm_is_killed_and_a_stranger_never_signalled() -> None:
    stubborn = subprocess.Popen(
        [sys.executable, "-c", "import signal, sys, time; signal.signal(signal.SIGTERM, "
         "signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    assert stubborn.stdout is not None and stubborn.stdout.readline() == b"ready\n"
    started = time.monotonic()
    _end_process(stubborn.pid, 0.2)
    assert time.monotonic() - started < 5
    with pytest.raises(ChildProcessError):
        os.waitpid(stubborn.pid, os.WNOHANG)  # killed and reaped
    stubborn.returncode = -9  # (reaped above: Popen must not wait for it again)
    stubborn.stdout.close()
    # A pid that is no child of ours (any more) is left alone.
    _end_process(stubborn.pid, 0.1)
    assert stop_forkserver() is False  # none runs here now


def test_a_link_left_half_swapped_is_replaced_and_a_written_rcfile_reused(
    children: ChildMeasurement,
) -> None:
    children.start()
    try:
        rcfile = os.environ["COVERAGE_PROCESS_START"]
        outside = os.readlink(rcfile)
        os.symlink("nowhere", rcfile + ".next")  # a switch stopped between its two steps
        children.switch("t::a")
        assert os.readlink(rcfile) != outside and not os.path.lexists(rcfile + ".next")
        written = os.path.join(os.path.dirname(rcfile), outside)
        before = os.stat(written).st_mtime_ns
        children.switch("")  # back to the file written at the start, not written again
        assert os.readlink(rcfile) == outside and os.stat(written).st_mtime_ns == before
    finally:
        children.stop()
