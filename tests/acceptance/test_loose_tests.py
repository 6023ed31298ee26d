"""Loose tests a lazy writer produces end FAIL naming a surviving mutant; disputes.

On a copy of example_project whose pricing, text and shipping tests are removed (so
their functions are quests to do), six loose-test styles are submitted, one
quest each, and must FAIL at step 4 with a fact naming a surviving mutant by
id.  Then disputes: an equivalent mutant disputed ends REVIEW with its
evidence (never PASS, no try), a killable one is refused naming the test.
"""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.mutants import plan_mutants
from tests.support.paths import EXAMPLE_PROJECT, verifier_script
from tests.support.runner import SELF_COVERAGE_SWITCH, run_quest

pytestmark = pytest.mark.slow

WORKERS = 3
# The rule that holds every survivor against the tests, witness or not (a submit may tighten).
STRICT = ("--quest-mutants", "strict")
ID = re.compile(r"mutant (m[0-9a-f]{8})\)")

# quest -> loose test module (the loose style it shows)
LOOSE: dict[str, tuple[str, str]] = {
    # 1. ordering-only assertions: any prices in the same order pass.
    "src/shop/shipping.py::shipping_cost": (
        "test_ordering",
        """
        import pytest
        from shop.shipping import shipping_cost

        def test_heavier_costs_more():
            assert shipping_cost(500) < shipping_cost(3000) < shipping_cost(10000)
            assert shipping_cost(500, express=True) > shipping_cost(500)
            for weight in (0, 30000):
                with pytest.raises(ValueError):
                    shipping_cost(weight)
        """,
    ),
    # 2. pytest.approx with a tolerance that swallows any discount.
    "src/shop/pricing.py::apply_percent": (
        "test_approx",
        """
        import pytest
        from shop.pricing import apply_percent

        def test_roughly():
            assert apply_percent(1000, 5) == pytest.approx(950, abs=900)
            with pytest.raises(ValueError):
                apply_percent(1000, 101)
        """,
    ),
    # 3. truthiness and a suffix check: any text ending in the ellipsis passes.
    "src/shop/text.py::truncate": (
        "test_suffix",
        """
        import pytest
        from shop.text import truncate

        def test_truncate_ends_with_ellipsis():
            result = truncate("a rather long product title", 10)
            assert result and result.endswith("…")
            assert truncate("short", 10)
            with pytest.raises(ValueError):
                truncate("x", 0)
        """,
    ),
    # 4. a Hypothesis property that checks only the shape of the result.
    "src/shop/text.py::format_price": (
        "test_shape",
        """
        from hypothesis import given, strategies as st
        from shop.text import format_price

        @given(st.integers(), st.sampled_from(["EUR", "USD", "GBP"]))
        def test_is_a_non_empty_string(cents, currency):
            result = format_price(cents, currency)
            assert isinstance(result, str) and result
        """,
    ),
    # 5. the helper mocked to a constant: the arithmetic around it is unchecked.
    "src/shop/pricing.py::bulk_unit_price": (
        "test_mocked",
        """
        from shop import pricing

        def test_bulk_uses_the_discount(monkeypatch):
            monkeypatch.setattr(pricing, "apply_percent", lambda price, percent: 42)
            assert pricing.bulk_unit_price(1000, 60) == 42
            assert pricing.bulk_unit_price(1000, 20) == 42
            assert pricing.bulk_unit_price(1000, 1) == 1000
        """,
    ),
    # 6. a guard tested with pytest.raises(Exception): any error will do.
    "src/shop/pricing.py::Coupon.from_code": (
        "test_any_error",
        """
        import pytest
        from shop.pricing import Coupon

        def test_parse():
            assert Coupon.from_code("save15").percent == 15
            assert Coupon.from_code("SAVE10-MIN5000").min_subtotal == 5000
            assert Coupon.from_code("SAVE10").min_subtotal == 0

        def test_malformed():
            with pytest.raises(Exception):
                Coupon.from_code("SAVEXX")
        """,
    ),
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """example_project without its pricing, text and shipping tests, scanned once."""
    root = tmp_path_factory.mktemp("loose") / "shop"
    shutil.copytree(
        EXAMPLE_PROJECT, root, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
    )
    for name in ("test_pricing.py", "test_text.py", "test_shipping.py"):
        (root / "tests" / name).unlink()
    (root / "quest.json").unlink(missing_ok=True)
    code, data, stderr = run_quest(root, "--quest", "scan")
    assert code == 0, stderr
    return root


def submit(root: Path, quest_id: str, *extra: str) -> dict[str, Any]:
    _, data, stderr = run_quest(root, "--quest", "submit", "--quest-id", quest_id, *extra)
    assert "verdict" in data, f"{quest_id}: {data}\n{stderr}"
    return data


@pytest.mark.children_measured
def test_six_loose_styles_fail_naming_a_surviving_mutant(shop: Path) -> None:
    for name, test in LOOSE.values():
        (shop / "tests" / f"{name}.py").write_text(textwrap.dedent(test))
    with ThreadPoolExecutor(WORKERS) as pool:
        results = dict(zip(LOOSE, pool.map(lambda q: submit(shop, q), LOOSE)))
    for quest_id, data in results.items():
        facts = data["quest"]["facts"]
        assert (data["verdict"], data["step"]) == ("FAIL", "4-mutants"), (quest_id, facts)
        assert all(f["check"].startswith("mutation.") for f in facts), facts
        assert all(ID.search(f["message"]) for f in facts), facts
    survivors = {
        q: {(f["check"], f["actual"].split(" with ")[1]) for f in d["quest"]["facts"]}
        for q, d in results.items()
    }
    # What each style lets through (one telling survivor each).
    expected = {
        "src/shop/shipping.py::shipping_cost": "constant.number",
        "src/shop/pricing.py::apply_percent": "arith.replace",
        "src/shop/text.py::truncate": "slice.bounds",
        "src/shop/text.py::format_price": "constant.string",
        "src/shop/pricing.py::bulk_unit_price": "constant.number",
        "src/shop/pricing.py::Coupon.from_code": "raise.type",
    }
    for quest_id, operator in expected.items():
        checks = {check for check, _ in survivors[quest_id]}
        assert f"mutation.{operator}" in checks, (quest_id, survivors[quest_id])
    # Each FAIL carries a witness: a call on which a survivor and the function differ
    # (the observer stands aside when coverage.py measures the gate's children).
    if not os.environ.get(SELF_COVERAGE_SWITCH):
        for quest_id, data in results.items():
            witnessed = [
                f for f in data["quest"]["facts"] if "it is not equivalent" in f["message"]
            ]
            assert witnessed, (quest_id, data["quest"]["facts"])
            assert all("the mutant" in f["message"] for f in witnessed), witnessed


# -- disputes -------------------------------------------------------------------------

WORDS = '''\
def first_word(text):
    """The text up to its first space."""
    words = text.split(" ")
    return words[0] if words else ""


def shout(text):
    return text.upper() + "!"
'''

WORDS_TESTS = """\
from words import first_word, shout


def test_first_word():
    assert first_word("hello world") == "hello"
    assert first_word("") == ""


def test_shout():
    assert shout("hey") == "HEY!"
"""


@pytest.fixture
def words(tmp_path: Path) -> Path:
    root = tmp_path / "words"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src" / "words.py").write_text(WORDS)
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n'
        'quest_source = ["src"]\n\n[tool.coverage.run]\nbranch = true\n'
    )
    code, _, stderr = run_quest(root, "--quest", "scan")
    assert code == 0, stderr
    (root / "tests" / "test_words.py").write_text(WORDS_TESTS)
    return root


@pytest.mark.children_measured
def test_an_equivalent_mutant_disputed_ends_review_with_its_evidence(words: Path) -> None:
    quest = "src/words.py::first_word"
    # `text.split(" ")` is never empty: forcing `if words` True changes nothing.  No call
    # tells them apart (unwitnessed); the strict rule holds it against the tests all the same.
    data = submit(words, quest, *STRICT)
    assert data["verdict"] == "FAIL"
    (fact,) = data["quest"]["facts"]
    assert fact["check"] == "mutation.condition.true"
    found = ID.search(fact["message"])
    assert found is not None, fact["message"]
    mutant = found.group(1)
    # A dispute needs a reason, and an id of the function's plan (exit 4, nothing run).
    code, out, stderr = run_quest(words, "--quest", "submit", "--quest-dispute", mutant)
    assert code == 4 and "--quest-reason" in str(out) + stderr
    code, out, stderr = run_quest(
        words, "--quest", "submit", "--quest-dispute", "m00000000", "--quest-reason", "x"
    )
    assert code == 4 and "not a mutant of" in str(out) + stderr and mutant in str(out)

    reason = "split() always returns at least one element"
    data = submit(words, quest, "--quest-dispute", mutant, "--quest-reason", reason, *STRICT)
    assert (data["verdict"], data["step"]) == ("REVIEW", "dispute")
    assert data["quest"]["state"] == "REVIEW" and data["quest"]["tries"] == 1
    assert data["quest"]["dispute"] is True
    fact, others = data["quest"]["facts"]
    assert fact["check"] == "dispute.equivalent"
    assert mutant in fact["message"] and reason in fact["message"]
    assert "tests/test_words.py::test_first_word" in fact["actual"]
    # The person sees what was sought and not found, and that every other mutant is killed.
    assert "none fails with it" in fact["message"]
    assert others["check"] == "dispute.others_killed", others
    assert (
        "other mutant" in others["message"] and " by tests/test_words.py::" in (others["message"])
    )
    # status shows it apart from the other REVIEWs.
    _, status, _ = run_quest(words, "--quest-status")
    shown = {q["id"]: q.get("dispute", False) for q in status["quests"]}
    assert shown == {quest: True, "src/words.py::shout": False}


@pytest.mark.children_measured
def test_a_killable_mutant_disputed_is_refused_naming_the_killing_test(words: Path) -> None:
    quest = "src/words.py::shout"
    source = WORDS
    killable = next(m for m in plan_mutants(source, 7) if m.operator == "constant.string")
    data = submit(words, quest, "--quest-dispute", killable.id, "--quest-reason", "surely")
    assert (data["verdict"], data["step"]) == ("FAIL", "dispute")
    assert data["quest"]["tries"] == 1 and data["quest"]["state"] == "TODO"
    (fact,) = data["quest"]["facts"]
    assert fact["check"] == "dispute.refused"
    assert "tests/test_words.py::test_shout" in fact["message"]
    # Without the dispute the same tests PASS: the dispute never helps.
    data = submit(words, quest)
    assert data["verdict"] == "PASS", data["quest"]["facts"]


def test_a_mutant_seen_returning_otherwise_disputed_is_refused_with_what_it_did(
    words: Path,
) -> None:
    # A loose test (a part of the text): the mutant's result differs on the test's own
    # input, so the fact says so, and a dispute of it is refused (a try is spent).
    (words / "tests" / "test_words.py").write_text(
        WORDS_TESTS.replace('assert shout("hey") == "HEY!"', 'assert "HEY" in shout("hey")')
    )
    quest = "src/words.py::shout"
    data = submit(words, quest)
    assert data["verdict"] == "FAIL"
    seen = [f for f in data["quest"]["facts"] if "it is not equivalent" in f["message"]]
    assert seen, data["quest"]["facts"]
    assert (
        "the mutant returns `'HEYXX!XX'` where the function returns `'HEY!'`"
        in (seen[0]["message"])
    )
    assert "--quest-dispute" not in seen[0]["message"]
    found = ID.search(seen[0]["message"])
    assert found is not None, seen[0]["message"]
    data = submit(words, quest, "--quest-dispute", found.group(1), "--quest-reason", "same")
    assert (data["verdict"], data["step"]) == ("FAIL", "dispute")
    assert data["quest"]["tries"] == 2 and data["quest"]["state"] == "TODO"
    (fact,) = data["quest"]["facts"]
    assert fact["check"] == "dispute.refused"
    assert "where the function returns `'HEY!'`" in fact["message"], fact["message"]
    assert "it is not equivalent" in fact["message"]


def test_with_verification_on_a_disputed_mutants_review_gets_the_verifiers_view(
    words: Path, tmp_path: Path
) -> None:
    # The verifiers may add to a dispute's REVIEW, never remove it: one names an input,
    # one finds none; the REVIEW stands with their view as a fact.
    quest = "src/words.py::first_word"
    data = submit(words, quest, *STRICT)
    found = ID.search(data["quest"]["facts"][0]["message"])
    assert found is not None, data["quest"]["facts"]
    prompt = tmp_path / "prompt.txt"
    cite = verifier_script(
        "cite.py", "src/words.py", 4, 'return words[0] if words else ""', "with `` the mutant..."
    )
    data = submit(
        words, quest, "--quest-dispute", found.group(1), "--quest-reason", "split() is never empty",
        *STRICT, "--quest-verify", "on", "--quest-verifier-cmd", cite,
        "--quest-verifier-cmd", verifier_script("record.py", prompt),
    )  # fmt: skip
    assert (data["verdict"], data["step"]) == ("REVIEW", "dispute"), data["quest"]["facts"]
    assert data["quest"]["tries"] == 1
    checks = [f["check"] for f in data["quest"]["facts"]]
    assert checks == ["dispute.equivalent", "dispute.others_killed", "verify.equivalence"]
    view = data["quest"]["facts"][2]
    assert view["field"] == "src/words.py:4"
    assert view["actual"].startswith("1 of 2 name an input that tells them apart (`")
    assert "with \\x60\\x60 the mutant..." in view["actual"] and "1 find none" in view["actual"]
    asked = prompt.read_text()
    assert "Line 4: `words[0] if words else ''` becomes `words[0] if True else ''`" in asked
    assert "split() is never empty" in asked and "tests/test_words.py::test_first_word" in asked
