"""What an agent following the README's prompt meets: answers it can act on, no judgement it did
not ask for (benchmarks/dogfood/README.md lists what an agent met on this repository)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.test_reliability import ENDLESS_TEST, interrupt_when_started
from tests.support.projects import Project, calc_project, qid, scanned_template, scanned_unsandboxed

SIGN = qid("calc", "sign")
SIGN_WEAK = """\
from pkg.calc import sign


def test_sign_weak():
    assert sign(-5) is not None
    assert sign(5) is not None
"""


@pytest.fixture(scope="module")
def calc_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, Any]]:
    return scanned_template(tmp_path_factory, calc_project)


def test_a_changed_return_is_shown_as_what_the_mutant_does(
    project: Project, calc_template: tuple[Project, dict[str, Any]]
) -> None:
    # A weak test of `sign`: `return.changed` survives, and its fact says what the
    # mutant did, not the child's instrumentation.
    project.fill_from(calc_template[0])
    project.test("test_sign", SIGN_WEAK)
    _, data = project.run_json("--quest", "submit", "--quest-id", SIGN)
    facts = [f["actual"] for f in data["quest"]["facts"] if "operator return.changed" in f["actual"]]
    assert facts, data["quest"]["facts"]
    assert facts[0].startswith(
        "every covering test passes with `return -1` -> "
        "another value of its kind returned in place of `-1` (operator return.changed"
    ), facts
    assert "pytest_quest_changed" not in str(data)


@pytest.mark.unsandboxed  # the pid the test writes in the project, seen from outside
def test_an_interrupted_submit_answers_verdict_none(
    project: Project, calc_template: tuple[Project, dict[str, Any]]
) -> None:
    # The prompt says: act on `verdict`, NONE meaning nothing was judged: submit again.
    project.fill_from(calc_template[0])
    scanned_unsandboxed(project)
    pid_file = project.path / "test-pid"
    project.test("test_sign", ENDLESS_TEST.format(pid_file=str(pid_file)))
    _, out = interrupt_when_started(
        project, pid_file, "--quest", "submit", "--quest-id", SIGN, "--quest-format", "json"
    )
    data = json.loads(out[out.index("{") :])
    assert data["verdict"] == "NONE", data
    assert "no try spent" in data["error"], data
