"""Hostile attacks written with the source in hand (sessions 26 and 29).

Each must end FAIL or REVIEW, with no other quest's entry in quest.json changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acceptance.test_hostile_s25 import SIGN, SOURCE
from tests.support.attacks import attack, attack_fixtures, checks

pytestmark = pytest.mark.slow


template, scanned = attack_fixtures(SOURCE)


def test_a_saved_oracle_that_tells_the_fresh_run_by_the_tests_run_before_it_is_review(
    scanned: Path,
) -> None:
    # The fresh run ran the killing tests only: a covering test that kills nothing
    # never ran before the oracle there, so failing without it "confirmed" every
    # kill. PASS before (kill_unconfirmed empty in the mutation child's report).
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


# Session 29.
def test_a_saved_oracle_that_loops_on_a_wrong_value_instead_of_failing_is_review(
    scanned: Path,
) -> None:
    # Kills past the time budget were never confirmed in the fresh run: an oracle saved
    # at import that spins on a wrong value (never an assertion) had every mutant
    # "killed by timeout" and got PASS.
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
