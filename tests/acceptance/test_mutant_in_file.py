"""Under bwrap the mutant is written into the source file itself (engine/ondisk.py).

The project is a throwaway layer in the judged run: each mutant's run (and
the probe's) has the mutant in the function's file, so every process and
every way of loading the module runs it.  An oracle that compares the
function with itself in an isolated interpreter, or with a copy loaded from
its file during the test, checks nothing and is not PASS; honest tests that
reload the module or run it with ``python -I`` PASS.  The same attacks
judged without the sandbox: tests/acceptance/test_oracle_attacks.py.
"""

from __future__ import annotations

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


@pytest.mark.parametrize("how", sorted(FRESH_COPIES))
def test_an_oracle_copied_from_the_source_file_during_the_test_fails(
    scanned: Path, how: str
) -> None:
    # Without the sandbox such a copy is the original (REVIEW, mutation.own_copy);
    # here it is the mutant: the function agrees with it, and the mutants survive.
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
        allowed=("FAIL",),
    )
    assert "mutation.own_copy" not in checks(data), _facts(data)


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
