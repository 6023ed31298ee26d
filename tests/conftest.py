"""Shared fixtures; the helpers themselves live in ``tests/support``.

End-to-end tests run pytest in a child process (``tests.support.runner``):
the plugin starts coverage.py, and two tracers must never share a process
with the coverage measuring this suite.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support import profiles
from tests.support.projects import Project
from tests.support.runner import (
    END_TO_END_FOLDERS,
    SELF_COVERAGE_SWITCH,
    SETTINGS,
    TEMP_VARIABLE,
    children_self_coverage,
    private_tmpdir,
)
from tests.support.warm_bytecode import warm_if_needed

settings.load_profile(profiles.FULL)

# The session's self-coverage switch (run-tests.sh), before any test changes it.
_SESSION_SELF_COVERAGE = os.environ.get(SELF_COVERAGE_SWITCH)


# Test data: vendored projects (tests/acceptance/projects) are run in child pytests only.
collect_ignore = ["acceptance/projects"]


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the xdist controller or a plain run
        warm_if_needed()
    # The fast loop runs a quarter of each property test's examples (tests/support/profiles.py).
    if config.getoption("hypothesis_profile", None) is None and profiles.is_fast_loop(
        config.option.markexpr
    ):
        settings.load_profile(profiles.FAST)


# Which sandbox engines a judge may start (engine/sandbox.py); empty: none.
SANDBOX_ENGINES = "PYTEST_QUEST_SANDBOX_ENGINES"


@pytest.fixture(autouse=True, scope="session")
def _no_inherited_settings() -> Iterator[None]:
    """Only what a test sets of SETTINGS reaches its child pytest (module templates too)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in SETTINGS:
            patch.delenv(name, raising=False)
        yield


@pytest.fixture(autouse=True, scope="session")
def _children_temp_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The processes the tests start keep their temporary files in this run's basetemp.

    A gate child or judge killed with SIGKILL leaves its temporary folders
    (docs/judge.md): here they go with pytest's old basetemps, not into /tmp.
    This covers what module and session fixtures start; `children_tmpdir` gives
    each test a folder of its own.
    """
    tempfile.gettempdir()  # this process's own temporary files stay where they were
    # Found again, not made anew, when session fixtures are set up a second time in one
    # process (the gate's mutation child tears them down after each test it runs).
    root = tmp_path_factory.getbasetemp() / "children-tmp"
    root.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(TEMP_VARIABLE, str(private_tmpdir(root, "session")))
        yield root


@pytest.fixture(autouse=True)
def children_tmpdir(
    _children_temp_root: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The TMPDIR of every process this test starts (tests/support/runner.py)."""
    folder = private_tmpdir(_children_temp_root, request.node.name)
    monkeypatch.setenv(TEMP_VARIABLE, str(folder))
    switch = _children_switch(request.node)
    if switch is not None:
        monkeypatch.setenv(SELF_COVERAGE_SWITCH, switch)
    return folder


def _children_switch(node: pytest.Item | pytest.Collector) -> str | None:
    folder = Path(node.path).resolve().relative_to(Path(__file__).parent).parts[0]
    return children_self_coverage(
        _SESSION_SELF_COVERAGE,
        end_to_end=folder in END_TO_END_FOLDERS,
        marked=node.get_closest_marker("children_measured") is not None,
    )


@pytest.fixture(autouse=True, scope="module")
def _module_children_measurement(request: pytest.FixtureRequest) -> Iterator[None]:
    """What a module's fixtures start (a project scanned once per module) follows the module's mark."""
    switch = _children_switch(request.node)
    with pytest.MonkeyPatch.context() as patch:
        if switch is not None:
            patch.setenv(SELF_COVERAGE_SWITCH, switch)
        if request.node.get_closest_marker("unsandboxed") is not None:
            patch.setenv(SANDBOX_ENGINES, "")
        yield


@pytest.fixture(autouse=True)
def _unsandboxed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test marked `unsandboxed`: its projects are scanned and judged where no sandbox starts."""
    if request.node.get_closest_marker("unsandboxed") is not None:
        monkeypatch.setenv(SANDBOX_ENGINES, "")


@pytest.fixture(autouse=True)
def _no_sandbox_entered() -> Iterator[None]:
    """Each test starts with no sandbox engine entered in this process, and leaves none.

    A use case run in-process enters the engine its policy asks for
    (`engine/sandbox.py`); left there, every later test's gate children would
    start in it, and a run of the suite would depend on its order.
    """
    from pytest_quest.engine import sandbox

    saved = list(sandbox._ACTIVE)
    sandbox._ACTIVE[:] = [None]
    yield
    sandbox._ACTIVE[:] = saved


@pytest.fixture
def project(pytester: pytest.Pytester, request: pytest.FixtureRequest) -> Project:
    """A throwaway project in the pytester folder (the current directory)."""
    autoload = request.node.get_closest_marker("all_plugins") is not None
    return Project(pytester.path, autoload=autoload)
