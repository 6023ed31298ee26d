"""Oracles the function gives about itself: each makes every mutant "differ" while checking nothing.

A copy of the function made during the test, expected values saved from the
original before the mutants are in place, a golden file the measuring run
writes, a saved oracle that tells the fresh run (the one confirming the
kills) apart from the mutation child.  Each passes a gate without the
defense it names; each must end REVIEW, with no other quest's entry in
quest.json changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.attacks import (
    CALC_SOURCE,
    FRESH_COPIES,
    SIGN,
    attack,
    attack_fixtures,
    checks,
)

# Written against the judge's own detection; the kernel sandbox's answers to the same
# kinds of attack: tests/acceptance/test_sandbox.py.
pytestmark = [pytest.mark.slow, pytest.mark.unsandboxed]


template, scanned = attack_fixtures(CALC_SOURCE)


@pytest.mark.parametrize("how", sorted(FRESH_COPIES))
@pytest.mark.children_measured
def test_an_oracle_copied_from_the_source_file_during_the_test_is_review(
    scanned: Path, how: str
) -> None:
    # The function compared with a copy of itself made during the test: the
    # swap changes the live functions only, so every mutant "differs" from
    # the copy, and the probes (the original) agree with it.
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
    # probes agree with them.
    data = attack(scanned, SIGN, SAVED_ORACLES[how])
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert "mutation.kill_unconfirmed" in checks(data), checks(data)


def test_a_golden_file_written_by_the_judged_run_itself_is_review(scanned: Path) -> None:
    # The measuring run writes the original's answers; every later run (the
    # mutants, a fresh process) compares with them.
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
    # reaping shim (the fresh run confirming the kills).
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
    # The fresh run that confirms the kills has another parent: the test fails
    # under the original there too, so no kill is confirmed.
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert "mutation.kill_unconfirmed" in checks(data), checks(data)


def test_a_test_that_tells_the_fresh_run_apart_by_its_environment_is_review(
    scanned: Path,
) -> None:
    # A fresh run started with the mutation child's environment as the tests
    # left it is told apart by a variable set at import.
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
    # A fresh run whose command line names only the killing tests is told
    # apart by a covering test that kills nothing missing from it.
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


def test_a_saved_oracle_that_tells_the_fresh_run_by_the_tests_run_before_it_is_review(
    scanned: Path,
) -> None:
    # A fresh run of the killing tests only would leave out a covering test that
    # kills nothing, so an oracle failing without it would "confirm" every kill
    # (kill_unconfirmed empty in the mutation child's report).
    data = attack(
        scanned,
        SIGN,
        """
        from pkg.calc import sign

        EXPECTED = {x: sign(x) for x in (-3, 0, 4)}
        RAN = []

        def test_a_runs():
            RAN.append("a")
            sign(1)

        def test_sign():
            assert RAN
            for x, want in EXPECTED.items():
                assert sign(x) == want
        """,
    )
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert "mutation.kill_unconfirmed" in checks(data), checks(data)


def test_a_saved_oracle_that_loops_on_a_wrong_value_instead_of_failing_is_review(
    scanned: Path,
) -> None:
    # An oracle saved at import that spins on a wrong value (never an assertion)
    # has every mutant "killed by timeout": kills past the time budget must be
    # confirmed in the fresh run too.
    data = attack(
        scanned,
        SIGN,
        """
        from pkg.calc import sign

        EXPECTED = {x: sign(x) for x in (-3, 0, 4)}

        def test_sign():
            for x, want in EXPECTED.items():
                while sign(x) != want:
                    pass
        """,
    )
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert "mutation.kill_unconfirmed" in checks(data), checks(data)


@pytest.mark.children_measured
def test_a_test_failing_on_the_run_record_of_the_processes_it_starts_is_review(
    scanned: Path,
) -> None:
    # The record the start-up hook of a process the test starts reads says which mutant
    # that process runs; a test that fails on it (read by another process, unseen by
    # the created-file log) fails every mutant and passes the original.  Run again with the original in the test's process and the record kept,
    # it fails where no mutant code ran.
    data = attack(
        scanned,
        SIGN,
        """
        import configparser, json, os, subprocess
        from pkg.calc import sign

        def mode():
            # Each file read by another process: the created-file log watches this one's.
            def read(path):
                return subprocess.run(["cat", path], capture_output=True, text=True).stdout

            parser = configparser.ConfigParser(interpolation=None)
            parser.read_string(read(os.environ.get("COVERAGE_PROCESS_START", "/dev/null")))
            path = parser.get("pytest_quest.engine.remote_mutant", "record", fallback="")
            if not path:
                return "off"
            return json.loads(read(path).splitlines()[0].split(" ", 1)[1]).get("mode")

        def test_sign():
            sign(3); sign(-3); sign(0)
            assert mode() != "mutant"
        """,
    )
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert "mutation.kill_outside" in checks(data), checks(data)
