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

ATTACKS: dict[str, tuple[str, str]] = {
    # The original's instructions, written out (jumps relative to the body's
    # start): a mutant changes them, the reach mark the probes add on top does not.
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
        "mutation.code_read",
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
}


def judged(data: dict[str, Any]) -> list[str]:
    assert data["verdict"] != "PASS", data["quest"]["facts"]
    return checks(data)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_test_that_inspects_its_own_process_does_not_pass_in_the_sandbox(
    scanned: Path, name: str
) -> None:
    source, stopped_by = ATTACKS[name]
    data = attack(scanned, SIGN, source)
    assert data["sandbox"] != "none", data
    found = judged(data)
    assert not stopped_by or stopped_by in found, found


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
    assert not stopped_by or stopped_by in found, found


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
