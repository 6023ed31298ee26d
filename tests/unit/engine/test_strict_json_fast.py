"""The parse skips its integer hook only when no literal could be too long: never a long one missed."""

from __future__ import annotations

import pytest

from pytest_quest.engine import strict_json

LONG = "1" * 16


@pytest.mark.parametrize(
    "text",
    [
        f'{{"a": {LONG}}}',
        f'{{"a":-{LONG}}}',
        f'{{"a": [1,{LONG}]}}',
        f'{{"a": [\n  {LONG}\n]}}',
        f'{{"a": [{LONG} , 2]}}',
        f'{{"a":\t{LONG}\r\n}}',
        f'{{"x": "sha256:{LONG}", "a": {LONG}}}',
    ],
)
def test_a_long_integer_anywhere_is_refused(text):
    assert strict_json._LONG_INT.search(text)
    with pytest.raises(strict_json.BadNumber, match="an integer of 16 digits"):
        strict_json.parse(text)


@pytest.mark.parametrize(
    "text",
    ['{"a": 123456789012345}', f'{{"a": "sha256:{LONG}ab"}}', f'{{"a": "{LONG}"}}', '{"a": 1.5}'],
)
def test_without_a_long_literal_the_hook_is_skipped_and_the_value_is_the_same(text):
    assert not strict_json._LONG_INT.search(text)
    import json

    assert strict_json.parse(text) == json.loads(text)
