"""Under bwrap the mutant is in the module's bytecode file (engine/ondisk.py), its text untouched.

The project is a throwaway layer in the judged run: each mutant's run (and
the probe's) has the mutant in the function's ``__pycache__`` file, so every
process and every way of loading the module through the import system runs
it, while the file's text stays the original in every run.  An oracle that
compares the function with itself in an isolated interpreter or with a copy
loaded during the test, or one that checks the file's text, checks nothing
and is not PASS; honest tests that reload the module or run it with
``python -I`` PASS.  The same attacks judged without the sandbox:
tests/acceptance/test_oracle_attacks.py.
"""

from __future__ import annotations

import ast
import hashlib
import textwrap
from pathlib import Path

import pytest

from tests.support.attacks import (
    CALC_SOURCE,
    FRESH_COPIES,
    SIGN,
    attack,
    attack_fixtures,
    attack_template,
    checks,
    scanned_copy,
)
from tests.support.projects import Project

pytestmark = [pytest.mark.slow]

template, scanned = attack_fixtures(CALC_SOURCE)


@pytest.fixture(autouse=True)
def _bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_QUEST_SANDBOX_ENGINES", "bwrap")


def _facts(data: dict[str, object]) -> object:
    return data["quest"]["facts"]  # type: ignore[index]


ISOLATED_ORACLE = """
    import json, os, subprocess, sys
    import pkg.calc
    from pkg.calc import sign

    def other(xs):
        src = os.path.dirname(os.path.dirname(pkg.calc.__file__))
        code = (
            "import sys; sys.path.insert(0, %r); import json; from pkg.calc import sign; "
            "print(json.dumps([sign(x) for x in %r]))" % (src, xs)
        )
        out = subprocess.run(
            [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True, env={}
        )
        return json.loads(out.stdout)

    def test_sign_agrees_with_a_fresh_interpreter():
        xs = [-3, 0, 4]
        assert [sign(x) for x in xs] == other(xs)
"""


def test_an_oracle_from_an_isolated_interpreter_is_not_pass(scanned: Path) -> None:
    # `python -I -S` with no environment skips coverage.py's start-up hook: only
    # the file itself can give that interpreter the mutant.
    data = attack(scanned, SIGN, ISOLATED_ORACLE, allowed=("FAIL",))
    assert "mutation.body.return_none" in checks(data), _facts(data)
    assert data["sandbox"] == "bwrap"


# Loaded through the import system: the run's mutant, which agrees with the function.
LOADED = ("reload", "spec_from_file_location")


@pytest.mark.parametrize("how", sorted(FRESH_COPIES))
def test_an_oracle_copied_from_the_module_during_the_test_is_not_pass(
    scanned: Path, how: str
) -> None:
    # Without the sandbox such a copy is the original (REVIEW, mutation.own_copy).
    # Here a copy the import system loads is the mutant: the function agrees with it,
    # and the mutants survive; one compiled from the file's text is the original's.
    expected = "FAIL" if how in LOADED else "REVIEW"
    data = attack(
        scanned,
        SIGN,
        "import pkg.calc\nfrom pkg.calc import sign\n"
        + textwrap.dedent(FRESH_COPIES[how])
        + """
def test_sign_agrees_with_itself():
    oracle = fresh()
    for x in (-3, 0, 4):
        assert sign(x) == oracle(x)
""",
        allowed=(expected,),
    )
    assert ("mutation.own_copy" in checks(data)) == (expected == "REVIEW"), _facts(data)


def _function_digest() -> str:
    tree = ast.parse(CALC_SOURCE)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "sign"]
    body = ast.Module(body=found[0].body, type_ignores=[])
    return hashlib.sha256(ast.dump(body).encode()).hexdigest()


# Another interpreter's check of the function's code in the bytecode file against the text
# compiled: an instruction of the text missing from the file's code, or a call of the gate's
# mark for a changed value, is a mutant (its reach mark, in the probe too, only adds some).
_DETECTOR = """\
import collections, dis, marshal, sys

def find(code):
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            if const.co_name == "sign":
                return const
            found = find(const)
            if found is not None:
                return found

def bag(code):
    return collections.Counter(
        (i.opname, repr(i.argval)) for i in dis.get_instructions(code)
        if "JUMP" not in i.opname and i.opname not in ("NOP", "RESUME", "CACHE")
    )

try:
    data = open(sys.argv[1], "rb").read()
except OSError:
    sys.exit(0)
on_disk = find(marshal.loads(data[16:]))
text = find(compile(open(sys.argv[2]).read(), sys.argv[2], "exec"))
changed = [name for name in on_disk.co_names if name.startswith("pytest_quest_changed")]
sys.exit(1 if bag(text) - bag(on_disk) or changed else 0)
"""


# Tests that check the file's text (or its bytecode file) against the original's, and no result.
TEXT_ORACLES = {
    # The function's statements in the file, less any the gate could add (its marks).
    "function_in_the_text": f"""
        import ast, hashlib

        def body():
            tree = ast.parse(open(pkg.calc.__file__).read())
            found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "sign"]
            kept = [
                s
                for s in found[0].body
                if not (isinstance(s, ast.Expr) and "pytest_quest" in ast.dump(s))
            ]
            return hashlib.sha256(ast.dump(ast.Module(body=kept, type_ignores=[])).encode()).hexdigest()

        REF = {_function_digest()!r}

        def same():
            return body() == REF
    """,
    "digest_of_the_text": """
        import hashlib
        REF = hashlib.sha256(open(pkg.calc.__file__, "rb").read()).hexdigest()

        def same():
            return hashlib.sha256(open(pkg.calc.__file__, "rb").read()).hexdigest() == REF
    """,
    "getsource": f"""
        import inspect

        def same():
            return inspect.getsource(sign) in {CALC_SOURCE!r}
    """,
    "text_read_by_another_process": """
        import hashlib, subprocess
        REF = hashlib.sha256(open(pkg.calc.__file__, "rb").read()).hexdigest()

        def same():
            out = subprocess.run(["cat", pkg.calc.__file__], capture_output=True, check=True).stdout
            return hashlib.sha256(out).hexdigest() == REF
    """,
    "bytecode_file": """
        import importlib.util

        def read():
            try:
                with open(importlib.util.cache_from_source(pkg.calc.__file__), "rb") as handle:
                    return handle.read()
            except OSError:
                return None

        REF = read()

        def same():
            return read() == REF
    """,
}


@pytest.mark.parametrize("how", sorted(TEXT_ORACLES))
def test_a_test_that_checks_the_files_text_and_no_result_is_not_pass(
    scanned: Path, how: str
) -> None:
    data = attack(
        scanned,
        SIGN,
        "import pkg.calc\nfrom pkg.calc import sign\n"
        + textwrap.dedent(TEXT_ORACLES[how])
        + """
def test_sign():
    sign(3); sign(-3); sign(0)
    assert same()
""",
        allowed=("FAIL", "REVIEW"),
    )
    assert data["sandbox"] == "bwrap"


def test_a_test_failing_on_what_another_process_reads_of_the_bytecode_file_is_review(
    scanned: Path,
) -> None:
    # It fails with every mutant and passes with the original (the probe's mark only adds
    # instructions): a kill run again with the function unchanged in the test's process
    # while its file holds the mutant fails too, so the kill is not the function's doing.
    data = attack(
        scanned,
        SIGN,
        f"""
import importlib.util, subprocess, sys
import pkg.calc
from pkg.calc import sign

DETECTOR = {_DETECTOR!r}

def test_sign():
    sign(3); sign(-3); sign(0)
    cached = importlib.util.cache_from_source(pkg.calc.__file__)
    command = [sys.executable, "-I", "-S", "-c", DETECTOR, cached, pkg.calc.__file__]
    assert subprocess.run(command, env={{}}).returncode == 0
""",
        allowed=("REVIEW",),
    )
    assert "mutation.kill_outside" in checks(data), _facts(data)
    assert data["sandbox"] == "bwrap"


# Copies of the original the file's mutant never reaches: the own-copy watch still names them.
ORIGINAL_COPIES = {
    # The file read at import (the original then); the fresh run would read the mutant.
    "read_at_import": """
        with open(pkg.calc.__file__) as handle:
            TEXT = handle.read()
    """,
    # The function's source written into the test: the original in every process.
    "written_in_the_test": f"""
        TEXT = {CALC_SOURCE!r}
    """,
}


@pytest.mark.parametrize("how", sorted(ORIGINAL_COPIES))
def test_an_oracle_compiled_from_the_original_source_during_the_test_is_review(
    scanned: Path, how: str
) -> None:
    data = attack(
        scanned,
        SIGN,
        "import pkg.calc\nfrom pkg.calc import sign\n"
        + textwrap.dedent(ORIGINAL_COPIES[how])
        + """
def test_sign_agrees_with_itself():
    space = {}
    exec(compile(TEXT, "<oracle>", "exec"), space)
    for x in (-3, 0, 4):
        assert sign(x) == space["sign"](x)
""",
        allowed=("REVIEW",),
    )
    assert "mutation.own_copy" in checks(data), _facts(data)


def test_an_honest_test_of_the_code_run_with_python_minus_i_passes(scanned: Path) -> None:
    # No start-up hook runs there (``-I -S``, no environment), and nothing measures it
    # (the calls in the test's own process cover the function): the mutant comes from the file.
    data = attack(
        scanned,
        SIGN,
        """
        import os, subprocess, sys
        import pkg.calc
        from pkg.calc import sign

        def run(x):
            src = os.path.dirname(os.path.dirname(pkg.calc.__file__))
            code = "import sys; sys.path.insert(0, %r); from pkg.calc import sign; print(sign(%r))"
            out = subprocess.run(
                [sys.executable, "-I", "-S", "-c", code % (src, x)],
                capture_output=True, text=True, check=True, env={},
            )
            return out.stdout.strip()

        def test_sign_in_an_isolated_interpreter():
            for x in (5, -5, 0):
                sign(x)  # measured here; checked where no start-up hook runs
            assert run(5) == "positive"
            assert run(-5) == "negative"
            assert run(0) == "zero"
        """,
        allowed=("PASS",),
    )
    assert data["quest"]["extra"]["sandbox"] == "bwrap"


# A module with an import-time fallback, tested by reloading it with the import blocked.
FALLBACK_SOURCE = """\
try:
    import threading
except ImportError:  # an interpreter built without threads
    threading = None


def lock_kind():
    if threading is None:
        return "none"
    return "real"
"""


@pytest.fixture(scope="module")
def fallback_template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project, _ = attack_template(tmp_path_factory, "calc", FALLBACK_SOURCE)
    return project


def test_an_honest_test_that_reloads_the_module_passes(
    fallback_template: Project, tmp_path: Path
) -> None:
    # The reload runs the mutant from the file: nothing to put aside for a person.
    root, _ = scanned_copy(fallback_template, tmp_path / "project")
    data = attack(
        root,
        "src/pkg/calc.py::lock_kind",
        """
        import importlib, sys
        import pkg.calc

        def test_lock_kind_with_threads():
            assert pkg.calc.lock_kind() == "real"

        def test_lock_kind_without_threads(monkeypatch):
            monkeypatch.setitem(sys.modules, "threading", None)
            try:
                importlib.reload(pkg.calc)
                assert pkg.calc.lock_kind() == "none"
            finally:
                monkeypatch.undo()
                importlib.reload(pkg.calc)
        """,
        allowed=("PASS",),
    )
    assert data["quest"]["extra"]["sandbox"] == "bwrap"


# A process the test starts reads the run record its start-up hook reads, and fails on a mutant's.
RECORD_READER = """
import json, os
rc = os.environ.get("COVERAGE_PROCESS_START", "")
mode = ""
if rc:
    for line in open(rc).read().splitlines():
        if line.startswith("record = "):
            body = open(line.split(" = ", 1)[1]).read().split(" ", 1)[1]
            mode = json.loads(body).get("mode", "")
print(mode)
"""


def test_a_process_that_reads_the_run_record_tells_no_mutant_apart(scanned: Path) -> None:
    data = attack(
        scanned,
        SIGN,
        f"""
import subprocess, sys
from pkg.calc import sign

def test_sign():
    sign(3); sign(-3); sign(0)
    out = subprocess.run([sys.executable, "-c", {RECORD_READER!r}], capture_output=True, text=True)
    assert out.stdout.strip() != "mutant"
""",
        allowed=("FAIL",),
    )
    assert "mutation.return.changed" in checks(data), _facts(data)
