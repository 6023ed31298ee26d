"""Hostile attacks written with the source in hand (session 25).

Each attack got PASS (or broke a principle) on the code before its fix, or
is an attack no other suite runs; each must end FAIL or REVIEW, with no other
quest's entry in quest.json changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.attacks import (
    assert_only_the_judged_entry_changed,
    attack,
    attack_fixtures,
    checks,
    submit,
)
from tests.support.quests import ratchet_view
from tests.support.runner import FAST, child_environ, run_quest

# Written against the judge's own detection; the kernel sandbox's answers to the same
# kinds of attack: tests/acceptance/test_sandbox.py.
pytestmark = [pytest.mark.slow, pytest.mark.unsandboxed]

SOURCE = """\
def level(x):
    if x > 10:
        return "high"
    return "low"


def sign(x):
    if x > 0:
        return "positive"
    if x < 0:
        return "negative"
    return "zero"
"""

LEVEL = "src/pkg/calc.py::level"
SIGN = "src/pkg/calc.py::sign"


template, scanned = attack_fixtures(SOURCE)


# Ways to make a copy of the function under judgement during the test: none is
# a live function when the swap puts a mutant in place, so each stays the original.
FRESH_COPIES = {
    "spec_from_file_location": """
        import importlib.util

        def fresh():
            spec = importlib.util.spec_from_file_location("oracle", pkg.calc.__file__)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.sign
    """,
    "runpy": """
        import runpy

        def fresh():
            return runpy.run_path(pkg.calc.__file__)["sign"]
    """,
    "compiled_under_another_name": """
        def fresh():
            with open(pkg.calc.__file__) as handle:
                text = handle.read().replace("def sign", "def oracle")
            space = {}
            exec(compile(text, "<oracle>", "exec"), space)
            return space["oracle"]
    """,
    "reload": """
        import importlib

        def fresh():
            return importlib.reload(pkg.calc).sign
    """,
}


@pytest.mark.parametrize("how", sorted(FRESH_COPIES))
@pytest.mark.children_measured
def test_an_oracle_copied_from_the_source_file_during_the_test_is_review(
    scanned: Path, how: str
) -> None:
    # The function compared with a copy of itself made during the test: the
    # swap changes the live functions only, so every mutant "differs" from
    # the copy, and the probes (the original) agree with it. PASS before.
    data = attack(
        scanned,
        SIGN,
        """
        import pkg.calc
        from pkg.calc import sign
        """
        + FRESH_COPIES[how]
        + """
        def test_sign_agrees_with_itself():
            oracle = fresh()
            for x in (-3, 0, 4):
                assert sign(x) == oracle(x)
        """,
    )
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert "mutation.own_copy" in checks(data), checks(data)
    fact = next(f for f in data["quest"]["facts"] if f["check"] == "mutation.own_copy")
    assert fact["field"] == "tests/test_attack.py::test_sign_agrees_with_itself"


# Expected values taken from the function itself before the mutants are put in
# place: at import, at collection (parametrize), or on a test's first run.
SAVED_ORACLES = {
    "at_import": """
        from pkg.calc import sign

        EXPECTED = {x: sign(x) for x in (-3, 0, 4)}

        def test_sign():
            for x, want in EXPECTED.items():
                assert sign(x) == want
    """,
    "in_parametrize": """
        import pytest
        from pkg.calc import sign

        @pytest.mark.parametrize("x, want", [(x, sign(x)) for x in (-3, 0, 4)])
        def test_sign(x, want):
            assert sign(x) == want
    """,
    "on_the_first_run": """
        from pkg.calc import sign

        SEEN = {}

        def check(x, value):
            assert SEEN.setdefault(x, value) == value

        def test_sign():
            for x in (-3, 0, 4):
                check(x, sign(x))
    """,
}


@pytest.mark.parametrize("how", sorted(SAVED_ORACLES))
@pytest.mark.children_measured
def test_an_oracle_saved_from_the_original_is_review(scanned: Path, how: str) -> None:
    # Expected values computed by the function before the mutants are put in
    # place are the original's: every mutant "differs" from them and the
    # probes agree with them. PASS before.
    data = attack(scanned, SIGN, SAVED_ORACLES[how])
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert "mutation.kill_unconfirmed" in checks(data), checks(data)


def bridged_venv(venv: Path) -> Path:
    """A new virtualenv that reaches this run's packages (a ``.pth`` adding their site
    folder): its own site-packages is private, so what a test plants there reaches no
    other test of the run (xdist workers share this run's venv). Its interpreter."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        check=True, capture_output=True, env=child_environ(),
    )  # fmt: skip
    python = venv / "bin" / "python"
    ours = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    bridge = "".join(f"import site; site.addsitedir({path!r})\n" for path in ours)
    (Path(purelib_of(python)) / "_running_venv.pth").write_text(bridge)
    return python


def purelib_of(python: Path) -> str:
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return subprocess.run(
        [str(python), "-c", ask], check=True, capture_output=True, text=True
    ).stdout.strip()


def submit_with(python: Path, root: Path, quest_id: str) -> dict[str, Any]:
    """``--quest submit`` in `root` run by `python` (as tests/support/runner.py runs pytest)."""
    done = subprocess.run(
        [str(python), "-m", "pytest", *FAST, "--quest", "submit", "--quest-id", quest_id,
         "--quest-format", "json"],
        cwd=root, env=child_environ(), capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    data: dict[str, Any] = json.loads(done.stdout)
    assert "verdict" in data, (data, done.stderr)
    return data


def test_a_pth_file_planted_by_a_test_is_undone_and_never_runs_in_a_judge(
    scanned: Path, tmp_path: Path
) -> None:
    # Python runs the .pth files of its site folders in every process it
    # starts: one written by a judged test would run in the next judge, before
    # pytest-quest (code under judgement in the process that decides).
    python = bridged_venv(tmp_path / "venv")
    purelib = Path(purelib_of(python))
    name = f"zz_quest_attack_{os.getpid()}_{tmp_path.name}.pth"
    mark = tmp_path / "judges.txt"
    line = (
        f"import os, sys; os.path.isdir({str(tmp_path)!r}) and '--quest' in sys.argv and "
        f"open({str(mark)!r}, 'a').write(' '.join(sys.argv) + chr(10))"
    )
    (scanned / "tests" / "test_attack.py").write_text(
        textwrap.dedent(
            f"""
            import sysconfig
            from pathlib import Path
            from pkg.calc import sign

            def test_sign():
                assert sign(3) == "positive"
                assert sign(-3) == "negative"
                assert sign(0) == "zero"
                pth = Path(sysconfig.get_paths()["purelib"]) / {name!r}
                pth.write_text({line!r} + "\\n")
            """
        )
    )
    before = ratchet_view((scanned / "quest.json").read_bytes())
    data = submit_with(python, scanned, SIGN)
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert checks(data)[0] == "guard.startup_files", checks(data)
    assert_only_the_judged_entry_changed(scanned, before, SIGN)
    assert not (purelib / name).exists()
    (scanned / "tests" / "test_attack.py").write_text("def test_nothing():\n    pass\n")
    submit_with(python, scanned, LEVEL)
    assert not mark.exists(), mark.read_text()


@pytest.mark.parametrize("how", ["moved", "renamed", "removed_then_back"])
def test_a_function_moved_or_renamed_and_rescanned_keeps_its_quest(
    scanned: Path, how: str
) -> None:
    # The gate never judged it: a move to another file (or a rename) and a
    # rescan issued it as a new function, PASS at once as a baseline when
    # assertion-free tests covered it, its quest (tries, REVIEW, DONE)
    # dropped into `removed`. PASS before.
    source = scanned / "src" / "pkg" / "calc.py"
    text = source.read_text()
    start = text.index("def sign")
    name = "sign" if how != "renamed" else "signum"
    module = "moved" if how != "renamed" else "calc"
    if how == "removed_then_back":
        source.write_text(text[:start])
        assert run_quest(scanned, "--quest", "scan")[0] == 0
    if how == "renamed":
        source.write_text(text.replace("def sign", "def signum"))
    else:
        source.write_text(text[:start])
        (scanned / "src" / "pkg" / "moved.py").write_text(text[start:])
    (scanned / "tests" / "test_attack.py").write_text(
        f"from pkg.{module} import {name}\n\n\ndef test_runs():\n"
        f"    {name}(3)\n    {name}(-3)\n    {name}(0)\n"
    )
    code, data, stderr = run_quest(scanned, "--quest", "scan")
    assert code == 0, stderr
    new = f"src/pkg/{module}.py::{name}"
    assert data["added_pass"] == [], data
    assert data["added"] == [new], data
    ratchet = ratchet_view((scanned / "quest.json").read_bytes())
    assert ratchet["quests"][new].get("state", "TODO") == "TODO"
    assert ratchet["removed"][-1]["id"] == SIGN
    if how != "removed_then_back":
        assert ratchet["removed"][-1]["note"] == f"moved or renamed to {new}"
    # The gate then judges it like any quest: the assertion-free test FAILs.
    assert submit(scanned, new)["verdict"] == "FAIL"


def test_a_golden_file_written_by_the_judged_run_itself_is_review(scanned: Path) -> None:
    # The measuring run writes the original's answers; every later run (the
    # mutants, a fresh process) compares with them. PASS before.
    data = attack(
        scanned,
        SIGN,
        """
        import json, pathlib
        from pkg.calc import sign

        GOLDEN = pathlib.Path(__file__).parent / "golden_sign.json"

        def test_sign():
            got = {str(x): sign(x) for x in (-3, 0, 4)}
            if not GOLDEN.exists():
                GOLDEN.write_text(json.dumps(got))
            assert got == json.loads(GOLDEN.read_text())
        """,
    )
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert "mutation.stale_read" in checks(data), checks(data)


def test_a_test_that_tells_the_fresh_run_apart_by_its_parent_is_review(scanned: Path) -> None:
    # An import-time oracle that fails on purpose where its parent is not the
    # reaping shim (the fresh run confirming the kills): PASS before, with no sign.
    data = attack(
        scanned,
        SIGN,
        """
        from pkg.calc import sign

        EXPECTED = {x: sign(x) for x in (-3, 0, 4)}

        def parent_line():
            with open("/proc/self/stat") as handle:
                stat = handle.read()
            parent = stat[stat.rfind(")") + 2:].split()[1]
            with open(f"/proc/{parent}/cmdline", "rb") as handle:
                return handle.read()

        def test_sign():
            assert b"reaper" in parent_line()
            for x, want in EXPECTED.items():
                assert sign(x) == want
        """,
    )
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert "tamper.process" in checks(data), checks(data)


def test_a_test_that_tells_the_fresh_run_apart_by_its_environment_is_review(
    scanned: Path,
) -> None:
    # The fresh run was started with the mutation child's environment as the
    # tests had left it: a variable set at import told it apart. PASS before.
    data = attack(
        scanned,
        SIGN,
        """
        import os
        from pkg.calc import sign

        INHERITED = "SIGN_ORACLE_SEEN" in os.environ
        os.environ["SIGN_ORACLE_SEEN"] = "1"
        EXPECTED = {x: sign(x) for x in (-3, 0, 4)}

        def test_sign():
            assert not INHERITED
            for x, want in EXPECTED.items():
                assert sign(x) == want
        """,
    )
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert "mutation.kill_unconfirmed" in checks(data), checks(data)


def test_a_test_that_tells_the_fresh_run_apart_by_its_arguments_is_review(
    scanned: Path,
) -> None:
    # The fresh run's command line named only the killing tests: a covering
    # test that kills nothing was missing from it. PASS before.
    data = attack(
        scanned,
        SIGN,
        """
        import sys
        from pkg.calc import sign

        EXPECTED = {x: sign(x) for x in (-3, 0, 4)}

        def test_sign():
            named = [a for a in sys.argv if a.startswith("tests/") and "::" in a]
            assert not named or any(a.endswith("::test_runs") for a in named)
            for x, want in EXPECTED.items():
                assert sign(x) == want

        def test_runs():
            sign(1)
        """,
    )
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert "mutation.kill_unconfirmed" in checks(data), checks(data)
