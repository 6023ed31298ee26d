"""Tests that look into their own process instead of checking results: the judge runs them.

Each covers every line and branch of `sign` and asserts nothing about what it
returns; instead it reads the code object, the tracer, a counter it keeps in
`builtins`, or writes coverage.py's data itself.  No pattern in a test's text
is held against it: what each does in the judged runs is measured, and none
may PASS.  Each runs in the sandbox (the default where one starts) and with
``sandbox=off``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.attacks import CALC_SOURCE, SIGN, attack, attack_fixtures, checks
from tests.support.projects import Project, scanned_template
from tests.support.runner import run_quest

pytestmark = pytest.mark.slow

template, scanned = attack_fixtures(CALC_SOURCE)

# Kills every mutant by comparing with its own first run, and fails in a run it
# takes for a fresh run (`fresh_run`, defined by each attack below).
SAVED_ORACLE = """
import builtins
import os

from pkg.calc import sign


def test_sign():
    seen = (sign(5), sign(-5), sign(0), sign(1), sign(-1))
    saved = getattr(builtins, "pq_saved", None)
    if saved is None:
        builtins.pq_saved = seen
        assert not fresh_run()
    else:
        assert seen == saved
"""

ATTACKS: dict[str, tuple[str, str]] = {
    # The original's instructions, written out (jumps relative to the body's
    # start): a mutant changes them, the reach mark the probes add on top does not.
    # Its kills are no kills (it read the code in those runs): survivors, witnessed.
    "code_object": (
        """
import dis
from pkg.calc import sign

ORIGINAL = [
    ("LOAD_FAST", "x"), ("LOAD_CONST", 0), ("COMPARE_OP", ">"),
    ("POP_JUMP_FORWARD_IF_FALSE", 16), ("LOAD_CONST", "positive"), ("RETURN_VALUE", None),
    ("LOAD_FAST", "x"), ("LOAD_CONST", 0), ("COMPARE_OP", "<"),
    ("POP_JUMP_FORWARD_IF_FALSE", 32), ("LOAD_CONST", "negative"), ("RETURN_VALUE", None),
    ("LOAD_CONST", "zero"), ("RETURN_VALUE", None),
]


def shape():
    found = list(dis.get_instructions(sign))
    start = next(i for i, ins in enumerate(found) if ins.opname == "LOAD_FAST")
    base = found[start].offset
    jumps = set(dis.hasjabs) | set(dis.hasjrel)
    return [
        (ins.opname, ins.argval - base if ins.opcode in jumps else ins.argval)
        for ins in found[start:]
    ]


def test_sign():
    sign(5)
    sign(-5)
    sign(0)
    assert shape() == ORIGINAL
""",
        "mutation.",
    ),
    # The measuring run has coverage.py's tracer, the mutation child none.
    "tracer": (
        """
import sys
from pkg.calc import sign


def test_sign():
    sign(5)
    sign(-5)
    sign(0)
    assert sys.gettrace() is not None
""",
        "stability.flaky",
    ),
    # A counter kept in builtins: from the third run of the test in one process,
    # something is being checked.
    "builtins_counter": (
        """
import builtins
from pkg.calc import sign


def test_sign():
    builtins.pq_runs = getattr(builtins, "pq_runs", 0) + 1
    sign(5)
    sign(-5)
    sign(0)
    assert builtins.pq_runs <= 2
""",
        "mutation.detects_run",
    ),
    # coverage.py's data written by the test: every line of `sign` "run" by a
    # test that calls it once.
    "coverage_data": (
        """
import coverage
from pkg import calc


def test_sign():
    calc.sign(5)
    current = coverage.Coverage.current()
    if current is not None:
        first = calc.sign.__code__.co_firstlineno
        current.get_data().add_lines({calc.__file__: list(range(first, first + 7))})
""",
        "",
    ),
    # A saved oracle (its first run's results, compared in its later runs) kills
    # every mutant in the mutation child; the fresh run that confirms the kills is
    # the first run of its process, as the measuring run is.  Told apart by its
    # open descriptors (its output went to no log file) it fails there on purpose.
    "fresh_run_by_its_descriptors": (
        SAVED_ORACLE
        + """

def fresh_run():
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}").endswith("output.txt"):
                return False
        except OSError:
            pass
    return True
""",
        "mutation.kill_unconfirmed",
    ),
    # The same, told apart by the number of its channel's descriptor (the judge
    # holds more descriptors open than the mutation child that starts a fresh run):
    # the same number in every run, it fails the measuring run too.
    "fresh_run_by_its_channel_number": (
        SAVED_ORACLE
        + """

def fresh_run():
    arguments = open("/proc/self/cmdline", "rb").read().split(b"\\0")
    channel = arguments[arguments.index(b"--quest-channel") + 1]
    return int(channel.split(b",")[0]) < 12
""",
        "test.failed",
    ),
}


def judged(data: dict[str, Any]) -> list[str]:
    assert data["verdict"] != "PASS", data["quest"]["facts"]
    return checks(data)


def stopped(found: list[str], stopped_by: str) -> bool:
    """Whether a check of `found` is `stopped_by`, or in its family (``mutation.``)."""
    return not stopped_by or any(
        check == stopped_by or (stopped_by.endswith(".") and check.startswith(stopped_by))
        for check in found
    )


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_test_that_inspects_its_own_process_does_not_pass_in_the_sandbox(
    scanned: Path, name: str
) -> None:
    source, stopped_by = ATTACKS[name]
    data = attack(scanned, SIGN, source)
    assert data["sandbox"] != "none", data
    found = judged(data)
    assert stopped(found, stopped_by), found


@pytest.fixture(scope="module")
def unsandboxed_template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_QUEST_SANDBOX_ENGINES", "")
        project, _ = scanned_template(tmp_path_factory, lambda p: p.source("calc", CALC_SOURCE))
    return project


@pytest.mark.unsandboxed
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_test_that_inspects_its_own_process_does_not_pass_unsandboxed(
    unsandboxed_template: Project, tmp_path: Path, name: str
) -> None:
    root = Project(tmp_path / "project").fill_from(unsandboxed_template).path
    source, stopped_by = ATTACKS[name]
    data = attack(root, SIGN, source)
    assert data["sandbox"] == "none", data
    found = judged(data)
    assert stopped(found, stopped_by), found


# Options added to the configuration after the scan, with a test that checks
# nothing: each changes how the judged runs go, and the runs are judged.
OPTIONS = {
    "judge_plugins_off": "-p no:quest -p no:cov",
    "stop_at_first_failure": "-x --maxfail=1",
    "collect_nothing_else": "-o python_functions=check_*",
}


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_pytest_options_added_after_the_scan_do_not_make_a_pass(scanned: Path, name: str) -> None:
    (scanned / "tests" / "test_attack.py").write_text(
        "from pkg.calc import sign\n\n\ndef test_sign():\n    sign(5)\n    sign(-5)\n    sign(0)\n"
    )
    pyproject = scanned / "pyproject.toml"
    text = pyproject.read_text()
    assert 'testpaths = ["tests"]\n' in text
    options = f'testpaths = ["tests"]\naddopts = "{OPTIONS[name]}"\n'
    pyproject.write_text(text.replace('testpaths = ["tests"]\n', options))
    _, data, stderr = run_quest(scanned, "--quest", "submit", "--quest-id", SIGN)
    assert data.get("verdict") != "PASS", (data, stderr)


# An honest test that reads the function's signature (as ``st.builds`` does) and
# checks what it returns: its kills count.
SIGNATURE_AND_RESULTS = """
import inspect
from pkg.calc import sign


def test_sign():
    assert list(inspect.signature(sign).parameters) == ["x"]
    assert sign(5) == "positive"
    assert sign(-5) == "negative"
    assert sign(0) == "zero"
    assert sign(1) == "positive"
    assert sign(-1) == "negative"
"""


def test_a_test_that_reads_the_signature_and_checks_results_passes(scanned: Path) -> None:
    data = attack(scanned, SIGN, SIGNATURE_AND_RESULTS, allowed=("PASS",))
    assert data["verdict"] == "PASS", data


def test_a_code_comparing_oracle_fails_with_witnessed_survivors(scanned: Path) -> None:
    data = attack(scanned, SIGN, ATTACKS["code_object"][0], allowed=("FAIL",))
    assert any(check.startswith("mutation.") for check in checks(data)), checks(data)


# One test reads the code (its kills are no kills), another checks results: they kill.
CODE_READ_BESIDE_RESULTS = """
import dis
from pkg.calc import sign


def test_sign_compiles_to_returns():
    assert any(ins.opname == "RETURN_VALUE" for ins in dis.get_instructions(sign))


def test_sign():
    assert sign(5) == "positive"
    assert sign(-5) == "negative"
    assert sign(0) == "zero"
    assert sign(1) == "positive"
    assert sign(-1) == "negative"
"""


def test_a_test_reading_the_code_beside_one_checking_results_passes(scanned: Path) -> None:
    data = attack(scanned, SIGN, CODE_READ_BESIDE_RESULTS, allowed=("PASS",))
    assert data["verdict"] == "PASS", data
