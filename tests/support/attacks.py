"""Attacks on the judge from a throwaway project: scanned once per module, one submit each.

A test copies the module's scanned project, writes its attack after the scan
(tests, helper scripts), submits the judged quest once, and checks the verdict
and that no other entry of quest.json changed.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.projects import Project, scanned_template
from tests.support.quests import ratchet_view
from tests.support.runner import run_quest

# A module with two quests: the attacks judge `sign`; `level` is a bystander.
CALC_SOURCE = """\
def level(x):
    if x > 10:
        return "high"
    return "low"


def sign(x):
    if x > 0:
        return "positive"
    if x < 0:
        return "negative"
    return "zero"
"""

LEVEL = "src/pkg/calc.py::level"
SIGN = "src/pkg/calc.py::sign"


def attack_template(
    factory: pytest.TempPathFactory, module: str, source: str
) -> tuple[Project, dict[str, Any]]:
    """A project with `source` as ``src/pkg/<module>.py`` and no tests, scanned; the scan's output."""
    return scanned_template(factory, lambda project: project.source(module, source))


def scanned_copy(template: Project, path: Path) -> tuple[Path, dict[str, Any]]:
    """A copy of `template` at `path`; its ratchet file as scanned (version 1's layout)."""
    root = Project(path).fill_from(template).path
    return root, ratchet_view((root / "quest.json").read_bytes())


def attack_fixtures(source: str) -> tuple[Any, Any]:
    """A module's ``template`` (`source` as ``src/pkg/calc.py``, scanned once per module) and
    ``scanned`` (a copy of it per test: its root) fixtures: ``template, scanned = ...``."""

    @pytest.fixture(scope="module")
    def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
        project, _ = attack_template(tmp_path_factory, "calc", source)
        return project

    @pytest.fixture
    def scanned(template: Project, tmp_path: Path) -> Path:
        root, _ = scanned_copy(template, tmp_path / "project")
        return root

    return template, scanned


def submit(root: Path, quest_id: str) -> dict[str, Any]:
    """One ``--quest submit --quest-id`` in `root`; its JSON output, which has a verdict."""
    _, data, stderr = run_quest(root, "--quest", "submit", "--quest-id", quest_id)
    assert "verdict" in data, (data, stderr)
    return data


def attack(
    root: Path, quest_id: str, test_source: str, allowed: tuple[str, ...] = ("FAIL", "REVIEW")
) -> dict[str, Any]:
    """Submit `quest_id` with the attack's tests; the other entries must be unchanged."""
    (root / "tests" / "test_attack.py").write_text(textwrap.dedent(test_source))
    before = ratchet_view((root / "quest.json").read_bytes())
    data = submit(root, quest_id)
    assert data["verdict"] in allowed, data
    assert_only_the_judged_entry_changed(root, before, quest_id)
    return data


def assert_only_the_judged_entry_changed(root: Path, before: dict[str, Any], judged: str) -> None:
    """Every quest but `judged`, the set of quests and the file-wide records are as `before`."""
    after = ratchet_view((root / "quest.json").read_bytes())
    for qid, entry in before["quests"].items():
        if qid != judged:
            assert after["quests"].get(qid) == entry, qid
    assert set(after["quests"]) == set(before["quests"])
    for field in ("test_files", "coverage_config", "excluded_functions", "removed"):
        assert after[field] == before[field], field


def checks(data: dict[str, Any]) -> list[str]:
    """The checks named by the facts of a submit's quest."""
    return [fact["check"] for fact in data["quest"]["facts"]]


# Ways a test makes a copy of the judged `sign` from its file (the module imported as
# `pkg.calc`): in memory the swap leaves each the original; under bwrap's throwaway layer
# the file holds the mutant, and each copy is the mutant too.
FRESH_COPIES = {
    "spec_from_file_location": """
        import importlib.util

        def fresh():
            spec = importlib.util.spec_from_file_location("oracle", pkg.calc.__file__)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.sign
    """,
    "runpy": """
        import runpy

        def fresh():
            return runpy.run_path(pkg.calc.__file__)["sign"]
    """,
    "compiled_under_another_name": """
        def fresh():
            with open(pkg.calc.__file__) as handle:
                text = handle.read().replace("def sign", "def oracle")
            space = {}
            exec(compile(text, "<oracle>", "exec"), space)
            return space["oracle"]
    """,
    "reload": """
        import importlib

        def fresh():
            return importlib.reload(pkg.calc).sign
    """,
}


__all__ = [
    "FRESH_COPIES",
    "assert_only_the_judged_entry_changed",
    "attack_template",
    "checks",
    "scanned_copy",
    "submit",
]
