"""An attack that still PASSes (an open hole, docs/judge.md "Limits"): run by hand from the
repository's root, `python -m pytest benchmarks/research/open-attacks/FILE -p no:cacheprovider -s`;
it prints the verdict of a submit of the attack, PASS while the hole is open."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import pytest

from tests.support.attacks import CALC_SOURCE, SIGN, attack, attack_fixtures, checks

pytestmark = [pytest.mark.slow]

template, scanned = attack_fixtures(CALC_SOURCE)

BODY = """
import ast, hashlib
import pkg.calc
from pkg.calc import sign

def body():
    tree = ast.parse(open(pkg.calc.__file__).read())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "sign")
    stmts = [s for s in fn.body if not (isinstance(s, ast.Expr) and "pytest_quest" in ast.dump(s))]
    return hashlib.sha256(ast.dump(ast.Module(body=stmts, type_ignores=[])).encode()).hexdigest()
"""


def _digest() -> str:
    fn = next(
        n
        for n in ast.walk(ast.parse(CALC_SOURCE))
        if isinstance(n, ast.FunctionDef) and n.name == "sign"
    )
    return hashlib.sha256(ast.dump(ast.Module(body=fn.body, type_ignores=[])).encode()).hexdigest()


@pytest.mark.parametrize("how", ["import", "hardcoded"])
def test_text(scanned: Path, how: str) -> None:
    ref = "REF = body()\n" if how == "import" else f"REF = {_digest()!r}\n"
    src = (
        BODY
        + ref
        + """
def test_sign():
    sign(3); sign(-3); sign(0)
    assert body() == REF
"""
    )
    data = attack(scanned, SIGN, src, allowed=("PASS", "FAIL", "REVIEW"))
    print("VERDICT", how, data["verdict"], checks(data))
