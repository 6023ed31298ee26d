"""The quest ini option names on their own, registered through an entry point of their own.

With ``-p no:quest`` pytest would warn of each ``quest_*`` ini key ("Unknown config
option"), an error under ``filterwarnings = error``.  This ``quest_ini`` entry point
only names the keys; registering them twice is harmless.
"""

from __future__ import annotations

import pytest

from pytest_quest.plugin.option_table import add_ini_names


def pytest_addoption(parser: pytest.Parser) -> None:
    add_ini_names(parser)
