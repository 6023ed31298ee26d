"""A pytest plugin for benchmarks/coverage_carriers.py: each test's children write their own coverage data.

Loaded with ``-p tests.support.carriers`` under ``coverage run`` with
``PYTEST_QUEST_SELFCOV=all`` (every test's children measured, tests/conftest.py)
and ``QUEST_CARRIERS_DATA`` naming a folder: the processes each test starts,
and those its module's fixtures start, save their data under
``<folder>/<file>/<test>`` (``_module`` for the fixtures), by rewriting the data
file in coverage.py's subprocess configuration (``COVERAGE_PROCESS_CONFIG``).
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

FOLDER_VARIABLE = "QUEST_CARRIERS_DATA"
CONFIG_VARIABLE = "COVERAGE_PROCESS_CONFIG"
MODULE = "_module"
MARKED = "marked"


def safe(text: str) -> str:
    """`text` as one folder name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:150]


def config_saving_in(raw: str, folder: Path) -> str:
    """coverage.py's serialised subprocess configuration `raw`, its data file moved into `folder`."""
    config = json.loads(base64.b64decode(raw))
    folder.mkdir(parents=True, exist_ok=True)
    config["data_file"] = str(folder / ".coverage")
    return base64.b64encode(json.dumps(config).encode()).decode()


def _saving(folder: Path) -> Iterator[None]:
    raw = os.environ.get(CONFIG_VARIABLE)
    with pytest.MonkeyPatch.context() as patch:
        if raw and os.environ.get(FOLDER_VARIABLE):
            patch.setenv(CONFIG_VARIABLE, config_saving_in(raw, folder))
        yield


def _root() -> Path:
    return Path(os.environ.get(FOLDER_VARIABLE, "."))


@pytest.fixture(autouse=True, scope="module")
def _carriers_module(request: pytest.FixtureRequest) -> Iterator[None]:
    yield from _saving(_root() / safe(request.node.nodeid) / MODULE)


@pytest.fixture(autouse=True)
def _carriers_test(request: pytest.FixtureRequest) -> Iterator[None]:
    path, _, name = request.node.nodeid.partition("::")
    folder = _root() / safe(path) / safe(name)
    if os.environ.get(FOLDER_VARIABLE):
        folder.mkdir(parents=True, exist_ok=True)
        # What the test's own marks say today (a test function's, or its module's).
        marked = request.node.get_closest_marker("children_measured") is not None
        (folder / MARKED).write_text("1" if marked else "0")
    yield from _saving(folder)
