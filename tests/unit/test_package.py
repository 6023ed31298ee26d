"""The package's public names, imported on first use."""

from __future__ import annotations

import pytest

import pytest_quest
from pytest_quest.core.model import Verdict


def test_a_public_name_is_the_object_of_its_home_module() -> None:
    assert pytest_quest.__getattr__("Verdict") is Verdict


def test_an_unknown_name_raises_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError) as raised:
        pytest_quest.__getattr__("NoSuchName")
    assert str(raised.value) == "module 'pytest_quest' has no attribute 'NoSuchName'"
    assert "NoSuchName" not in vars(pytest_quest)


def test_getattr_keeps_the_name_for_the_next_lookup() -> None:
    pytest_quest.__dict__.pop("Fact", None)
    value = pytest_quest.__getattr__("Fact")
    assert vars(pytest_quest)["Fact"] is value
    assert value.__module__ == "pytest_quest.core.model"
