"""A function moved to another file or renamed, then rescanned: it keeps its quest.

Without a fingerprint match, a rescan issues it as a new function (a PASS
baseline at once when assertion-free tests cover it) and drops its quest, with
its tries, REVIEW or DONE, into `removed`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.attacks import CALC_SOURCE, SIGN, attack_fixtures, submit
from tests.support.quests import ratchet_view
from tests.support.runner import run_quest

# The judge's own detection, without a kernel sandbox (docs/sandbox.md covers the sandboxed path).
pytestmark = [pytest.mark.slow, pytest.mark.unsandboxed]


template, scanned = attack_fixtures(CALC_SOURCE)


@pytest.mark.parametrize("how", ["moved", "renamed", "removed_then_back"])
def test_a_function_moved_or_renamed_and_rescanned_keeps_its_quest(scanned: Path, how: str) -> None:
    # A move to another file (or a rename) and a rescan must not issue it as a
    # new function (PASS at once as a baseline when assertion-free tests cover
    # it) and drop its quest (tries, REVIEW, DONE) into `removed`.
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
