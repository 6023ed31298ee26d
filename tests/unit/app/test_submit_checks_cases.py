"""app/submit_checks.py: a collection error of a submitted file or a conftest refused, named as
pytest names it; others left to the gate."""

from __future__ import annotations

import pytest

from pytest_quest.app.submit_checks import NotCollected, errors_where, refuse_uncollected
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.run import CollectionError, RunReport

TAIL = (
    ": fix it (files not yours: a submit without test paths searches `testpaths`, name the "
    "folders the scan was run with), then submit again; nothing was judged, no try spent"
)


def test_no_collection_error_is_no_refusal() -> None:
    refuse_uncollected(RunReport(), ["tests/test_new.py"])  # no error


def test_an_error_in_a_file_not_submitted_is_left_to_the_gate() -> None:
    run = RunReport(collection_errors=[CollectionError("tests/test_old.py", 3, "E")])
    refuse_uncollected(run, ["tests/test_new.py"])  # no error


def test_an_error_in_a_submitted_file_is_refused() -> None:
    run = RunReport(
        collection_errors=[
            CollectionError("tests/test_new.py", 7, "SyntaxError: invalid syntax"),
            CollectionError("tests/test_old.py", 3, "E"),
        ]
    )
    with pytest.raises(NotCollected) as caught:
        refuse_uncollected(run, ["tests/test_new.py"])
    assert isinstance(caught.value, QuestUsageError)
    assert str(caught.value) == (
        "collection error in test files new or changed since the scan "
        "(tests/test_new.py:7: SyntaxError: invalid syntax)" + TAIL
    )


def test_errors_in_conftests_are_refused_and_counted() -> None:
    run = RunReport(
        collection_errors=[
            CollectionError("tests/conftest.py", 0, "ImportError: x"),
            CollectionError("conftest.py", 2, "NameError: y"),
            CollectionError("tests/my_conftest.py", 2, "E"),
        ]
    )
    with pytest.raises(NotCollected) as caught:
        refuse_uncollected(run, [])
    assert str(caught.value) == (
        "2 collection errors in test files new or changed since the scan "
        "(tests/conftest.py: ImportError: x; conftest.py:2: NameError: y)" + TAIL
    )


def test_errors_where_names_a_few_then_how_many_more() -> None:
    errors = [CollectionError(f"t{n}.py", n, "E") for n in range(7)]
    assert (
        errors_where(errors)
        == "t0.py: E; t1.py:1: E; t2.py:2: E; t3.py:3: E; t4.py:4: E; and 2 more"
    )
