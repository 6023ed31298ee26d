"""What an agent following the README's prompt meets: answers it can act on, no judgement it did
not ask for (benchmarks/dogfood/README.md lists what an agent met on this repository)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.test_reliability import ENDLESS_TEST, interrupt_when_started
from tests.support.projects import (
    SIGN,
    Project,
    calc_project,
    qid,
    scanned_template,
    scanned_unsandboxed,
)

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
    facts = [
        f["actual"] for f in data["quest"]["facts"] if "operator return.changed" in f["actual"]
    ]
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


SIGN_TESTS = """\
from pkg.calc import sign


def test_sign(workdir):
    assert workdir.is_dir()
    assert sign(-5) == -1
    assert sign(5) == 1
"""


def test_a_session_fixture_is_set_up_once_per_run_as_pytest_does(
    project: Project, calc_template: tuple[Project, dict[str, Any]]
) -> None:
    # A session fixture that makes a folder of a fixed name fails when set up twice
    # in one process; pytest sets it up once, and so must the gate's runs.
    project.fill_from(calc_template[0])
    (project.path / "tests" / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture(scope='session')\n"
        "def workdir(tmp_path_factory):\n"
        "    return tmp_path_factory.mktemp('work', numbered=False)\n"
    )
    project.test("test_sign", SIGN_TESTS)
    _, data = project.run_json("--quest", "submit", "--quest-id", SIGN)
    assert data["verdict"] == "PASS", data["quest"]["facts"]


def test_a_flaky_fact_shows_each_runs_outcome_and_error(
    project: Project, calc_template: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(calc_template[0])
    project.test(
        "test_sign",
        """\
        from pkg.calc import sign

        RUNS = []


        def test_sign():
            RUNS.append(1)
            assert sign(-5) == -1
            assert sign(5) == 1
            assert len(RUNS) == 1, "run again in the same process"
        """,
    )
    _, data = project.run_json("--quest", "submit", "--quest-id", SIGN)
    assert data["verdict"] == "REVIEW", data
    flaky = [f for f in data["quest"]["facts"] if f["check"] == "stability.flaky"]
    assert flaky, data["quest"]["facts"]
    assert flaky[0]["actual"].startswith(
        "runs: passed, passed, failed (AssertionError: run again"
    ), flaky
    assert "run again in the same process" in flaky[0]["message"], flaky


def test_next_passes_over_a_quest_whose_code_changed_since_it_was_issued(
    project: Project, calc_template: tuple[Project, dict[str, Any]]
) -> None:
    # Any submit of `sign` now is REVIEW (identity.changed): `next` offers the next quest,
    # and says which it passed over and what a person does.
    project.fill_from(calc_template[0])
    project.source("other", "def neg(x):\n    return -x\n")
    result = project.run("--quest", "scan")
    assert result.ret == 0, result.stdout.str()
    calc = project.path / "src" / "pkg" / "calc.py"
    calc.write_text(calc.read_text().replace("return -1", "return -2"))
    _, data = project.run_json("--quest", "next")
    assert data["quest"]["id"] == qid("other", "neg"), data
    assert data["changed_since_issue"] == [SIGN]
    assert (data["remaining"], data["done"]) == (2, False)
    result, data = project.run_json("--quest", "next", "--quest-id", SIGN)
    assert data["quest"]["id"] == SIGN
    assert data["changed_since_issue"] == [SIGN]
    out = project.run("--quest", "next", "--quest-id", SIGN).stdout.str()
    assert f"note: {SIGN} was issued for code that changed since" in out, out
    assert "pytest --quest-reopen ID" in out, out


def test_status_counts_the_quests_whose_code_changed_since_they_were_issued(
    project: Project, calc_template: tuple[Project, dict[str, Any]]
) -> None:
    # A rescan keeps the code a quest was issued for: status says how many such TODO
    # quests there are and what to do, and the agent loop (next, then a bare submit)
    # judges another quest.
    project.fill_from(calc_template[0])
    project.source("other", "def neg(x):\n    return -x\n")
    assert project.run("--quest", "scan").ret == 0
    _, data = project.run_json("--quest-status")
    assert data["changed_since_issue"] == []
    calc = project.path / "src" / "pkg" / "calc.py"
    calc.write_text(calc.read_text().replace("return -1", "return -2"))
    assert project.run("--quest", "scan").ret == 0  # the issued code is kept
    _, data = project.run_json("--quest-status")
    assert data["changed_since_issue"] == [SIGN]
    out = project.run("--quest-status").stdout.str()
    assert "1 TODO quest issued for code that changed since: a submit of one is REVIEW" in out
    assert "`pytest --quest next` passes over them" in out, out
    assert "pytest --quest-reopen ID" in out, out
    _, data = project.run_json("--quest", "next")
    assert data["quest"]["id"] == qid("other", "neg"), data
    _, data = project.run_json("--quest", "submit")
    assert data["quest"]["id"] == qid("other", "neg"), data
    assert all(f["check"] != "identity.changed" for f in data["quest"]["facts"]), data


def test_next_is_done_for_an_agent_when_only_changed_quests_remain(
    project: Project, calc_template: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(calc_template[0])
    calc = project.path / "src" / "pkg" / "calc.py"
    calc.write_text(calc.read_text().replace("return -1", "return -2"))
    _, data = project.run_json("--quest", "next")
    assert data["quest"] is None, data
    assert (data["remaining"], data["done"], data["changed_since_issue"]) == (1, True, [SIGN])


def test_a_bare_submit_leaves_out_the_test_files_a_conftest_keeps_from_collection(
    project: Project, calc_template: tuple[Project, dict[str, Any]]
) -> None:
    # A vendored project under tests/ (not the agent's: its test cannot even be imported)
    # is kept out by the conftest's collect_ignore, as a plain `pytest` keeps it out.
    project.fill_from(calc_template[0])
    vendored = project.path / "tests" / "vendored" / "tests"
    vendored.mkdir(parents=True)
    (vendored / "test_other.py").write_text(
        "import not_installed_anywhere\n\n\ndef test_it():\n    pass\n"
    )
    (project.path / "tests" / "conftest.py").write_text('collect_ignore = ["vendored"]\n')
    assert project.run("-p", "no:pytest_quest").ret == 0  # what pytest itself collects passes
    project.test(
        "test_sign",
        "from pkg.calc import sign\n\n\ndef test_sign():\n    assert sign(-5) == -1\n    assert sign(5) == 1\n",
    )
    result, data = project.run_json("--quest", "submit", "--quest-id", SIGN)
    assert data.get("verdict") == "PASS", data.get("quest", {}).get("facts")


def test_a_refused_next_names_the_quest_a_plain_submit_would_judge(
    project: Project, calc_template: tuple[Project, dict[str, Any]]
) -> None:
    project.fill_from(calc_template[0])
    project.run_json("--quest", "next")  # sign is the active quest
    result, data = project.run_json("--quest", "next", "--quest-id", qid("calc", "double"))
    assert result.ret == 4, data
    assert data["error"].endswith(
        f"; the active quest is still {SIGN}, which a submit without --quest-id judges"
    ), data
