"""The judged runs in a kernel sandbox (engine/sandbox.py): attacks that outlive a run, honest tests.

Each attack writes where a later run would read it (the environment, the
user's cache, the project) or reaches for the judge; with the sandbox the
verdict is not PASS and nothing of it is left.  Each engine is forced in
turn through ``PYTEST_QUEST_SANDBOX_ENGINES``; ``sandbox=off`` is judged as
before and says so.
"""

from __future__ import annotations

import shutil
import sysconfig
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.attacks import CALC_SOURCE as SOURCE
from tests.support.attacks import (
    LEVEL,
    SIGN,
    assert_only_the_judged_entry_changed,
    attack_fixtures,
    attack_template,
    checks,
    scanned_copy,
    submit,
)
from tests.support.projects import Project, scanned_template
from tests.support.runner import run_pytest, run_quest

pytestmark = pytest.mark.slow

ENGINES_ENV = "PYTEST_QUEST_SANDBOX_ENGINES"

template, scanned = attack_fixtures(SOURCE)

# A test that covers every line and branch of `sign` and checks nothing: FAIL on its own.
NO_ASSERT = """
    from pkg.calc import sign

    def test_sign():
        sign(5)
        sign(-5)
        sign(0)
"""


def write_test(root: Path, source: str, name: str = "test_attack.py") -> None:
    text = textwrap.dedent(source)
    compile(text, name, "exec")  # an attack that does not even collect proves nothing
    (root / "tests" / name).write_text(text)


def judged(data: dict[str, Any]) -> str:
    """The verdict of a submit whose tests were collected (an attack that is not, proves nothing)."""
    assert "collection.error" not in checks(data), data
    return str(data["verdict"])


def forced(monkeypatch: pytest.MonkeyPatch, engines: str) -> None:
    monkeypatch.setenv(ENGINES_ENV, engines)


@pytest.fixture(params=["bwrap", "landlock"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each engine forced in turn for the judge (the scan recorded sandbox=required)."""
    forced(monkeypatch, str(request.param))
    return str(request.param)


def test_a_scan_where_a_sandbox_starts_records_sandbox_required(scanned: Path) -> None:
    _, data, _ = run_quest(scanned, "--quest", "status")
    assert data["policy"]["sandbox"] == "required"


# --- persistence in the environment ----------------------------------------------

SITE = Path(sysconfig.get_paths()["purelib"])
# A module the environment's ``distutils-precedence.pth`` imports at every start,
# or (where that is missing) a ``.pth`` file of our own.
HACK = SITE / "_distutils_hack" / "__init__.py"
ORACLE = SITE / "_pq_sandbox_oracle.py"
OWN_PTH = SITE / "_pq_sandbox_attack.pth"

# The plugin the planted start-up code loads in every later pytest: after each
# test it compares the live `sign` with its answers saved when it was planted
# (`ANSWERS`, the original's) and fails the test when they differ, so every
# mutant is "killed" by a test that checks nothing.
ORACLE_SOURCE = """
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    try:
        import pkg.calc as live
    except ImportError:
        return
    for x, answer in ANSWERS.items():
        if live.sign(x) != answer:
            outcome.force_exception(AssertionError("the planted oracle"))
            return
"""

PLANT = f"""
    import os

    HACK = {str(HACK)!r}
    ORACLE = {str(ORACLE)!r}
    OWN_PTH = {str(OWN_PTH)!r}
    # Only in the gate's children (their command line has the channel): the judge
    # itself refuses to start with a plugin variable set.
    START = (
        "import os; open('/proc/self/cmdline', 'rb').read().count(b'--quest-channel')"
        " and os.environ.setdefault('PYTEST_PLUGINS', '_pq_sandbox_oracle')\\n"
    )
    LINE = "\\n" + START

    ORACLE_SOURCE = {ORACLE_SOURCE!r}

    def test_plant():
        from pkg.calc import sign

        answers = {{x: sign(x) for x in (-3, -1, 0, 1, 4)}}
        for write in (
            lambda: open(ORACLE, "w").write(ORACLE_SOURCE + f"ANSWERS = {{answers!r}}\\n"),
            lambda: open(HACK, "a").write(LINE) if os.path.exists(HACK) else None,
            lambda: open(OWN_PTH, "w").write(START),
        ):
            try:
                write()
            except OSError:
                pass
        assert False, "this submission fails: its point is the next one"
"""


@pytest.fixture
def environment_restored() -> Iterator[None]:
    """Whatever the attack planted in this environment is taken out again (were it to get in)."""
    hack = HACK.read_bytes() if HACK.exists() else None
    yield
    if hack is not None and HACK.read_bytes() != hack:
        HACK.write_bytes(hack)
    for planted in (ORACLE, OWN_PTH):
        planted.unlink(missing_ok=True)


@pytest.mark.usefixtures("environment_restored")
def test_start_up_code_planted_in_the_environment_does_not_reach_the_next_judgement(
    scanned: Path, engine: str
) -> None:
    # Without a sandbox: the planted oracle ran in the next judgement's every
    # process and the no-assert test of another quest got PASS.
    write_test(scanned, PLANT, "test_level_plant.py")
    first = submit(scanned, LEVEL)
    assert first["verdict"] in ("FAIL", "REVIEW"), first
    assert not ORACLE.exists() and not OWN_PTH.exists()
    (scanned / "tests" / "test_level_plant.py").unlink()
    write_test(scanned, NO_ASSERT)
    second = submit(scanned, SIGN)
    assert judged(second) != "PASS", second["quest"]["facts"]
    assert second["sandbox"] == engine


# --- persistence in the user's folders and the project ---------------------------

CACHE_SNAPSHOT = Path.home() / ".cache" / "pq-sandbox-attack" / "sign.json"


def snapshot_test(path: str, *, failing: bool = False) -> str:
    """A test of `sign` against a snapshot of its own answers at `path`, written by rename.

    `failing`: with a second test that fails (the submission that plants the snapshot).
    """
    fails = "\n        def test_fails():\n            assert False\n" if failing else ""
    return f"""
        import json, os, tempfile
        from pkg.calc import sign

        SNAPSHOT = {path!r}

        def test_sign():
            answers = {{str(x): sign(x) for x in (-3, -1, 0, 1, 4)}}
            if os.path.exists(SNAPSHOT):
                with open(SNAPSHOT) as handle:
                    assert json.load(handle) == answers
                return
            try:
                os.makedirs(os.path.dirname(SNAPSHOT), exist_ok=True)
                fd, temporary = tempfile.mkstemp(dir=os.path.dirname(SNAPSHOT))
                with os.fdopen(fd, "w") as handle:
                    json.dump(answers, handle)
                os.replace(temporary, SNAPSHOT)
            except OSError:
                pass
        {fails}"""


@pytest.fixture
def cache_cleaned() -> Iterator[None]:
    yield
    shutil.rmtree(CACHE_SNAPSHOT.parent, ignore_errors=True)


@pytest.mark.usefixtures("cache_cleaned")
def test_a_snapshot_renamed_into_the_user_cache_does_not_reach_a_later_submit(
    scanned: Path, engine: str
) -> None:
    # Without a sandbox: the snapshot written during one submit (of another quest,
    # whose test then fails) was, in the next, a file made before the submission,
    # and every mutant differed from it: PASS.
    write_test(scanned, snapshot_test(str(CACHE_SNAPSHOT), failing=True))
    submit(scanned, LEVEL)
    assert not CACHE_SNAPSHOT.exists()
    data = submit(scanned, SIGN)
    assert judged(data) != "PASS", data["quest"]["facts"]


def test_a_snapshot_renamed_into_the_project_does_not_reach_a_later_submit(
    scanned: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The throwaway layer over the project (bwrap's overlay; Landlock has none:
    # docs/sandbox.md): what one submit writes in the project is gone for the next.
    forced(monkeypatch, "bwrap")
    snapshot = scanned / "tests" / "snapshots" / "sign.json"
    write_test(scanned, snapshot_test(str(snapshot), failing=True))
    submit(scanned, LEVEL)
    assert not snapshot.exists()
    data = submit(scanned, SIGN)
    assert judged(data) != "PASS", data["quest"]["facts"]


def test_a_snapshot_renamed_into_place_within_one_submit_is_not_pass(
    scanned: Path, engine: str
) -> None:
    # The mutation child's own runs share one sandbox: its first (unmutated) run
    # writes the snapshot by rename, the mutant runs read it. Before renames were
    # logged as created files: PASS.
    snapshot = scanned / "tests" / "snapshots" / "sign.json"
    write_test(scanned, snapshot_test(str(snapshot)))
    data = submit(scanned, SIGN)
    assert judged(data) in ("FAIL", "REVIEW"), data["quest"]["facts"]


# --- the judge out of reach (never pid 1: unsandboxed, it is the machine's init) ------------

# Kills, from a program the test starts (no audit hook sees it), every process
# above the gate's own pytest up to the judge: the reaping shim and the judge.
KILL_THE_JUDGE = """
import os, signal, sys

def parent(pid):
    with open(f"/proc/{pid}/stat", "rb") as handle:
        stat = handle.read()
    return int(stat[stat.rfind(b")") + 2 :].split()[1])

def cmdline(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        return handle.read().replace(b"\\0", b" ").decode(errors="replace")

pid, above = os.getppid(), False
while pid > 1:
    line, up = cmdline(pid), parent(pid)
    if above:
        os.kill(pid, signal.SIGKILL)
        if "--quest" in line and "mutation_child" not in line:
            break
    if "mutation_child" in line:
        above = True
    pid = up
"""

SIGNAL_THE_JUDGE = f"""
    import os, signal, subprocess, sys
    from pkg.calc import sign

    def test_sign():
        subprocess.run([sys.executable, "-c", {KILL_THE_JUDGE!r}])
        try:
            os.kill(os.getppid(), signal.SIGTERM)
        except OSError:
            pass
        try:
            os.killpg(os.getpgid(os.getppid()), signal.SIGTERM)
        except OSError:
            pass
        sign(5)
        sign(-5)
        sign(0)
"""


def test_a_test_that_signals_the_judge_and_its_shim_leaves_the_judge_to_give_a_verdict(
    scanned: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In a pid namespace, the processes above the gate's pytest are bwrap's init,
    # which ignores them: the judge and its shim live on and judge (the test
    # checks nothing: FAIL).  Without one, the judge was killed: no verdict.
    forced(monkeypatch, "bwrap")
    write_test(scanned, SIGNAL_THE_JUDGE)
    data = submit(scanned, SIGN)
    assert judged(data) == "FAIL", data
    assert data["sandbox"] == "bwrap"


READ_THE_RECORDS = """
    import os
    from pathlib import Path
    from pkg.calc import sign

    def test_records():
        records = Path.home() / ".cache" / "pytest-quest"
        seen = [p for p in records.rglob("*")] if records.exists() else []
        assert not seen, seen
        sign(5)
        sign(-5)
        sign(0)
"""


def test_the_gates_own_records_in_the_user_cache_are_unreadable(
    scanned: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The journal and the kept status view: empty inside, so the test sees
    # nothing there and its assertion holds (its checking nothing: FAIL, not an error).
    forced(monkeypatch, "bwrap")
    submit(scanned, LEVEL)  # a journal exists from here on
    write_test(scanned, READ_THE_RECORDS)
    data = submit(scanned, SIGN)
    facts = " ".join(str(fact) for fact in data["quest"]["facts"])
    assert "test_records failed" not in facts, facts


# --- honest tests -----------------------------------------------------------------

HONEST = """
    import os, subprocess, sys
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import Pool
    from pkg.calc import sign

    def test_sign_everywhere(tmp_path):
        (tmp_path / "scratch.txt").write_text("x")
        with open("written_in_the_project.txt", "w") as handle:
            handle.write(sign(1))
        os.makedirs("tests/out", exist_ok=True)
        with open("tests/out/beside.txt", "w") as handle:
            handle.write(sign(-1))
        out = subprocess.run(
            [sys.executable, "-c", "import sys; sys.path[:0] = ['src']; from pkg.calc import sign; print(sign(0))"],
            capture_output=True, text=True,
        ).stdout
        assert out == "zero\\n"
        with Pool(2) as pool:
            assert pool.map(abs, [-1, 2]) == [1, 2]
        with ProcessPoolExecutor(2) as pool:
            assert list(pool.map(abs, [-3])) == [3]
        assert sign(3) == "positive"
        assert sign(-3) == "negative"
        assert sign(0) == "zero"
"""


def test_honest_tests_that_write_files_start_processes_and_pools_pass(
    scanned: Path, engine: str
) -> None:
    write_test(scanned, HONEST)
    data = submit(scanned, SIGN)
    assert data["verdict"] == "PASS", data["quest"]["facts"]
    assert data["sandbox"] == engine
    assert data["quest"]["extra"]["sandbox"] == engine
    _, status, _ = run_quest(scanned, "--quest", "status")
    assert status["judged_in"] == {engine: 1}
    if engine == "bwrap":
        assert not (scanned / "written_in_the_project.txt").exists()  # the layer is thrown away


def test_an_honest_test_that_saves_and_restores_a_signal_handler_passes(
    scanned: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forced(monkeypatch, "bwrap")
    write_test(
        scanned,
        """
        import signal
        from pkg.calc import sign

        def test_sign():
            old = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                assert sign(3) == "positive"
                assert sign(-3) == "negative"
                assert sign(0) == "zero"
            finally:
                signal.signal(signal.SIGINT, old)
        """,
    )
    data = submit(scanned, SIGN)
    assert data["verdict"] == "PASS", data["quest"]["facts"]


# --- the policy -------------------------------------------------------------------


def test_sandbox_required_where_none_starts_refuses_to_judge_with_the_reason(
    scanned: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forced(monkeypatch, "")
    write_test(scanned, HONEST)
    before = (scanned / "quest.json").read_bytes()
    code, data, stderr = run_quest(scanned, "--quest", "submit", "--quest-id", SIGN)
    assert code == 4, (data, stderr)
    assert "sandbox=required" in stderr + str(data), (data, stderr)
    assert "sandbox=off" in stderr + str(data)
    assert (scanned / "quest.json").read_bytes() == before


@pytest.fixture(scope="module")
def unsandboxed_template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The attack project scanned where no sandbox may start: its policy records sandbox=off."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENGINES_ENV, "")
        project, _ = scanned_template(tmp_path_factory, lambda p: p.source("calc", SOURCE))
    return project


def test_sandbox_off_judges_unsandboxed_and_every_verdict_says_so(
    unsandboxed_template: Project, tmp_path: Path
) -> None:
    root, _ = scanned_copy(unsandboxed_template, tmp_path / "project")
    write_test(
        root,
        """
        from pkg.calc import sign

        def test_sign():
            assert sign(3) == "positive"
            assert sign(-3) == "negative"
            assert sign(0) == "zero"
        """,
    )
    code, data, _ = run_quest(root, "--quest", "submit", "--quest-id", SIGN)
    assert data["verdict"] == "PASS", data["quest"]["facts"]
    assert data["sandbox"] == "none"
    _, status, _ = run_quest(root, "--quest", "status")
    assert status["policy"]["sandbox"] == "off"
    by_id = {quest["id"]: quest for quest in status["quests"]}
    assert by_id[SIGN]["extra"]["sandbox"] == "none"
    assert "sandbox" not in by_id[LEVEL].get("extra", {})  # never judged
    assert status["judged_in"] == {"none": 1}
    result = run_pytest(root, "--quest", "status")
    assert "quests by where their last verdict was judged: 1 unsandboxed" in result.stdout.str()


def test_an_audit_where_the_required_sandbox_cannot_start_refuses_too(
    scanned: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The audit's mutation children are judged runs like a submit's.
    forced(monkeypatch, "")
    code, data, stderr = run_quest(scanned, "--quest", "audit")
    assert code == 4, (data, stderr)
    assert "no sandbox starts here" in stderr + str(data)


# --- the ratchet file, out of reach inside bwrap ---------------------------------------


@pytest.fixture(scope="module")
def ratchet_template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    from tests.acceptance import test_trust_ratchet as forging

    project, data = attack_template(tmp_path_factory, "mod", forging.SOURCE)
    assert forging.TARGET in data["added"], data
    return project


@pytest.mark.parametrize("attack", ["direct", "replace", "hard_link", "fake_journal", "delete"])
def test_a_judged_test_cannot_write_the_ratchet_file_in_bwrap(
    ratchet_template: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: str
) -> None:
    # No audit hook guards the file inside (the engine keeps it read-only, its
    # journal hidden): every forgery of another quest's verdict finds nothing to write.
    from tests.acceptance import test_trust_ratchet as forging

    forced(monkeypatch, "bwrap")
    root, before = scanned_copy(ratchet_template, tmp_path / "project")
    (root / "tools").mkdir()
    (root / "tools" / "forge.py").write_text(forging.FORGE)
    test = forging.TEST_HEAD + textwrap.dedent(forging.ATTACKS[attack])
    (root / "tests" / "test_mod.py").write_text(test)
    data = submit(root, forging.TARGET)
    assert data["sandbox"] == "bwrap"
    assert "guard.ratchet_written" not in checks(data)  # the file was never written
    assert_only_the_judged_entry_changed(root, before, forging.TARGET)
    assert not (root / "alias.data").exists()  # the link, if made, was in the throwaway layer
