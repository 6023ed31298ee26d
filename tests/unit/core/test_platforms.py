"""The quest commands refuse, with a clear message, a system the judge cannot run on."""

from __future__ import annotations

import json
import sys
import types

import pytest

from pytest_quest.core.platforms import UNSUPPORTED, unsupported_reason
from pytest_quest.plugin import hooks


@pytest.mark.parametrize("platform", ["linux", "darwin", "freebsd14"])
def test_posix_systems_are_supported(platform: str) -> None:
    assert unsupported_reason(platform) is None


@pytest.mark.parametrize("platform", UNSUPPORTED)
def test_windows_gets_a_reason_and_a_way_out(platform: str) -> None:
    reason = unsupported_reason(platform)
    assert reason is not None
    assert platform in reason
    assert "POSIX" in reason
    assert "WSL" in reason


def test_a_quest_command_on_windows_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(hooks, "sys", types.SimpleNamespace(platform="win32", stdout=sys.stdout))
    with pytest.raises(pytest.UsageError, match="need a POSIX system"):
        hooks._refuse_unsupported_platform("status", json_mode=True)
    data = json.loads(capsys.readouterr().out)
    assert data["command"] == "status"
    assert "WSL" in data["error"]


def test_a_quest_command_on_linux_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hooks, "sys", types.SimpleNamespace(platform="linux", stdout=sys.stdout))
    hooks._refuse_unsupported_platform("status", json_mode=False)  # returns, raises nothing
