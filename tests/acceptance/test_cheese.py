"""The cheese suite: every cheat must end FAIL or REVIEW, every honest submission PASS.

Each scenario is a throwaway project (``project`` fixture): one scan, then
all the submissions of the scenario, each quest by ``--quest-id``, run a few
at a time (submits of different quests may run concurrently: the ratchet
file is locked).  One function per cheat, in its own module, so the cheats
cannot help or hurt each other.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.support.projects import Project, qid
from tests.support.quests import ratchet_view
from tests.support.runner import run_quest

pytestmark = pytest.mark.slow

WORKERS = 3


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path / "project")


def submit_all(path: Path, quest_ids: list[str], *extra: str) -> dict[str, dict[str, Any]]:
    """Submit every quest of `quest_ids` (a few at a time); their JSON outputs by id."""

    def one(quest_id: str) -> tuple[str, dict[str, Any]]:
        _, data, stderr = run_quest(path, "--quest", "submit", "--quest-id", quest_id, *extra)
        assert "verdict" in data, f"{quest_id}: {data}\n{stderr}"
        return quest_id, data

    with ThreadPoolExecutor(WORKERS) as pool:
        return dict(pool.map(one, quest_ids))


def checks(data: dict[str, Any]) -> list[str]:
    return [fact["check"] for fact in data["quest"]["facts"]]


# -- cheats ----------------------------------------------------------------------

# module -> (function source, test source written after the scan)
CHEATS: dict[str, tuple[str, str]] = {
    "no_assert": (
        """
        def grade(score):
            if score >= 90:
                return "A"
            if score >= 50:
                return "B"
            return "C"
        """,
        """
        from pkg.no_assert import grade

        def test_grade_runs():
            grade(95)
            grade(60)
            grade(10)
        """,
    ),
    "swallow": (
        """
        def discount(total):
            if total > 100:
                return total - 10
            return total
        """,
        """
        from pkg.swallow import discount

        def test_discount():
            try:
                assert discount(150) == 999
                assert discount(50) == 999
            except AssertionError:
                pass
            try:
                discount(10)
            except Exception:
                pass
        """,
    ),
    "skipped": (
        """
        def half(x):
            if x % 2:
                raise ValueError("odd")
            return x // 2
        """,
        """
        import pytest
        from pkg.skipped import half

        @pytest.mark.skip(reason="later")
        def test_half():
            assert half(4) == 2
            with pytest.raises(ValueError):
                half(3)

        def test_half_skips_itself():
            pytest.skip("not today")
            assert half(4) == 2
        """,
    ),
    "xfailed": (
        """
        def triple(x):
            if x < 0:
                return 0
            return 3 * x
        """,
        """
        import pytest
        from pkg.xfailed import triple

        @pytest.mark.xfail
        def test_triple_negative():
            assert triple(-1) == 99

        @pytest.mark.xfail(strict=False)
        def test_triple_positive_xpasses():
            assert triple(2) == 6
        """,
    ),
    "failing": (
        """
        def area(w, h):
            if w < 0 or h < 0:
                raise ValueError("negative")
            return w * h
        """,
        """
        import pytest
        from pkg.failing import area

        def test_area():
            assert area(2, 3) == 7

        def test_area_negative():
            with pytest.raises(TypeError):
                area(-1, 2)
        """,
    ),
    "conftest_import": (
        """
        def boot(flag):
            if flag:
                return "on"
            return "off"
        """,
        """
        def test_unrelated():
            assert 1 + 1 == 2
        """,
    ),
    "tautology": (
        """
        def bonus(level):
            if level > 3:
                return level * 10
            return 0
        """,
        """
        from pkg.tautology import bonus

        def test_bonus():
            high = bonus(5)
            low = bonus(1)
            assert high == high
            assert low == low or True
            assert True
        """,
    ),
    "not_none": (
        """
        def score(word):
            if len(word) > 4:
                return len(word) * 2
            return len(word)
        """,
        """
        from pkg.not_none import score

        def test_score():
            assert score("elephant") is not None
            assert isinstance(score("cat"), int)
        """,
    ),
    "mocked": (
        """
        def price(sku):
            if sku.startswith("X"):
                return 0
            return len(sku) * 100
        """,
        """
        from unittest import mock

        import pkg.mocked
        from pkg.mocked import price

        def test_price():
            price("XA")
            price("ABC")
            with mock.patch("pkg.mocked.price", return_value=300):
                assert pkg.mocked.price("ABC") == 300
        """,
    ),
    "self_oracle": (
        """
        def shipping(weight):
            if weight > 10:
                return 20
            return 5
        """,
        """
        from pkg.self_oracle import shipping

        def test_shipping_agrees_with_itself():
            for weight in (1, 11):
                assert shipping(weight) == shipping(weight)
        """,
    ),
    "pragma": (
        """
        def parity(x):
            if x % 2 == 0:
                return "even"
            return "odd"
        """,
        """
        from pkg.pragma import parity

        def test_even():
            assert parity(4) == "even"
        """,
    ),
    "rewrite": (
        """
        def fee(amount):
            if amount > 1000:
                return 50
            return 5
        """,
        """
        from pkg.rewrite import fee

        def test_fee():
            assert fee(1) == 5
        """,
    ),
    "delete": (
        """
        def keep(x):
            return x


        def doomed(x):
            if x:
                return 1
            return 2
        """,
        """
        def test_nothing_left():
            assert True
        """,
    ),
    "rename": (
        """
        def old_name(x):
            if x:
                return 1
            return 2
        """,
        """
        from pkg.rename import new_name

        def test_new_name():
            assert new_name(1) == 1
            assert new_name(0) == 2
        """,
    ),
    "hand_edit": (
        """
        def tax(x):
            if x > 100:
                return x // 10
            return 0
        """,
        """
        from pkg.hand_edit import tax

        def test_tax():
            assert tax(5) == 0
            assert tax(7) == 0
        """,
    ),
    "gate_aware": (
        """
        def rank(points):
            if points > 100:
                return "gold"
            return "silver"
        """,
        """
        import sys
        import pytest
        from pkg.gate_aware import rank

        def test_rank():
            if "--quest-channel" in sys.argv and "--quest-measure-only" not in sys.argv:
                pytest.skip("not while mutants are about")
            rank(101)
            rank(1)
        """,
    ),
}

CONFTEST = """
from pkg.conftest_import import boot

boot(True)
boot(False)
"""

# quest id -> (allowed verdicts, a check that must be among the facts)
EXPECTED = {
    qid("no_assert", "grade"): ("FAIL", "mutation."),
    qid("swallow", "discount"): ("FAIL", "mutation."),
    qid("skipped", "half"): ("FAIL", "coverage.line"),
    qid("xfailed", "triple"): ("FAIL", "coverage.line"),
    qid("failing", "area"): ("FAIL", "coverage.line"),
    qid("conftest_import", "boot"): ("FAIL", "coverage.line"),
    qid("tautology", "bonus"): ("FAIL", "mutation."),
    qid("not_none", "score"): ("FAIL", "mutation.return.changed"),
    qid("mocked", "price"): ("FAIL", "mutation."),
    qid("self_oracle", "shipping"): ("FAIL", "mutation.return.changed"),
    qid("pragma", "parity"): ("FAIL", "exclusion.new"),
    qid("rewrite", "fee"): ("REVIEW", "identity.changed"),
    qid("delete", "doomed"): ("REVIEW", "identity.gone"),
    qid("rename", "old_name"): ("REVIEW", "identity.gone"),
    qid("hand_edit", "tax"): ("REVIEW", "guard.seal"),
    # Behaving differently in the mutation check is an outcome that changed.
    qid("gate_aware", "rank"): ("REVIEW", "stability.flaky"),
}


def cheat_after_scan(project: Any) -> None:
    """What the cheater does once the quests are issued."""
    for module, (_, test) in CHEATS.items():
        project.test(f"test_{module}", test)
    project.test("conftest", CONFTEST)
    pragma = project.path / "src" / "pkg" / "pragma.py"
    pragma.write_text(
        pragma.read_text().replace('return "odd"', 'return "odd"  # pragma: no cover')
    )
    project.source("rewrite", "def fee(amount):\n    return 5\n")
    project.source("delete", "def keep(x):\n    return x\n")
    project.source("rename", CHEATS["rename"][0].replace("old_name", "new_name"))
    # The hand edit: rewrite the body and give the ratchet the new fingerprint,
    # computed as pytest-quest does, so step 1 sees "the same function".
    import ast

    from pytest_quest.engine.source import fingerprint_node

    new_source = "def tax(x):\n    return 0\n"
    project.source("hand_edit", new_source)
    node = ast.parse(new_source).body[0]
    ratchet_path = project.path / "quest.json"
    ratchet = ratchet_view(ratchet_path.read_bytes())
    ratchet["quests"][qid("hand_edit", "tax")]["fingerprint"] = fingerprint_node(node)
    ratchet_path.write_text(json.dumps(ratchet, indent=2, sort_keys=True) + "\n")


def test_every_cheat_ends_fail_or_review(project: Project) -> None:
    for module, (source, _) in CHEATS.items():
        project.source(module, source)
    code, data, stderr = run_quest(project.path, "--quest", "scan")
    assert code == 0, stderr
    assert set(EXPECTED) <= set(data["added"]), data
    cheat_after_scan(project)
    results = submit_all(project.path, sorted(EXPECTED))
    problems = []
    for quest_id, (verdict, check) in sorted(EXPECTED.items()):
        got = results[quest_id]
        found = checks(got)
        if got["verdict"] != verdict or not any(c.startswith(check) for c in found):
            problems.append(f"{quest_id}: {got['verdict']} {found} (expected {verdict} {check})")
    assert not problems, "\n".join(problems)
    ratchet = project.ratchet()["quests"]
    assert all(ratchet[quest_id]["state"] != "PASS" for quest_id in EXPECTED)
    # Facts name the line and the code: the pragma line with its pattern...
    pragma = results[qid("pragma", "parity")]["quest"]["facts"]
    assert pragma[0]["field"] == "src/pkg/pragma.py:5"
    assert "pragma" in pragma[0]["actual"]
    # ...and a surviving mutant its line, the original and the mutated code,
    # its operator and its id (for --quest-dispute).
    mutants = [
        fact["actual"]
        for fact in results[qid("not_none", "score")]["quest"]["facts"]
        if fact["field"] == "src/pkg/not_none.py:4"
    ]
    assert any(
        actual.startswith(
            "every covering test passes with `return len(word) * 2` -> "
            "another value of its kind returned in place of `len(word) * 2` "
            "(operator return.changed, mutant m"
        )
        for actual in mutants
    ), mutants


# -- coverage configuration edits (their own project: they touch every quest) -------


@pytest.mark.children_measured
def test_coverage_config_edits_fail_naming_the_setting(project: Project) -> None:
    project.source(
        "conf",
        """
        def first(x):
            if x:
                return 1
            return 2


        def second(x):
            if x:
                return 3
            return 4
        """,
    )
    assert run_quest(project.path, "--quest", "scan")[0] == 0
    project.test(
        "test_conf",
        """
        from pkg.conf import first, second

        def test_first():
            assert first(1) == 1

        def test_second():
            assert second(1) == 3
        """,
    )
    pyproject = project.path / "pyproject.toml"
    original = pyproject.read_text()
    pyproject.write_text(
        original + '\n[tool.coverage.report]\nexclude_also = ["return 2", "return 4"]\n'
    )
    _, data, _ = run_quest(project.path, "--quest", "submit", "--quest-id", qid("conf", "first"))
    assert data["verdict"] == "FAIL"
    fields = {fact["field"] for fact in data["quest"]["facts"]}
    assert "coverage:report:exclude_lines" in fields
    assert "src/pkg/conf.py:5" in fields  # the newly excluded line, with its pattern
    pyproject.write_text(
        original.replace('source = ["src/pkg"]', 'source = ["src/pkg"]\nomit = ["*/conf.py"]')
    )
    _, data, _ = run_quest(project.path, "--quest", "submit", "--quest-id", qid("conf", "second"))
    assert data["verdict"] == "FAIL", data["quest"]["facts"]
    assert "coverage:run:omit" in {fact["field"] for fact in data["quest"]["facts"]}


# -- the judged cannot write the verdict ------------------------------------------------

WRITER_TEST = """
import json
import pathlib
import subprocess
import sys

from pkg.writer import label

QUEST = "src/pkg/writer.py::label"
RATCHET = pathlib.Path(__file__).resolve().parent.parent / "quest.json"
FORGE = '''
import json, pathlib, sys
path = pathlib.Path(sys.argv[1])
data = json.loads(path.read_text())
entry = data["quests"][sys.argv[2]]
tests = data.setdefault("tests", [])  # version 2: covering tests by index
if "forged" not in tests:  # forging twice (a rerun) gives the same file
    tests.append("forged")
entry.update(state="PASS", passed_at="2020-01-01T00:00:00Z", covering_tests=[tests.index("forged")],
             missing_lines=[], missing_branches=[])
path.write_text(json.dumps(data, indent=2, sort_keys=True))
'''


def test_label_and_forge_the_verdict():
    assert label(5) == "many"
    assert label(1) == "one"
    try:
        RATCHET.write_text("{}")  # refused in the gate's processes
    except PermissionError:
        pass
    subprocess.run([sys.executable, "-c", FORGE, str(RATCHET), QUEST], check=True)
"""


@pytest.mark.unsandboxed  # the guard's own account of the forged entries (a sandbox refuses the write)
def test_a_test_that_writes_the_ratchet_file_cannot_pass(project: Project) -> None:
    project.source(
        "writer",
        """
        def label(n):
            if n > 1:
                return "many"
            return "one"
        """,
    )
    assert run_quest(project.path, "--quest", "scan")[0] == 0
    project.test("test_writer", WRITER_TEST)
    _, data, _ = run_quest(project.path, "--quest", "submit", "--quest-id", qid("writer", "label"))
    assert data["verdict"] == "REVIEW", data
    assert checks(data)[0] == "guard.ratchet_written"
    # The direct write was refused in the test's process (else the file would
    # be "{}" and broken); the forging subprocess got through, and was undone.
    assert qid("writer", "label") in data["quest"]["facts"][0]["actual"]
    entry = project.ratchet()["quests"][qid("writer", "label")]
    assert entry["state"] == "REVIEW"
    assert entry["covering_tests"] != ["forged"]
    assert entry["passed_at"] == ""


# -- honest submissions: all PASS ---------------------------------------------------------

HONEST: dict[str, tuple[str, str]] = {
    "plain": (
        """
        def clamp_low(x, lo):
            # At x == lo, `<` and `<=` give the same answer: a flipped
            # comparison would be an equivalent mutant.  None is made.
            if x < lo:
                return lo
            return x
        """,
        """
        from pkg.plain import clamp_low

        def test_clamp_low():
            assert clamp_low(1, 5) == 5
            assert clamp_low(5, 5) == 5
            assert clamp_low(9, 5) == 9
        """,
    ),
    "raises": (
        """
        def withdraw(balance, amount):
            if amount <= 0:
                raise ValueError("amount must be positive")
            if amount > balance:
                raise ValueError("insufficient funds")
            return balance - amount
        """,
        """
        import pytest
        from pkg.raises import withdraw

        def test_withdraw():
            assert withdraw(10, 3) == 7
            assert withdraw(10, 10) == 0

        @pytest.mark.parametrize("amount", [0, -1])
        def test_non_positive(amount):
            with pytest.raises(ValueError, match="positive"):
                withdraw(10, amount)

        def test_insufficient():
            with pytest.raises(ValueError, match="insufficient"):
                withdraw(10, 11)
        """,
    ),
    "param": (
        """
        def fizz(n):
            if n % 15 == 0:
                return "FizzBuzz"
            if n % 3 == 0:
                return "Fizz"
            if n % 5 == 0:
                return "Buzz"
            return str(n)
        """,
        """
        import pytest
        from pkg.param import fizz

        @pytest.mark.parametrize(
            "n, expected", [(15, "FizzBuzz"), (9, "Fizz"), (10, "Buzz"), (7, "7")]
        )
        def test_fizz(n, expected):
            assert fizz(n) == expected
        """,
    ),
    "props": (
        """
        def absolute(x):
            if x < 0:
                return -x
            return x
        """,
        """
        from hypothesis import given, settings, strategies as st
        from pkg.props import absolute

        @settings(max_examples=30)
        @given(st.integers())
        def test_absolute_is_non_negative_and_same_size(x):
            assert absolute(x) >= 0
            assert absolute(x) in (x, -x)

        def test_absolute_examples():
            assert absolute(-3) == 3
            assert absolute(0) == 0
        """,
    ),
    "klass": (
        """
        class Counter:
            def __init__(self):
                self.count = 0

            def bump(self, step=1):
                if step < 1:
                    raise ValueError("step")
                self.count += step
                return self.count
        """,
        """
        import pytest
        from pkg.klass import Counter

        class TestCounter:
            def test_bump(self):
                counter = Counter()
                assert counter.bump() == 1
                assert counter.bump(2) == 3
                assert counter.count == 3

            def test_bad_step(self):
                with pytest.raises(ValueError):
                    Counter().bump(0)
        """,
    ),
    "fixtures": (
        """
        def add_tag(tags, tag):
            # A procedure: returns nothing, its effect is the point.
            if tag in tags:
                return
            tags.append(tag)
        """,
        """
        import pytest
        from pkg.fixtures import add_tag

        @pytest.fixture(scope="module")
        def vocabulary():
            return ("red", "blue")

        @pytest.fixture
        def tags(vocabulary):
            items = list(vocabulary)
            yield items
            items.clear()

        def test_adds_new(tags):
            add_tag(tags, "green")
            assert tags == ["red", "blue", "green"]

        def test_keeps_existing(tags):
            add_tag(tags, "red")
            assert tags == ["red", "blue"]
        """,
    ),
    "fastpath": (
        """
        def total(items):
            # The fast path: without it the result is the same (an equivalent
            # "condition forced False" mutant, never made).
            if not items:
                return 0
            return sum(items)
        """,
        """
        from pkg.fastpath import total

        def test_total():
            assert total([]) == 0
            assert total([1, 2, 3]) == 6
        """,
    ),
    "nested": (
        """
        def make_scaler(factor):
            def scale(x):
                if x is None:
                    return 0
                return x * factor
            return scale
        """,
        """
        from pkg.nested import make_scaler

        def test_scale():
            triple = make_scaler(3)
            assert triple(2) == 6
            assert triple(None) == 0
        """,
    ),
    "gen": (
        """
        def evens(limit):
            for n in range(limit):
                if n % 2 == 0:
                    yield n
        """,
        """
        from pkg.gen import evens

        def test_evens():
            assert list(evens(7)) == [0, 2, 4, 6]
            assert list(evens(0)) == []
        """,
    ),
    "asyncfn": (
        """
        async def fetch_name(user):
            if not user:
                return "anonymous"
            return user.title()
        """,
        """
        import asyncio
        from pkg.asyncfn import fetch_name

        def test_fetch_name():
            assert asyncio.run(fetch_name("")) == "anonymous"
            assert asyncio.run(fetch_name("ada")) == "Ada"
        """,
    ),
    "predicate": (
        """
        def is_adult(age):
            if age >= 18:
                return True
            return False
        """,
        """
        from pkg.predicate import is_adult

        def test_is_adult():
            assert is_adult(30)
            assert is_adult(18)
            assert not is_adult(17)
        """,
    ),
    "memo": (
        """
        _cache = {}


        def slow_square(n):
            # A cache: skipping it gives the same answer (never made a mutant).
            if n in _cache:
                return _cache[n]
            _cache[n] = n * n
            return _cache[n]
        """,
        """
        import pytest
        import pkg.memo
        from pkg.memo import slow_square

        @pytest.fixture(autouse=True)
        def cold_cache():
            pkg.memo._cache.clear()

        def test_slow_square_twice():
            assert slow_square(4) == 16
            assert slow_square(4) == 16
            assert slow_square(5) == 25
        """,
    ),
    "ternary": (
        """
        def sign(x):
            return -1 if x < 0 else 1
        """,
        """
        from pkg.ternary import sign

        def test_sign():
            assert sign(-2) == -1
            assert sign(0) == 1
            assert sign(3) == 1
        """,
    ),
    "prop": (
        """
        class Person:
            def __init__(self, first, last):
                self.first, self.last = first, last

            @property
            def full_name(self):
                if not self.last:
                    return self.first
                return f"{self.first} {self.last}"
        """,
        """
        from pkg.prop import Person

        def test_full_name():
            assert Person("Ada", "Lovelace").full_name == "Ada Lovelace"
            assert Person("Plato", "").full_name == "Plato"
        """,
    ),
    "classmeth": (
        """
        class Money:
            def __init__(self, cents):
                self.cents = cents

            @classmethod
            def parse(cls, text):
                if "." in text:
                    euros, cents = text.split(".")
                    return cls(int(euros) * 100 + int(cents))
                return cls(int(text) * 100)
        """,
        """
        from pkg.classmeth import Money

        def test_parse():
            assert Money.parse("3.25").cents == 325
            assert Money.parse("4").cents == 400
            assert isinstance(Money.parse("1"), Money)
        """,
    ),
    "printer": (
        """
        def report(items):
            if not items:
                print("nothing")
                return
            for item in items:
                print(f"- {item}")
        """,
        """
        from pkg.printer import report

        def test_report(capsys):
            report([])
            assert capsys.readouterr().out == "nothing\\n"
            report(["a", "b"])
            assert capsys.readouterr().out == "- a\\n- b\\n"
        """,
    ),
    "recursive": (
        """
        def factorial(n):
            if n < 0:
                raise ValueError("negative")
            if n <= 1:
                return 1
            return n * factorial(n - 1)
        """,
        """
        import pytest
        from pkg.recursive import factorial

        def test_factorial():
            assert factorial(0) == 1
            assert factorial(1) == 1
            assert factorial(5) == 120
            with pytest.raises(ValueError):
                factorial(-1)
        """,
    ),
    "unitstyle": (
        """
        def initials(name):
            parts = name.split()
            if len(parts) > 3:
                parts = parts[:3]
            return "".join(part[0].upper() for part in parts)
        """,
        """
        import unittest
        from pkg.unitstyle import initials

        class InitialsTest(unittest.TestCase):
            def test_short(self):
                self.assertEqual(initials("ada lovelace"), "AL")

            def test_long_names_keep_three(self):
                self.assertEqual(initials("a b c d e"), "ABC")
        """,
    ),
    "mapping": (
        """
        def word_counts(text):
            counts = {}
            for word in text.lower().split():
                if word in counts:
                    counts[word] += 1
                else:
                    counts[word] = 1
            return counts
        """,
        """
        from pkg.mapping import word_counts

        def test_word_counts():
            assert word_counts("a B b") == {"a": 1, "b": 2}
            assert word_counts("") == {}
        """,
    ),
}

HONEST_IDS = [
    qid("plain", "clamp_low"),
    qid("raises", "withdraw"),
    qid("param", "fizz"),
    qid("props", "absolute"),
    qid("klass", "Counter.bump"),
    qid("fixtures", "add_tag"),
    qid("fastpath", "total"),
    qid("nested", "make_scaler.scale"),
    qid("gen", "evens"),
    qid("asyncfn", "fetch_name"),
    qid("predicate", "is_adult"),
    qid("memo", "slow_square"),
    qid("ternary", "sign"),
    qid("prop", "Person.full_name"),
    qid("classmeth", "Money.parse"),
    qid("printer", "report"),
    qid("recursive", "factorial"),
    qid("unitstyle", "initials"),
    qid("mapping", "word_counts"),
]


def test_every_honest_submission_passes(project: Project) -> None:
    for module, (source, _) in HONEST.items():
        project.source(module, source)
    code, data, stderr = run_quest(project.path, "--quest", "scan")
    assert code == 0, stderr
    assert set(HONEST_IDS) <= set(data["added"]), data["added"]
    for module, (_, test) in HONEST.items():
        project.test(f"test_{module}", test)
    results = submit_all(project.path, HONEST_IDS)
    failed = {
        quest_id: (got["verdict"], got["quest"]["facts"])
        for quest_id, got in results.items()
        if got["verdict"] != "PASS"
    }
    assert not failed
    ratchet = project.ratchet()["quests"]
    assert all(ratchet[quest_id]["state"] == "PASS" for quest_id in HONEST_IDS)
    assert all(ratchet[quest_id]["extra"]["mutation_seconds"] > 0 for quest_id in HONEST_IDS)


# -- determinism ----------------------------------------------------------------------------


def test_same_submission_twice_same_verdict_and_facts(tmp_path: Path) -> None:
    outcomes = []
    test = CHEATS["no_assert"][1].replace("grade(10)", "assert grade(10) == 'C'")
    for copy in ("first", "second"):
        project = Project(tmp_path / copy)
        project.source("no_assert", CHEATS["no_assert"][0])
        assert run_quest(project.path, "--quest", "scan")[0] == 0
        project.test("test_no_assert", test)
        _, data, _ = run_quest(
            project.path, "--quest", "submit", "--quest-id", qid("no_assert", "grade")
        )
        outcomes.append((data["verdict"], data["step"], data["quest"]["facts"]))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == "FAIL" and outcomes[0][1] == "4-mutants"
