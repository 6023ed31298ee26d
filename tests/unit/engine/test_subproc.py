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

from pytest_quest.engine.subproc import USER_ENV, ChildMeasurement, rcfile_text, read_arcs

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
        import signmod

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
        "t.py::test_late: 1 process(es) it started wrote their coverage data after the test "
        "ended; what they executed counts for no test",
        "t.py::test_torn: the coverage data of 1 process(es) it started is missing, partial "
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
