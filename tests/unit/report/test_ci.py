"""Unit tests of the check's pure parts: ``ratchet.check_ratchet`` and ``ci.py``'s reports."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_quest.core.model import Fact, FunctionFacts, Quest, Ratchet, State
from pytest_quest.core.ratchet import CheckReport, check_ratchet
from pytest_quest.core.run import CollectionError
from pytest_quest.engine import outputs
from pytest_quest.report import ci
from pytest_quest.report.escape import in_github_actions

FILE = "src/pkg/calc.py"


def quest(
    qualname: str,
    first: int,
    last: int,
    state: State = State.PASS,
    fingerprint: str = "fp",
    **kwargs: Any,
) -> Quest:
    return Quest(
        id=f"{FILE}::{qualname}",
        file=FILE,
        qualname=qualname,
        first=first,
        last=last,
        fingerprint=fingerprint,
        state=state,
        passed_at="2026-01-02T03:04:05Z" if state is State.PASS else "",
        **kwargs,
    )


def facts(
    qualname: str,
    first: int,
    last: int,
    fingerprint: str = "fp",
    missing: Iterable[int] = (),
    branches: Iterable[tuple[int, int]] = (),
    **kwargs: Any,
) -> FunctionFacts:
    return FunctionFacts(
        file=FILE,
        qualname=qualname,
        ordinal=1,
        start=first,
        first=first,
        last=last,
        fingerprint=fingerprint,
        statements=kwargs.pop("statements", 3),
        branches=kwargs.pop("n_branches", 2),
        missing_lines=list(missing),
        missing_branches=list(branches),
        **kwargs,
    )


def ratchet(*quests: Quest) -> Ratchet:
    return Ratchet(quests={q.id: q for q in quests})


def test_fully_covered_pass_functions_are_fine_and_todo_is_not_checked() -> None:
    report = check_ratchet(
        ratchet(quest("a", 1, 3), quest("b", 5, 9, state=State.TODO)),
        [facts("a", 1, 3), facts("b", 5, 9, missing=[6])],
    )
    assert report.checked == 1
    assert report.regressions == [] and report.changed == [] and report.untracked == []


def test_regression_facts_name_quest_and_date() -> None:
    report = check_ratchet(
        ratchet(quest("a", 1, 4)), [facts("a", 1, 4, missing=[3], branches=[(2, 3), (2, -1)])]
    )
    (regression,) = report.regressions
    assert regression.changed is False
    assert [(f.check, f.field, f.message) for f in regression.facts] == [
        (
            "coverage.line",
            f"{FILE}:3",
            f"line 3 not covered [{FILE}::a, PASS since 2026-01-02T03:04:05Z]",
        ),
        (
            "coverage.branch",
            f"{FILE}:2->3",
            f"branch 2->3 not taken [{FILE}::a, PASS since 2026-01-02T03:04:05Z]",
        ),
        (
            "coverage.branch",
            f"{FILE}:2->exit",
            f"branch 2->exit not taken [{FILE}::a, PASS since 2026-01-02T03:04:05Z]",
        ),
    ]


def test_changed_gone_excluded_and_untracked() -> None:
    report = check_ratchet(
        ratchet(
            quest("same", 1, 3, fingerprint="old"),
            quest("worse", 5, 8, fingerprint="old"),
            quest("gone", 10, 12),
            quest("pragma", 20, 24, excluded_lines=[21]),
        ),
        [
            facts("same", 1, 3, fingerprint="new"),
            facts("worse", 5, 9, fingerprint="new", missing=[9]),
            # moved down by 2: line 21 -> 23 is the old exclusion, 24 is new
            facts("pragma", 22, 26, excluded_lines=[23, 24]),
            facts("newcomer", 30, 31),
            facts("empty", 40, 40, statements=0),
        ],
    )
    assert report.changed == [f"{FILE}::same"]
    regressions = {r.quest.qualname: r for r in report.regressions}
    assert set(regressions) == {"worse", "gone", "pragma"}
    assert regressions["worse"].changed is True
    assert [f.check for f in regressions["worse"].facts] == ["coverage.line", "ratchet.changed"]
    (gone,) = regressions["gone"].facts
    assert gone.check == "ratchet.gone"
    assert "run `pytest --quest scan` to record the removal" in gone.message
    assert [(f.check, f.field) for f in regressions["pragma"].facts] == [
        ("ratchet.excluded", f"{FILE}:24")
    ]
    assert report.untracked == [f"{FILE}::newcomer"]


def test_check_outcome_exit_statuses() -> None:
    base = ratchet(quest("a", 1, 3))
    clean = check_ratchet(base, [facts("a", 1, 3), facts("extra", 5, 6)])
    assert ci.check_outcome(clean, base, False, {"t::ok": "passed"}).exitcode == 0
    strict = ci.check_outcome(clean, base, True, {})
    assert strict.exitcode == 1 and strict.data["ok"] is False
    failing = ci.check_outcome(clean, base, False, {"t::bad": "failed", "t::err": "error"})
    assert failing.exitcode == 1
    assert failing.data["tests_failed"] == ["t::bad", "t::err"]
    assert failing.lines[-1] == "check: FAILED"
    broken = ci.interrupted([CollectionError(file="tests/t.py", line=3, message="boom")], base)
    assert broken.exitcode == 2
    assert broken.data["collection_errors"] == [
        {"file": "tests/t.py", "line": 3, "message": "boom"}
    ]
    assert broken.lines[1] == "  tests/t.py:3: boom"


def test_many_collection_errors_are_summarised_in_text_and_kept_whole_in_json() -> None:
    errors = [CollectionError(file=f"tests/t{n}.py", line=1, message="boom") for n in range(12)]
    broken = ci.interrupted(errors, ratchet(quest("a", 1, 3)))
    assert broken.lines[0].startswith("check: not run: 12 collection errors stopped the suite")
    assert broken.lines[1:] == [f"  tests/t{n}.py:1: boom" for n in range(10)] + [
        "  ... and 2 more"
    ]
    assert len(broken.data["collection_errors"]) == 12
    one = ci.interrupted(errors[:1], ratchet(quest("a", 1, 3)))
    assert one.lines[0].startswith("check: not run: 1 collection error stopped the suite")


def test_workflow_annotations_exact_text_and_escaping() -> None:
    base = ratchet(quest("a", 1, 3))
    report = check_ratchet(base, [facts("a", 1, 3, missing=[2]), facts("b", 5, 6)])
    assert ci.workflow_annotations(report, strict=False) == [
        (
            f"::error file={FILE},line=2,title=pytest-quest regression%3A a::"
            f"line 2 not covered [{FILE}::a, PASS since 2026-01-02T03:04:05Z]"
        ),
        (
            f"::warning file={FILE},title=pytest-quest%3A untracked function::"
            f"{FILE}::b is not in the ratchet file; run `pytest --quest scan` to add it"
        ),
    ]
    assert ci.workflow_annotations(report, strict=True)[1].startswith("::error ")
    assert ci.workflow_command("error", "a,b:c.py", 7, "t", "50%\nnext") == (
        "::error file=a%2Cb%3Ac.py,line=7,title=t::50%25%0Anext"
    )


def test_fact_location() -> None:
    assert ci.fact_location(Fact("c", "src/a.py:41->44", "", "")) == ("src/a.py", 41)
    assert ci.fact_location(Fact("c", "src/a.py:7", "", "")) == ("src/a.py", 7)
    assert ci.fact_location(Fact("c", "tests/x.py::test_a", "", "")) == ("tests/x.py::test_a", 0)


def _unescape(text: str) -> str:
    return text.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


@given(st.text())
def test_escaped_messages_stay_on_one_line_and_round_trip(message: str) -> None:
    command = ci.workflow_command("error", "f.py", 1, "t", message)
    assert "\n" not in command and "\r" not in command
    assert _unescape(command.split("::", 2)[2]) == message


def test_step_summary_and_unwritable_file(tmp_path: Path) -> None:
    base = ratchet(quest("a", 1, 3))
    report = check_ratchet(base, [facts("a", 1, 3, missing=[2, 3]), facts("b", 5, 6)])
    outcome = ci.check_outcome(report, base, False, {"t::bad|x": "failed"})
    text = ci.step_summary(outcome)
    assert text.startswith("## pytest-quest check failed\n")
    # The quest and its date once, its facts under it.
    assert (
        f"- `{FILE}::a`: PASS since 2026-01-02T03:04:05Z\n"
        f"  - `{FILE}:2`: line 2 not covered\n"
        f"  - `{FILE}:3`: line 3 not covered\n"
    ) in text
    assert text.count("2026-01-02T03:04:05Z") == 1
    assert "### Untracked functions\n" in text
    assert "- `t::bad|x`" in text  # a code span in a list, not a table: the pipe is harmless
    target = tmp_path / "summary.md"
    assert outputs.append_step_summary(str(target), text) is None
    assert outputs.append_step_summary(str(target), text) is None
    assert target.read_text() == text * 2
    problem = outputs.append_step_summary(str(tmp_path / "missing" / "s.md"), text)
    assert problem is not None and "GITHUB_STEP_SUMMARY" in problem


def test_in_github_actions() -> None:
    assert in_github_actions({"GITHUB_ACTIONS": "true"})
    assert not in_github_actions({"GITHUB_ACTIONS": "false"})
    assert not in_github_actions({})


def test_many_functions_changed_since_pass_take_one_line_and_json_keeps_them_all() -> None:
    changed = [f"{FILE}::f{number}" for number in range(95)]
    outcome = ci.check_outcome(CheckReport(changed=changed, checked=95), ratchet(), False, {})
    lines = [line for line in outcome.lines if "changed since PASS" in line]
    assert lines == [
        "changed since PASS, still fully covered: 95 functions: "
        + "; ".join(changed[:5])
        + "; and 90 more (--quest-format json lists them all)"
    ]
    assert outcome.data["changed"] == changed
    one = ci.check_outcome(CheckReport(changed=changed[:1], checked=1), ratchet(), False, {})
    assert f"changed since PASS, still fully covered: 1 function: {FILE}::f0" in one.lines


def test_a_regressions_facts_are_listed_under_it_without_repeating_it() -> None:
    base = ratchet(quest("a", 1, 3))
    report = check_ratchet(base, [facts("a", 1, 3, missing=[2, 3])])
    lines = ci.check_outcome(report, base, False, {}).lines
    start = next(i for i, line in enumerate(lines) if line.startswith("REGRESSION"))
    assert lines[start : start + 3] == [
        f"REGRESSION {FILE}::a (PASS since 2026-01-02T03:04:05Z)",
        f"  {FILE}:2: line 2 not covered",
        f"  {FILE}:3: line 3 not covered",
    ]
    # A CI annotation stands alone: it still names the quest and its date.
    annotations = ci.workflow_annotations(report, strict=False)
    assert all(f"[{FILE}::a, PASS since 2026-01-02T03:04:05Z]" in a for a in annotations)
