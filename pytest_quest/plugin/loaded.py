"""Whether pytest-xdist or pytest-cov is loaded, however it came: its entry point or ``-p``.

By entry point a plugin is registered under the entry point's name (``xdist``,
``pytest_cov``); by ``-p xdist.plugin`` (autoload off) under its module's name.
Asking for the module object itself answers both.
"""

from __future__ import annotations

import sys

import pytest

XDIST = "xdist.plugin"
PYTEST_COV = "pytest_cov.plugin"


def loaded(manager: pytest.PytestPluginManager, module: str) -> bool:
    """`module` (a plugin's module name) is imported and registered with `manager`."""
    plugin = sys.modules.get(module)
    return plugin is not None and manager.is_registered(plugin)


def xdist_loaded(manager: pytest.PytestPluginManager) -> bool:
    return loaded(manager, XDIST)


def pytest_cov_loaded(manager: pytest.PytestPluginManager) -> bool:
    return loaded(manager, PYTEST_COV)
