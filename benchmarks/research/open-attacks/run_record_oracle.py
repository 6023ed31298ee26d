"""An attack that still PASSes (an open hole, docs/judge.md "Limits"): run by hand from the
repository's root, `python -m pytest benchmarks/research/open-attacks/FILE -p no:cacheprovider -s`;
it prints the verdict of a submit of the attack, PASS while the hole is open."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.attacks import CALC_SOURCE, SIGN, attack, attack_fixtures, checks

pytestmark = [pytest.mark.slow]

template, scanned = attack_fixtures(CALC_SOURCE)

CHILD = """
import os, json
rc = os.environ.get("COVERAGE_PROCESS_START", "")
mode = ""
if rc:
    for line in open(rc).read().splitlines():
        if line.startswith("record = "):
            body = open(line.split(" = ", 1)[1]).read().split(" ", 1)[1]
            mode = json.loads(body).get("mode", "")
print(mode)
"""

RECORD = """
    import subprocess, sys
    from pkg.calc import sign

    def test_sign():
        sign(3); sign(-3); sign(0)
        out = subprocess.run([sys.executable, "-c", CHILD_TEXT], capture_output=True, text=True).stdout
        assert out.strip() != "mutant"
""".replace("CHILD_TEXT", repr(CHILD))


def test_record(scanned: Path) -> None:
    data = attack(scanned, SIGN, RECORD, allowed=("PASS", "FAIL", "REVIEW"))
    print("VERDICT", data["verdict"], checks(data))
