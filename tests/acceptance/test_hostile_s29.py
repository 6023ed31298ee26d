"""Hostile attacks written with the source in hand (session 29).

Each must end FAIL or REVIEW, with no other quest's entry in quest.json changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acceptance.test_hostile_s25 import SIGN, SOURCE
from tests.support.attacks import attack, attack_fixtures, checks

pytestmark = pytest.mark.slow


template, scanned = attack_fixtures(SOURCE)


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
