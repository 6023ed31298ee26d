"""plugin/loaded.py: a plugin counts as loaded by its entry point's name or by ``-p MODULE``."""

from __future__ import annotations

import sys
import types

import pytest

from pytest_quest.plugin.loaded import PYTEST_COV, XDIST, loaded, pytest_cov_loaded, xdist_loaded

FAKE = "quest_fake_plugin.plugin"


@pytest.fixture
def manager() -> pytest.PytestPluginManager:
    return pytest.PytestPluginManager()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType(FAKE)
    monkeypatch.setitem(sys.modules, FAKE, module)
    return module


@pytest.mark.parametrize("name", ["quest_fake_plugin", FAKE])
def test_a_registered_module_counts_under_any_name(
    manager: pytest.PytestPluginManager, fake: types.ModuleType, name: str
) -> None:
    # Autoload registers a plugin under its entry point's name, `-p MODULE` under the module's.
    assert not loaded(manager, FAKE)
    manager.register(fake, name)
    assert loaded(manager, FAKE)


def test_a_module_never_imported_is_not_loaded(
    manager: pytest.PytestPluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "quest_absent.plugin", raising=False)
    assert not loaded(manager, "quest_absent.plugin")


def test_a_blocked_module_is_not_loaded(
    manager: pytest.PytestPluginManager, fake: types.ModuleType
) -> None:
    # Imported but blocked (``-p no:NAME``): never registered.
    manager.set_blocked("quest_fake_plugin")
    assert manager.register(fake, "quest_fake_plugin") is None
    assert not loaded(manager, FAKE)


@pytest.mark.parametrize("name", ["xdist", XDIST])
def test_xdist_by_entry_point_or_by_p(manager: pytest.PytestPluginManager, name: str) -> None:
    plugin = pytest.importorskip(XDIST)
    assert not xdist_loaded(manager)
    manager.register(plugin, name)
    assert xdist_loaded(manager)
    assert not pytest_cov_loaded(manager)


@pytest.mark.parametrize("name", ["pytest_cov", PYTEST_COV])
def test_pytest_cov_by_entry_point_or_by_p(manager: pytest.PytestPluginManager, name: str) -> None:
    plugin = pytest.importorskip(PYTEST_COV)
    assert not pytest_cov_loaded(manager)
    manager.register(plugin, name)
    assert pytest_cov_loaded(manager)
    assert not xdist_loaded(manager)
