"""Issue 16: hostile or careless input in, safe output out, through real pytest processes.

Each test is an attack first: a forged ratchet file, a special file in its
place, a link out of the project.  What it must get: exit 4, one ``ERROR:``
line naming the field, no traceback, the file's bytes unchanged, no hang.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.projects import CALC, SIGN, scanned_template
from tests.support.projects import TEST_DOUBLE as TEST_CALC
from tests.support.quests import ratchet_view
from tests.support.runner import popen_pytest


def calc_project(project):
    project.source("calc", CALC)
    project.test("test_calc", TEST_CALC)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return scanned_template(tmp_path_factory, calc_project)[0]


@pytest.fixture
def scanned(project, template):
    return project.fill_from(template)


def refused(result, path: Path, before: bytes, *needles: str) -> str:
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, output
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    errors = [line for line in result.stdout.lines if line.startswith("ERROR: ")]
    assert len(errors) == 1, output
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert path.read_bytes() == before
    return errors[0]


def forge(project, change) -> tuple[Path, bytes]:
    path = Path(project.path) / "quest.json"
    data = ratchet_view(path.read_bytes())
    change(data)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path, path.read_bytes()


def moved_to(file: str):
    def change(data):
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
def test_next_never_shows_a_file_outside_the_project(scanned, file, problem):
    path, before = forge(scanned, moved_to(file))
    result = scanned.run("--quest", "next", f"--quest-id={file}::sign")
    refused(result, path, before, f".file: {problem}")
    assert "root:" not in result.stdout.str()  # not a line of /etc/passwd


def test_a_link_in_the_source_folder_pointing_out_is_refused(scanned):
    link = Path(scanned.path) / "src" / "pkg" / "evil.py"
    link.symlink_to("/etc/passwd")
    path, before = forge(scanned, moved_to("src/pkg/evil.py"))
    result = scanned.run("--quest", "next", "--quest-id", "src/pkg/evil.py::sign")
    refused(result, path, before, "resolves to /etc/passwd, outside the rootdir")


def test_a_scan_never_records_a_linked_file_out_of_the_project(scanned, tmp_path_factory):
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
def test_a_fifo_ratchet_file_is_refused_without_hanging(project, args):
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
