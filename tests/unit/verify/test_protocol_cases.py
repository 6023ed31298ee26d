"""A JSON reply's discrepancies given as text or as null."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_quest.verify.protocol import Finding, ProtocolError, Reply, _reply_from_json

BASE: dict[str, Any] = {
    "status": "verified-with-corrections",
    "questions": ["Does it add?"],
    "answers": ["yes"],
    "final": " done ",
}


def test_discrepancies_as_text_are_parsed_as_the_block_is() -> None:
    reply = _reply_from_json({**BASE, "discrepancies": "- `src/m.py:3` quotes `x + 1`: wrong sign"})
    assert reply == Reply(
        status="verified-with-corrections",
        questions=("Does it add?",),
        answers=("yes",),
        findings=(Finding("src/m.py", 3, "x + 1", "quotes : wrong sign"),),
        final="done",
    )


@pytest.mark.parametrize("discrepancies", [None, "None found.", []])
def test_no_discrepancies_as_null_text_or_an_empty_list(discrepancies: object) -> None:
    reply = _reply_from_json({**BASE, "status": "verified-clean", "discrepancies": discrepancies})
    assert reply == Reply(
        status="verified-clean",
        questions=("Does it add?",),
        answers=("yes",),
        findings=(),
        final="done",
    )


def test_null_discrepancies_with_corrections_are_refused() -> None:
    with pytest.raises(ProtocolError) as caught:
        _reply_from_json({**BASE, "discrepancies": None})
    assert str(caught.value) == "status verified-with-corrections but no discrepancy listed"


def test_discrepancies_of_another_type_are_refused() -> None:
    with pytest.raises(ProtocolError) as caught:
        _reply_from_json({**BASE, "discrepancies": 3})
    assert str(caught.value) == "JSON reply: discrepancies must be a list, a string or null"
