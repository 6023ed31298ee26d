"""verify/equivalence.py: the verifiers' view on a disputed mutant, a fact for a person."""

from __future__ import annotations

from pytest_quest.core.model import Fact, Quest
from pytest_quest.verify.equivalence import (
    QUESTION,
    TESTS_SHOWN,
    ask,
    equivalence_fact,
    equivalence_prompt,
    equivalence_request,
)
from pytest_quest.verify.prompt import Request, TestSource
from pytest_quest.verify.protocol import Finding
from pytest_quest.verify.vote import Answer, vote

QUEST = Quest(id="src/m.py::f", file="src/m.py", qualname="f", first=1, last=3, fingerprint="x")
SOURCE = "def f(xs):\n    xs.sort()\n    return sorted(xs)"
MUTANT = {"id": "m1a2b3c4d", "line": 2, "original": "xs.sort()", "mutated": "pass  # call removed"}
FILES = {"src/m.py": SOURCE.splitlines()}
TESTS = [TestSource(f"tests/t.py::t{n}", "tests/t.py", n, n, f"def t{n}(): ...") for n in range(9)]


def request() -> Request:
    return Request(QUEST, "src/m.py", 1, SOURCE, list(TESTS), ["q1", "q2", "q3"], dict(FILES))


def test_the_prompt_shows_the_function_the_change_the_reason_and_one_question() -> None:
    asked = equivalence_request(request())
    assert asked.questions == [QUESTION] and len(asked.tests) == TESTS_SHOWN
    prompt = equivalence_prompt(asked, MUTANT, "sorted() sorts again")
    assert "    2 |     xs.sort()" in prompt
    assert "Line 2: `xs.sort()` becomes `pass  # call removed`" in prompt
    assert "## The test writer's reason\n\nsorted() sorts again\n" in prompt
    assert f"## Questions (answer with yes or no, then one short reason)\n\n1. {QUESTION}" in prompt
    assert "### tests/t.py::t4 " in prompt and "tests/t.py::t5" not in prompt
    assert "citing line 2 of src/m.py" in prompt


def test_the_fact_counts_who_names_an_input_on_the_changed_line_only() -> None:
    on_line = Finding("src/m.py", 2, "xs.sort()", "with xs=[2, 1] the list is\nleft `unsorted`")
    elsewhere = Finding("src/m.py", 3, "return sorted(xs)", "a bug elsewhere")
    answers = [
        Answer("model-a", 1.0, findings=[on_line], status="verified-with-corrections"),
        Answer("model-b", 1.0, status="verified-clean"),
        Answer("model-c", 1.0, findings=[elsewhere], status="verified-with-corrections"),
        Answer("model-d", 1.0, error="timed out after 300s"),
        Answer("plugin", 0.0, abstained=True),
    ]
    fact = equivalence_fact("src/m.py", MUTANT, vote(answers, FILES, threshold=None))
    assert fact.check == "verify.equivalence" and fact.field == "src/m.py:2"
    assert fact.actual == (
        "1 of 4 name an input that tells them apart (`model-a`: `with xs=[2, 1] the list is"
        "\\nleft \\x60unsorted\\x60`), 2 find none, 1 could not answer (`model-d`)"
    )
    assert fact.message.startswith("the verifiers on disputed mutant m1a2b3c4d: 1 of 4 ")
    assert fact.message.endswith("a person decides (verification only adds to this REVIEW)")


def test_every_verifier_is_asked_the_equivalence_prompt() -> None:
    seen: list[tuple[list[str], str]] = []

    class Fake:
        name = "fake"

        def __call__(self, request: Request, prompt: str) -> Answer:
            seen.append((request.questions, prompt))
            return Answer(self.name, 0.1, status="verified-clean")

    verification = ask(request(), MUTANT, "why", [Fake()], threshold=None, rootdir=None)
    ((questions, prompt),) = seen
    assert questions == [QUESTION] and "Line 2: `xs.sort()`" in prompt
    assert verification.voters == 1 and not verification.confirmed


def test_the_fact_when_nobody_names_an_input_and_nobody_failed() -> None:
    answers = [
        Answer("model-a", 1.0, status="verified-clean"),
        Answer("model-b", 1.0, findings=[Finding("src/m.py", 3, "return sorted(xs)", "elsewhere")]),
    ]
    fact = equivalence_fact("src/m.py", {"line": "2"}, vote(answers, FILES, threshold=None))
    assert fact == Fact(
        check="verify.equivalence",
        field="src/m.py:2",
        expected="the verifiers find no input that tells the disputed mutant from the function",
        actual="0 of 2 name an input that tells them apart, 2 find none",
        message=(
            "the verifiers on disputed mutant : 0 of 2 name an input that tells them apart, "
            "2 find none; a person decides (verification only adds to this REVIEW)"
        ),
    )


def test_the_fact_keeps_each_verifiers_first_reason_on_the_line() -> None:
    first = Finding("src/m.py", 2, "xs.sort()", "xs=[2, 1]")
    again = Finding("src/m.py", 2, "sort", "xs=[3, 1]")
    answers = [
        Answer("a", 1.0, findings=[first]),
        Answer("b", 1.0, findings=[again]),
        Answer("c", 1.0, findings=[again]),
        Answer("d", 1.0, error="broke"),
        Answer("e", 1.0, error="also"),
    ]
    verification = vote(answers, FILES, threshold=None)
    fact = equivalence_fact("src/m.py", {"id": "m9", "line": 2}, verification)
    assert fact.actual == (
        "3 of 5 name an input that tells them apart (`a`: `xs=[2, 1]`; `b`: `xs=[2, 1]`; "
        "`c`: `xs=[2, 1]`), 0 find none, 2 could not answer (`d`, `e`)"
    )
    assert (
        fact.message
        == f"the verifiers on disputed mutant m9: {fact.actual}; a person decides (verification only adds to this REVIEW)"
    )


def test_the_fact_of_a_mutant_without_a_line_or_voters() -> None:
    fact = equivalence_fact("src/m.py", {}, vote([], FILES, threshold=None))
    assert (fact.field, fact.actual) == (
        "src/m.py:0",
        "0 of 0 name an input that tells them apart, 0 find none",
    )
