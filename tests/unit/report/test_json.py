"""The JSON objects commands write: the envelope and a usage error's output."""

from __future__ import annotations

from pytest_quest.report.json import Output, envelope, error_output


def test_the_envelope_puts_the_schema_and_the_command_first() -> None:
    data = envelope("next", {"done": True, "command": "ignored"})
    assert data == {"schema": "pytest-quest/1", "command": "ignored", "done": True}
    assert list(envelope(None, {"done": True})) == ["schema", "command", "done"]
    assert envelope(None, {})["command"] is None


def test_an_error_output_carries_the_message_in_json_and_text_with_its_exit_status() -> None:
    assert error_output("no quest is active", 4) == Output(
        {"error": "no quest is active"}, ["ERROR: no quest is active"], 4
    )
    assert error_output("m", 4).stderr == []
