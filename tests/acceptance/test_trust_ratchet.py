"""The whole ratchet file is guarded: a judged test that writes it around the guard ends REVIEW.

Each attack is a throwaway project: scan, a test file that (besides testing the
judged function honestly) forges a PASS for ANOTHER quest, one submit of the
judged quest.  The verdict must be REVIEW or FAIL, and every entry but the
judged one must be as it was before the submit.  The forger is a helper script
the tests run (the test finds the ratchet file by suffix), so what stops it is
the guard.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.attacks import (
    assert_only_the_judged_entry_changed,
    attack_template,
    checks,
    scanned_copy,
    submit,
)
from tests.support.projects import Project

# The judge's own detection, without a kernel sandbox (docs/sandbox.md covers the sandboxed path).
pytestmark = [pytest.mark.slow, pytest.mark.unsandboxed]

SOURCE = """\
def target(n):
    if n > 1:
        return "many"
    return "one"


def other(n):
    if n > 1:
        return n * 2
    return n


def third(n):
    return n - 1
"""

TARGET = "src/pkg/mod.py::target"
VICTIM = "src/pkg/mod.py::other"

# Run as `python forge.py MODE RATCHET VICTIM`: forges a PASS for VICTIM.
FORGE = r"""
import hashlib, json, os, sys, time

mode, path, victim = sys.argv[1], sys.argv[2], sys.argv[3]


def journal_of(path):
    import pwd
    key = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:32]
    home = pwd.getpwuid(os.getuid()).pw_dir
    return os.path.join(home, ".cache", "pytest-quest", "journals", key + ".journal")


if mode.startswith("late"):
    # After the verdict is recorded: wait for the record's journal line.
    journal = journal_of(path)
    size = os.path.getsize(journal)
    deadline = time.time() + 120
    while os.path.getsize(journal) == size and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    mode = mode[len("late-"):]
if not os.path.exists(path):
    sys.exit(0)
raw = open(path, "rb").read()
if mode == "delete":
    os.remove(path)
    sys.exit(0)
if mode == "truncate":
    open(path, "w").close()
    sys.exit(0)
data = json.loads(raw)
tests = data.setdefault("tests", [])  # version 2: covering tests by index
if "forged" not in tests:  # forging twice (a rerun) gives the same file
    tests.append("forged")
data["quests"][victim].update(
    state="PASS", passed_at="2026-01-02T00:00:00Z", covering_tests=[tests.index("forged")],
    missing_lines=[], missing_branches=[],
)
forged = json.dumps(data, indent=2, sort_keys=True).encode() + b"\n"
if mode == "replace":
    tmp = path + ".forged"
    open(tmp, "wb").write(forged)
    os.replace(tmp, path)
else:  # in place, through whatever name `path` is (a hard link too)
    with open(path, "r+b") as handle:
        handle.seek(0)
        handle.truncate()
        handle.write(forged)
if mode == "journal":
    # The journal line pytest-quest's own store would write.
    line = json.dumps({
        "inode": os.stat(path).st_ino, "pid": os.getpid(),
        "read": hashlib.sha256(raw).hexdigest(),
        "time": round(time.time(), 3), "wrote": hashlib.sha256(forged).hexdigest(),
    }, sort_keys=True, separators=(",", ":"))
    with open(journal_of(path), "a") as handle:
        handle.write(line + "\n")
"""

TEST_HEAD = """\
import os, subprocess, sys, time
from pathlib import Path

from pkg.mod import target

ROOT = Path(__file__).resolve().parent.parent
VICTIM = "src/pkg/mod.py::other"


def ratchet():
    return next((p for p in ROOT.iterdir() if p.suffix == ".json"), None)


def forge(mode, path):
    return [sys.executable, str(ROOT / "tools" / "forge.py"), mode, str(path), VICTIM]


def test_target():
    assert target(1) == "one"
    assert target(2) == "many"
    assert target(9) == "many"

"""

ATTACKS: dict[str, str] = {
    # The audit hook refuses both; the static check names the first.
    "direct": """
def test_attack():
    try:
        (ROOT / "quest.json").write_text("{}")
    except PermissionError:
        pass
""",
    "direct_by_glob": """
def test_attack():
    path = ratchet()
    if path is not None:
        try:
            path.write_text("{}")
        except PermissionError:
            pass
""",
    "subprocess": """
def test_attack():
    path = ratchet()
    if path is not None:
        subprocess.run(forge("inplace", path), check=True)
""",
    "replace": """
def test_attack():
    path = ratchet()
    if path is not None:
        subprocess.run(forge("replace", path), check=True)
""",
    "hard_link": """
def test_attack():
    path = ratchet()
    if path is None:
        return
    alias = ROOT / "alias.data"
    if not alias.exists():
        subprocess.run(["ln", str(path), str(alias)], check=True)
    subprocess.run(forge("inplace", alias), check=True)
""",
    "detached_lands_in_run": """
def test_attack():
    path = ratchet()
    if path is None:
        return
    before = path.read_bytes()
    subprocess.Popen(forge("inplace", path), start_new_session=True)
    deadline = time.time() + 20
    while path.read_bytes() == before and time.time() < deadline:
        time.sleep(0.05)
""",
    "delete": """
def test_attack():
    path = ratchet()
    if path is not None:
        subprocess.run(forge("delete", path), check=True)
""",
    "truncate": """
def test_attack():
    path = ratchet()
    if path is not None:
        subprocess.run(forge("truncate", path), check=True)
""",
    "fake_journal": """
def test_attack():
    path = ratchet()
    if path is not None:
        subprocess.run(forge("journal", path), check=True)
""",
}

# Attacks that get past the audit hook: the guard must have seen them.
GUARDED = {
    "direct_by_glob",
    "fake_journal",
    "subprocess",
    "replace",
    "hard_link",
    "detached_lands_in_run",
    "delete",
    "truncate",
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project, data = attack_template(tmp_path_factory, "mod", SOURCE)
    assert TARGET in data["added"], data
    return project


@pytest.fixture
def project(template: Project, tmp_path: Path) -> Callable[[str], tuple[Path, dict[str, Any]]]:
    """A scanned project with the attack written after the scan; the ratchet as scanned."""

    def make(attack: str) -> tuple[Path, dict[str, Any]]:
        root, before = scanned_copy(template, tmp_path / "project")
        (root / "tools").mkdir()
        (root / "tools" / "forge.py").write_text(FORGE)
        (root / "tests" / "test_mod.py").write_text(TEST_HEAD + textwrap.dedent(attack))
        return root, before

    return make


@pytest.mark.parametrize("attack", sorted(ATTACKS))
@pytest.mark.children_measured
def test_a_forged_verdict_for_another_quest_is_undone(
    project: Callable[[str], tuple[Path, dict[str, Any]]], attack: str
) -> None:
    root, before = project(ATTACKS[attack])
    data = submit(root, TARGET)
    assert data["verdict"] in ("REVIEW", "FAIL"), data
    found = checks(data)
    if attack in GUARDED:
        assert "guard.ratchet_written" in found, found
    else:
        assert data["verdict"] == "REVIEW", found
    assert_only_the_judged_entry_changed(root, before, TARGET)
    assert not (root / "quest.json.forged").exists() or attack == "replace"


def test_the_guard_names_the_forged_entry(
    project: Callable[[str], tuple[Path, dict[str, Any]]],
) -> None:
    root, _ = project(ATTACKS["subprocess"])
    data = submit(root, TARGET)
    fact = next(f for f in data["quest"]["facts"] if f["check"] == "guard.ratchet_written")
    assert VICTIM in fact["actual"]
    assert TARGET not in fact["actual"]


def test_a_detached_process_writing_after_the_run_is_ended_with_it(
    project: Callable[[str], tuple[Path, dict[str, Any]]],
) -> None:
    # Past the guard's window: what stops it is the reaping shim (engine/reaper.py).
    attack = """
def test_attack():
    path = ratchet()
    if path is not None:
        subprocess.Popen(forge("late-inplace", path), start_new_session=True)
"""
    root, before = project(attack)
    data = submit(root, TARGET)
    assert "verdict" in data, data  # the target's own test is honest: its verdict stands
    time.sleep(3)
    assert_only_the_judged_entry_changed(root, before, TARGET)


def test_an_honest_submission_passes_with_no_alarm(
    project: Callable[[str], tuple[Path, dict[str, Any]]],
) -> None:
    root, before = project("")
    data = submit(root, TARGET)
    assert data["verdict"] == "PASS", data
    assert checks(data) == []
    assert_only_the_judged_entry_changed(root, before, TARGET)
