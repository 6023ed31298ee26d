"""``--quest-since REF`` in-process: next, status, export and check limited to changed functions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app_calc import CALC, CLAMP, DOUBLE, SIGN, TEST_DOUBLE, CalcProject

from pytest_quest.app.check import check
from pytest_quest.app.context import RunData
from pytest_quest.app.export import export
from pytest_quest.app.next import next_quest
from pytest_quest.app.options import check_since_option
from pytest_quest.app.status import status
from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import State
from pytest_quest.report.ci import CheckOutcome, step_summary
from tests.support.gitrepo import git, init_repo

# sign's body changed; clamp only gains comments and blank lines; double moves to the end.
CHANGED_SIGN = (
    CALC.replace("def double(x):\n    return x * 2\n\n\n", "")
    .replace("if x < 0:", "if x <= 0:")
    .replace("    if x > high:", "    # above the range\n\n    if x > high:  # too high")
    + "\n\ndef double(x):\n    return x * 2\n"
)


@pytest.fixture
def repo(calc: CalcProject) -> CalcProject:
    """The scanned calc project (double PASS, sign and clamp TODO), committed on main."""
    init_repo(calc.root)
    return calc


def check_run(project: CalcProject) -> RunData:
    source = project.measured({"double": [TEST_DOUBLE]})
    return RunData(outcomes={TEST_DOUBLE: "passed"}, analyze=lambda: source)


def test_status_next_and_export_show_only_the_changed_function(repo: CalcProject) -> None:
    repo.write_source(CHANGED_SIGN)
    output = status(repo.context("status", since="main", format="text"))
    listed = status(repo.context("status", since="main")).data["quests"]
    assert [q["id"] for q in listed] == [SIGN]
    assert output.data["since"]["changed"] == [SIGN]
    assert output.data["since"]["new"] == [] and output.data["since"]["untracked"] == []
    assert (output.data["remaining"], output.data["counts"]["TODO"]) == (1, 1)
    assert output.lines[0].startswith("since main (") and output.lines[0].endswith(
        "1 function changed"
    )
    shown = next_quest(repo.context("next", since="main"))
    assert shown.data["quest"]["id"] == SIGN and shown.data["since"]["changed"] == [SIGN]
    assert shown.lines[0] == output.lines[0]
    written = export(repo.context("export", since="main", export_to="report.json"))
    report = json.loads((repo.root / "report.json").read_text())
    assert [q["id"] for q in report["quests"]] == [SIGN]
    assert written.data["since"]["changed"] == [SIGN] and written.lines[0] == output.lines[0]


def test_next_leaves_an_unchanged_active_quest_for_a_changed_one(repo: CalcProject) -> None:
    next_quest(repo.context("next", quest_id=CLAMP))
    assert repo.context("next").store.load().active == CLAMP
    repo.write_source(CHANGED_SIGN)
    shown = next_quest(repo.context("next", since="main"))
    assert shown.data["quest"]["id"] == SIGN
    assert repo.context("next").store.load().active == SIGN
    with pytest.raises(QuestUsageError, match=rf"quest '{CLAMP}' did not change since main"):
        next_quest(repo.context("next", since="main", quest_id=CLAMP))
    assert next_quest(repo.context("next", since="main", quest_id=SIGN)).data["quest"]["id"] == SIGN


def test_nothing_changed_means_nothing_remains(repo: CalcProject) -> None:
    shown = next_quest(repo.context("next", since="main"))
    assert shown.data["quest"] is None and shown.data["remaining"] == 0
    assert shown.lines[-1] == "nothing remains: every quest is settled"
    assert shown.data["since"]["changed"] == []


def test_check_require_pass_fails_with_one_fact_per_changed_function(repo: CalcProject) -> None:
    repo.write_source(CHANGED_SIGN + "\n\ndef triple(x):\n    return x * 3\n")
    output = check(repo.context("check", run=check_run(repo), since="main", require_pass=True))
    assert output.exitcode == 1 and output.data["ok"] is False
    since = output.data["since"]
    assert since["require_pass"] is True
    assert since["changed"] == [SIGN, "src/pkg/calc.py::triple"]
    assert since["new"] == ["src/pkg/calc.py::triple"]
    failing = {item["id"]: item for item in since["not_pass"]}
    assert (
        failing[SIGN]["state"] == "TODO"
        and failing["src/pkg/calc.py::triple"]["state"] == "untracked"
    )
    for item in failing.values():
        assert len(item["facts"]) == 1 and item["facts"][0]["check"] == "since.require_pass"
    assert failing[SIGN]["facts"][0]["field"] == "src/pkg/calc.py:1"
    assert failing[SIGN]["facts"][0]["expected"] == "PASS (changed since main)"
    assert failing[SIGN]["facts"][0]["actual"].endswith(
        "it was issued for the code before this change, so a submit is REVIEW "
        "(identity.changed) until a person re-issues it with --quest-reopen"
    )
    assert "not in the ratchet file" in failing["src/pkg/calc.py::triple"]["facts"][0]["actual"]
    assert f"  NOT PASS {SIGN} (TODO)" in output.lines and output.lines[-1] == "check: FAILED"
    # Without --quest-require-pass the same facts are shown and the check passes.
    shown = check(repo.context("check", run=check_run(repo), since="main"))
    assert shown.exitcode == 0 and len(shown.data["since"]["not_pass"]) == 2
    assert shown.lines[-1] == "check: OK"


def test_check_require_pass_passes_when_every_changed_function_is_pass(repo: CalcProject) -> None:
    repo.write_source(CALC.replace("return x * 2", "return 2 * x"))
    output = check(repo.context("check", run=check_run(repo), since="main", require_pass=True))
    assert output.exitcode == 0, output.lines
    assert output.data["since"]["changed"] == [DOUBLE] and output.data["since"]["not_pass"] == []


def test_a_regressed_pass_is_not_pass_and_github_gets_annotations(repo: CalcProject) -> None:
    repo.write_source(CALC.replace("return x * 2", "return 2 * x"))
    source = repo.measured({})  # no passing test covers double any more
    ran = {"tests/test_other.py::test_other": "passed"}
    run = RunData(outcomes=ran, analyze=lambda: source)
    environ = {"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "main"}
    git(repo.root, "update-ref", "refs/remotes/origin/main", "HEAD")
    ctx = repo.context("check", run=run, require_pass=True, format="text")
    ctx.environ = environ
    output = check(ctx)
    assert output.exitcode == 1
    assert output.data["since"]["ref"] == "origin/main"
    (item,) = output.data["since"]["not_pass"]
    assert item["id"] == DOUBLE and item["state"] == "PASS"
    assert item["facts"][0]["actual"] == "PASS, but regressed (see its regression facts)"
    assert any(
        line.startswith(
            "::error file=src/pkg/calc.py,line=1,title=pytest-quest%3A src/pkg/calc.py%3A%3Adouble::"
        )
        for line in output.lines
    )
    summary = step_summary(CheckOutcome(output.data))
    assert "### Changed since `origin/main` (required to be PASS)" in summary
    assert "1 function changed, 1 not PASS." in summary
    assert (
        "| `src/pkg/calc.py::double` | PASS | `src/pkg/calc.py:1` | PASS, but regressed" in summary
    )


def test_require_pass_needs_a_ref_outside_a_pull_request(repo: CalcProject) -> None:
    with pytest.raises(QuestUsageError, match="--quest-require-pass needs --quest-since REF"):
        check(repo.context("check", run=check_run(repo), require_pass=True))


@pytest.mark.parametrize(
    ("command", "since", "require_pass", "message"),
    [
        ("submit", "main", False, "--quest-since is an option of next, status, check, export"),
        ("scan", "main", False, "--quest-since is an option of next"),
        ("next", None, True, "--quest-require-pass is an option of `pytest --quest check`"),
    ],
)
def test_the_options_fit_only_their_commands(
    command: str, since: str | None, require_pass: bool, message: str
) -> None:
    with pytest.raises(QuestUsageError, match=message):
        check_since_option(command, since, require_pass)
    for fitting in ("next", "status", "check", "export", "audit"):
        check_since_option(fitting, "main", False)
    check_since_option("check", "main", True)


def test_the_untracked_note(repo: CalcProject, tmp_path: Path) -> None:
    repo.write_source(CALC + "\n\ndef triple(x):\n    return x * 3\n")
    output = status(repo.context("status", since="main"))
    assert output.data["quests"] == [] and output.data["since"]["untracked"] == [
        "src/pkg/calc.py::triple"
    ]
    assert output.lines[0].endswith(
        "1 function changed; 1 not in the ratchet file (`pytest --quest scan` adds them)"
    )


def test_a_changed_quest_waiting_for_a_person_is_not_pass(repo: CalcProject) -> None:
    def review(ratchet: Any) -> None:
        ratchet.quests[SIGN].state = State.REVIEW

    repo.context("status").store.update(review)
    repo.write_source(CHANGED_SIGN)
    output = check(repo.context("check", run=check_run(repo), since="main", require_pass=True))
    (item,) = output.data["since"]["not_pass"]
    assert (item["id"], item["state"]) == (SIGN, "REVIEW")
    assert item["facts"][0]["actual"] == "REVIEW: a person settles it (docs/ci.md#person-actions)"
