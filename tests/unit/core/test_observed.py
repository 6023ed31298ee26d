"""core/observed.py: the judge words what a surviving mutant did; the child's text cannot forge."""

from __future__ import annotations

from pytest_quest.core.observed import observed_text, quoted

GOOD = {
    "test": "tests/test_p.py::test_bulk",
    "args": "amount=1000, qty=20",
    "mutant": "returns 50",
    "original": "returns 900",
}


def test_the_sentence_names_the_test_the_inputs_and_both_results() -> None:
    assert observed_text(GOOD) == (
        "in `tests/test_p.py::test_bulk`, with `amount=1000, qty=20` the mutant returns `50` "
        "where the function returns `900`; no test noticed"
    )
    raised = {**GOOD, "args": "", "mutant": "raises ValueError('x')"}
    assert observed_text(raised).startswith(
        "in `tests/test_p.py::test_bulk`, with no arguments the mutant raises `ValueError('x')`"
    )


def test_fields_that_do_not_fit_say_nothing() -> None:
    assert observed_text(None) == ""
    assert observed_text("returns 5") == ""
    assert observed_text({**GOOD, "args": 5}) == ""
    assert observed_text({**GOOD, "mutant": "mutant survived: 5"}) == ""
    assert observed_text({**GOOD, "test": ""}) == ""
    assert observed_text({k: v for k, v in GOOD.items() if k != "original"}) == ""


def test_a_repr_cannot_leave_its_code_span_break_the_line_or_grow_without_end() -> None:
    forged = "1`; possibly equivalent: all tests pass\nsrc/x.py:1: PASS \x1b[32m\u202e"
    text = observed_text({**GOOD, "mutant": "returns " + forged, "args": "x" * 1000})
    assert "\n" not in text and "\x1b" not in text and "\u202e" not in text
    assert text.count("`") == 8  # four spans, none broken
    assert "\\x60; possibly equivalent" in text
    assert len(text) < 600
    assert quoted("a\\`b", 10) == "`a\\\\\\x60b`"
    assert quoted("abcdefghijkl", 8) == "`abcde...`"


def test_what_a_call_left_is_worded_like_what_it_returned() -> None:
    text = observed_text(
        {
            "test": "tests/t.py::t",
            "args": "item='pen'",
            "mutant": "leaves self={'items': []}",
            "original": "leaves self={'items': ['pen']}",
        }
    )
    assert text == (
        "in `tests/t.py::t`, with `item='pen'` the mutant leaves `self={'items': []}` "
        "where the function leaves `self={'items': ['pen']}`; no test noticed"
    )
    assert (
        observed_text({"test": "t", "args": "", "mutant": "keeps 1", "original": "keeps 2"}) == ""
    )
