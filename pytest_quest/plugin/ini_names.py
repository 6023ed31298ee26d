"""The quest ini option names on their own, registered through an entry point of their own.

``pytest -p no:quest`` turns the plugin off (its hooks, options and commands),
but a project configured for it still sets ``quest_source`` and the like; pytest
warns of each ini key no plugin registered ("Unknown config option"), and a
project with ``filterwarnings = error`` stops there. This module is the
``quest_ini`` entry point: it only names the keys, so the plugin switched off
leaves a configured project's plain runs quiet. Registering them twice (with the
plugin on) is harmless: pytest keeps one entry per name.
"""

from __future__ import annotations

import pytest

from pytest_quest.plugin.option_table import add_ini_names


def pytest_addoption(parser: pytest.Parser) -> None:
    add_ini_names(parser)
