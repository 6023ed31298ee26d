"""Hostile or careless input in, safe output out, through real pytest processes.

Each test is an attack first: a forged ratchet file, a special file in its
place, a link out of the project.  What it must get: exit 4, one ``ERROR:``
line naming the field, no traceback, the file's bytes unchanged, no hang.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.app.environment import interrupted_done
from tests.support.projects import (
    CALC,
    SIGN,
    Project,
    built_template,
    scanned_template,
    scanned_unsandboxed,
)
from tests.support.projects import TEST_DOUBLE as TEST_CALC
from tests.support.quests import ratchet_view, without_begun_marks
from tests.support.runner import popen_pytest


def calc_project(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_calc", TEST_CALC)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return scanned_template(tmp_path_factory, calc_project)[0]


@pytest.fixture
def scanned(project: Project, template: Project) -> Project:
    return project.fill_from(template)


def refused(result: pytest.RunResult, path: Path, before: bytes, *needles: str) -> str:
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, output
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    errors: list[str] = [line for line in result.stdout.lines if line.startswith("ERROR: ")]
    assert len(errors) == 1, output
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert path.read_bytes() == before
    return errors[0]


def forge(project: Project, change: Callable[[dict[str, Any]], object]) -> tuple[Path, bytes]:
    path = Path(project.path) / "quest.json"
    data = ratchet_view(path.read_bytes())
    change(data)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path, path.read_bytes()


def moved_to(file: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        entry = data["quests"].pop(SIGN)
        entry["file"] = file
        new_id = f"{file}::sign"
        data["quests"][new_id] = entry
        data["active"] = new_id

    return change


# -- file: absolute, climbing, a link out of the project --------------------------------


@pytest.mark.parametrize(
    ("file", "problem"),
    [("/etc/passwd", "an absolute path"), ("../../../../../etc/passwd", "climbs out")],
)
def test_next_never_shows_a_file_outside_the_project(
    scanned: Project, file: str, problem: str
) -> None:
    path, before = forge(scanned, moved_to(file))
    result = scanned.run("--quest", "next", f"--quest-id={file}::sign")
    refused(result, path, before, f".file: {problem}")
    assert "root:" not in result.stdout.str()  # not a line of /etc/passwd


def test_a_link_in_the_source_folder_pointing_out_is_refused(scanned: Project) -> None:
    link = Path(scanned.path) / "src" / "pkg" / "evil.py"
    link.symlink_to("/etc/passwd")
    path, before = forge(scanned, moved_to("src/pkg/evil.py"))
    result = scanned.run("--quest", "next", "--quest-id", "src/pkg/evil.py::sign")
    refused(result, path, before, "resolves to /etc/passwd, outside the rootdir")


def test_a_scan_never_records_a_linked_file_out_of_the_project(
    scanned: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside") / "other.py"
    outside.write_text("def other(x):\n    return x\n")
    (Path(scanned.path) / "src" / "pkg" / "other.py").symlink_to(outside)
    scanned.test("test_other", "from pkg.other import other\n\n\ndef test_o():\n    other(1)\n")
    result, data = scanned.run_json("--quest", "scan")
    assert result.ret == 0, result.stdout.str()
    files = {quest["file"] for quest in scanned.ratchet()["quests"].values()}
    assert files == {"src/pkg/calc.py"}
    result, _ = scanned.run_json("--quest-status")
    assert result.ret == 0


# -- special files ------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("--quest-status",), ("--quest", "next"), ("--quest", "check")])
def test_a_fifo_ratchet_file_is_refused_without_hanging(
    project: Project, args: tuple[str, ...]
) -> None:
    calc_project(project)
    path = Path(project.path) / "quest.json"
    os.mkfifo(path)
    process = popen_pytest(project.path, *args)
    try:
        out, err = process.communicate(timeout=120)
    except BaseException:
        process.kill()
        process.communicate()
        raise
    assert process.returncode == 4, out + err
    assert "Traceback" not in out + err
    errors = [line for line in out.splitlines() if line.startswith("ERROR: ")]
    assert errors == [
        f"ERROR: {path}: is a FIFO (named pipe), not a regular file; it was not read "
        "(point --quest-file at a regular file)"
    ], out
    assert Path(path).is_fifo()


# -- signals: SIGTERM is Ctrl-C for the gate's own work -------------------------------------

ENDLESS_TEST = """\
import os
import subprocess
import sys
import time
from pathlib import Path

from pkg.calc import sign


def test_sign():
    sign(-1)
    if {detached!r}:
        # A detached process of the test's own: under the gate it must not outlive the run
        # either (engine/reaper.py).  Under scan the tests run in pytest's own process: what
        # they start is theirs (the trust-boundary issue), not the gate's.
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    Path({pid_file!r}).write_text(str(os.getpid()))
    while True:
        time.sleep(0.05)
"""


def processes_in(*folders: Path) -> list[str]:
    """``ps`` lines of live processes whose working folder is under one of `folders`."""
    listing = subprocess.run(
        ["ps", "-e", "-o", "pid=,stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    found = []
    roots = [str(folder.resolve()) for folder in folders]
    for line in listing.splitlines():
        pid, stat, *_ = [*line.split(None, 2), ""]
        if stat.startswith("Z") or int(pid) == os.getpid():
            continue  # dead, only not yet reaped; or this test itself (pytester's cwd)
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if any(cwd == root or cwd.startswith(root + os.sep) for root in roots):
            found.append(line.strip())
    return found


@pytest.mark.parametrize("command", ["submit", "scan", "check"])
@pytest.mark.children_measured
@pytest.mark.unsandboxed  # the pid the test writes in the project, seen from outside
def test_sigterm_records_nothing_and_leaves_no_process_or_temp_folder(
    scanned: Project,
    command: str,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scanned_unsandboxed(scanned)
    temp = tmp_path_factory.mktemp("tmpdir")
    monkeypatch.setenv("TMPDIR", str(temp))
    project = Path(scanned.path)
    path = project / "quest.json"
    pid_file = project / "test-pid"
    scanned.test(
        "test_sign", ENDLESS_TEST.format(pid_file=str(pid_file), detached=command == "submit")
    )
    before = path.read_bytes()
    args = ["--quest", command] + ([f"--quest-id={SIGN}"] if command == "submit" else [])
    process = popen_pytest(project, *args, merge_stderr=True)
    try:
        deadline = time.monotonic() + 90
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pid_file.exists(), "the endless test never started"
        assert processes_in(project), "the test's processes should be seen while it runs"
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 2, out
    done = interrupted_done(1, 1) if command == "submit" else "nothing was recorded"
    assert f"INTERRUPTED: {done}; run the command again" in out.splitlines(), out
    assert "Traceback" not in out
    # A submit leaves only its begun mark (not a verdict): the next submit counts it.
    assert without_begun_marks(path.read_bytes()) == ratchet_view(before)
    if command != "submit":
        assert path.read_bytes() == before
    deadline = time.monotonic() + 10
    while processes_in(project, temp) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_in(project, temp) == []
    assert sorted(p.name for p in temp.iterdir()) == []  # no pytest-quest-data-*, no workdir


# -- verifiers: bounded -----------------------------------------------------------------------

GATE_MARKER = """
def pytest_configure(config):
    if config.getoption("quest_measure_only", default=None):
        open("gate-run.txt", "w").close()
"""


@pytest.fixture(scope="module")
def verify_template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """test_verify.py's project, scanned once for the two verifier tests here."""
    from tests.e2e.test_verify import scanned as verify_scanned

    return built_template(tmp_path_factory, verify_scanned)


def test_a_verifier_program_that_does_not_exist_is_a_usage_error_before_any_test(
    project: Project, verify_template: Project
) -> None:
    from tests.e2e.test_verify import submit

    project.fill_from(verify_template)
    project.test("conftest", GATE_MARKER)
    path = Path(project.path) / "quest.json"
    before = path.read_bytes()
    result, data = submit(
        project, "--quest-verify", "on", "--quest-verifier-cmd", "no-such-verifier --model x"
    )
    assert result.ret == 4, data
    assert data["error"] == (
        "verifier command 'no-such-verifier --model x' cannot be started: no program "
        "'no-such-verifier' (on PATH or from the rootdir); fix --quest-verifier-cmd or "
        "quest_verifier_cmd"
    )
    assert path.read_bytes() == before
    assert not (Path(project.path) / "gate-run.txt").exists()  # no test ran


def test_a_verifier_printing_100_mb_is_an_error_naming_the_cap(
    project: Project, verify_template: Project
) -> None:
    from tests.e2e.test_verify import SIGN_ID, submit

    project.fill_from(verify_template)
    flood = shlex.join(
        [
            sys.executable,
            "-c",
            "import sys\nb = b'x' * 1_000_000\nfor _ in range(100):\n    sys.stdout.buffer.write(b)",
        ]
    )
    result, data = submit(project, "--quest-verify", "on", "--quest-verifier-cmd", flood)
    assert result.ret == 0, data
    assert data["verdict"] == "REVIEW", data  # could not confirm
    record = project.ratchet()["quests"][SIGN_ID]["extra"]["verification"]
    errors = [call.get("error", "") for call in record["calls"]]
    assert errors == [
        "its output exceeded the cap of 1048576 bytes (1 MB) and it was stopped; "
        "a verifier replies in a few kilobytes"
    ], record


# -- exports stay where they belong ---------------------------------------------------------


# Two targets through a whole pytest; every refused target in-process on app.export
# (tests/unit/app/test_app_export_targets.py).
@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("quest.json.lock.json", "that name belongs to the ratchet file"),
        ("fifo.json", "it is not a regular file"),
    ],
)
def test_an_export_refuses_what_it_must_not_write(
    scanned: Project, name: str, problem: str
) -> None:
    root = Path(scanned.path)
    (root / "folder.json").mkdir()
    os.mkfifo(root / "fifo.json")
    (root / "tests" / "report.md").write_text("kept\n")
    path = root / "quest.json"
    before = path.read_bytes()
    listing = sorted(p.name for p in root.iterdir())
    result = scanned.run("--quest", "export", f"--quest-export-to={name}", "--quest-export-force")
    error = refused(result, path, before, problem)
    assert error.startswith(f"ERROR: argument --quest-export-to {name}: ") or name in error
    assert sorted(p.name for p in root.iterdir()) == listing
    assert (root / "tests" / "report.md").read_text() == "kept\n"


def test_an_export_outside_the_rootdir_needs_force_and_says_where(
    scanned: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "report.md"
    path = Path(scanned.path) / "quest.json"
    before = path.read_bytes()
    result = scanned.run("--quest", "export", f"--quest-export-to={outside}")
    refused(result, path, before, "is outside the rootdir", "pass --quest-export-force")
    assert not outside.exists()
    result = scanned.run(
        "--quest", "export", f"--quest-export-to={outside}", "--quest-export-force"
    )
    assert result.ret == 0, result.stdout.str()
    assert outside.exists()
    lines = [line for line in result.stdout.lines if line.startswith("export: ")]
    assert lines == [
        f"export: 2 quests written to {outside} (outside the rootdir {Path(scanned.path).resolve()})"
    ]


# -- the docs ---------------------------------------------------------------------------------


def test_the_hostile_input_table_names_tests_that_exist() -> None:
    from tests.e2e.test_store_corruption import CORRUPTIONS
    from tests.support.paths import DOCS

    doc = (DOCS / "reliability.md").read_text()
    table = doc.split("## Hostile input: one table", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) > 20
    tests = Path(__file__).resolve().parents[1]
    for row in rows[1:]:
        proof = row.rstrip(" |").rsplit(" | ", 1)[1]
        named = re.findall(r"`((?:unit|e2e|acceptance)/[\w/]+\.py)(?:::(\w+))?`", proof)
        assert named, row
        for file, test in named:
            text = (tests / file).read_text()
            assert not test or f"def {test}(" in text, (file, test)
        for kind in (
            re.findall(r"`([a-z0-9-]+)`", proof.split("kinds", 1)[-1]) if "kinds" in proof else []
        ):
            assert kind in CORRUPTIONS, kind
