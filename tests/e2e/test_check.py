"""``pytest --quest check``: the CI ratchet, end to end (subprocess runs)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support import projects
from tests.support.paths import EXAMPLE_PROJECT as EXAMPLE
from tests.support.projects import TEST_DOUBLE, TEST_SIGN, Project, scanned_template
from tests.support.quests import ratchet_view
from tests.support.runner import run_pytest

# `double` and `sign` one line lower than in projects.CALC, and `untested`.
CALC = "\n" + projects.CALC + "\n\ndef untested(x):\n    return x + 1\n"


@pytest.fixture(autouse=True)
def _no_github(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def calc_project(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_double", TEST_DOUBLE)
    project.test("test_sign", TEST_SIGN)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The project scanned once; each test copies it (`scanned`)."""
    template, data = scanned_template(tmp_path_factory, calc_project)
    assert data["counts"]["PASS"] == 2 and data["counts"]["TODO"] == 1
    return template


@pytest.fixture
def scanned(project: Project, template: Project) -> Callable[[Project], bytes]:
    """Copies the scanned project into `project`; returns a function giving its ratchet bytes."""
    project.fill_from(template)
    return lambda project: (project.path / "quest.json").read_bytes()


def by_id(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in data["regressions"]}


def test_check_passes_then_fails_on_deleted_test_then_passes_again(
    project: Project, scanned: Callable[[Project], bytes]
) -> None:
    before = scanned(project)
    result, data = project.run_json("--quest", "check")
    assert result.ret == 0, data
    assert data["command"] == "check" and data["ok"] is True
    assert data["checked"] == 2 and data["regressions"] == []

    sign_test = project.path / "tests" / "test_sign.py"
    sign_test.unlink()
    result, data = project.run_json("--quest", "check")
    assert result.ret == 1
    assert data["ok"] is False
    regression = by_id(data)["src/pkg/calc.py::sign"]
    assert regression["changed"] is False
    assert regression["passed_at"]
    fields = [(f["check"], f["field"]) for f in regression["facts"]]
    assert fields == [
        ("coverage.line", "src/pkg/calc.py:7"),
        ("coverage.line", "src/pkg/calc.py:8"),
        ("coverage.line", "src/pkg/calc.py:9"),
        ("coverage.branch", "src/pkg/calc.py:7->8"),
        ("coverage.branch", "src/pkg/calc.py:7->9"),
    ]
    # Each fact names the quest and when it passed.
    assert all("src/pkg/calc.py::sign" in f["message"] for f in regression["facts"])
    assert all(regression["passed_at"] in f["message"] for f in regression["facts"])
    assert list(by_id(data)) == ["src/pkg/calc.py::sign"]
    assert (project.path / "quest.json").read_bytes() == before

    sign_test.write_text(TEST_SIGN)
    result, data = project.run_json("--quest", "check")
    assert result.ret == 0 and data["ok"] is True
    assert (project.path / "quest.json").read_bytes() == before


def test_check_text_output_names_quest_and_lines(
    project: Project, scanned: Callable[[Project], bytes]
) -> None:
    scanned(project)
    (project.path / "tests" / "test_sign.py").write_text(
        "from pkg.calc import sign\n\ndef test_sign():\n    assert sign(5) == 1\n"
    )
    result = project.run("--quest", "check")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "check: 2 PASS functions re-measured, 1 regressed",
            # The quest and its date once, its facts under it.
            "REGRESSION src/pkg/calc.py::sign (PASS since *)",
            "  src/pkg/calc.py:8: line 8 not covered",
            "  src/pkg/calc.py:7: branch 7->8 not taken",
            "check: FAILED",
        ]
    )
    assert "::error" not in result.stdout.str()


def test_hand_edited_pass_entry_is_caught(
    project: Project, scanned: Callable[[Project], bytes]
) -> None:
    scanned(project)
    path = project.path / "quest.json"
    ratchet = ratchet_view(path.read_bytes())
    entry = ratchet["quests"]["src/pkg/calc.py::untested"]
    entry.update(
        state="PASS",
        passed_at="2026-01-01T00:00:00Z",
        covering_tests=["tests/test_double.py::test_double"],
        missing_lines=[],
        missing_branches=[],
        facts=[],
    )
    path.write_text(json.dumps(ratchet, indent=2, sort_keys=True) + "\n")
    before = path.read_bytes()
    result, data = project.run_json("--quest", "check")
    assert result.ret == 1
    regression = by_id(data)["src/pkg/calc.py::untested"]
    assert [f["field"] for f in regression["facts"]] == ["src/pkg/calc.py:13"]
    assert "PASS since 2026-01-01T00:00:00Z" in regression["facts"][0]["message"]
    assert path.read_bytes() == before


def test_changed_body_is_held_to_full_coverage_and_reported(
    project: Project, scanned: Callable[[Project], bytes]
) -> None:
    before = scanned(project)
    # Still fully covered after the change: not a regression, but reported.
    project.source("calc", CALC.replace("return x * 2", "return 2 * x"))
    result, data = project.run_json("--quest", "check")
    assert result.ret == 0, data
    assert data["changed"] == ["src/pkg/calc.py::double"]
    # A change that adds an uncovered branch: a regression that says it changed.
    project.source(
        "calc",
        CALC.replace("    return x * 2", "    if x is None:\n        return 0\n    return x * 2"),
    )
    result, data = project.run_json("--quest", "check")
    assert result.ret == 1
    regression = by_id(data)["src/pkg/calc.py::double"]
    assert regression["changed"] is True
    checks = [(f["check"], f["field"]) for f in regression["facts"]]
    assert checks == [
        ("coverage.line", "src/pkg/calc.py:4"),
        ("coverage.branch", "src/pkg/calc.py:3->4"),
        ("ratchet.changed", "src/pkg/calc.py:2"),
    ]
    assert (project.path / "quest.json").read_bytes() == before


def test_vanished_pass_function_fails_with_how_to_record_it(
    project: Project, scanned: Callable[[Project], bytes]
) -> None:
    before = scanned(project)
    project.source("calc", CALC.replace("def double(x):\n    return x * 2\n", ""))
    project.test("test_double", "def test_nothing():\n    pass\n")
    result, data = project.run_json("--quest", "check")
    assert result.ret == 1
    facts = by_id(data)["src/pkg/calc.py::double"]["facts"]
    assert [f["check"] for f in facts] == ["ratchet.gone"]
    assert "run `pytest --quest scan` to record the removal" in facts[0]["message"]
    assert (project.path / "quest.json").read_bytes() == before
    # The rescan records the removal, visibly, and the check passes again.
    result, data = project.run_json("--quest", "scan")
    assert data["removed"] == ["src/pkg/calc.py::double"]
    assert project.ratchet()["removed"][0]["id"] == "src/pkg/calc.py::double"
    result, data = project.run_json("--quest", "check")
    assert result.ret == 0, data


def test_module_no_test_imports_any_more_regresses_line_by_line(
    project: Project, scanned: Callable[[Project], bytes]
) -> None:
    scanned(project)
    project.source("lonely", "def alone(x):\n    if x:\n        return 1\n    return 2\n")
    project.test(
        "test_lonely",
        "from pkg.lonely import alone\n\ndef test_alone():\n    assert alone(1) + alone(0) == 3\n",
    )
    result, data = project.run_json("--quest", "scan")
    assert data["added_pass"] == ["src/pkg/lonely.py::alone"]
    (project.path / "tests" / "test_lonely.py").unlink()
    result, data = project.run_json("--quest", "check")
    assert result.ret == 1
    # Not "gone": the file is still measured (coverage's source), just never run.
    facts = by_id(data)["src/pkg/lonely.py::alone"]["facts"]
    assert [(f["check"], f["field"]) for f in facts] == [
        ("coverage.line", "src/pkg/lonely.py:2"),
        ("coverage.line", "src/pkg/lonely.py:3"),
        ("coverage.line", "src/pkg/lonely.py:4"),
        ("coverage.branch", "src/pkg/lonely.py:2->3"),
        ("coverage.branch", "src/pkg/lonely.py:2->4"),
    ]


def test_untracked_functions_listed_and_fail_only_when_strict(
    project: Project, scanned: Callable[[Project], bytes]
) -> None:
    scanned(project)
    project.source("calc", CALC + "\n\ndef brand_new(x):\n    return x - 1\n")
    result, data = project.run_json("--quest", "check")
    assert result.ret == 0
    assert data["untracked"] == ["src/pkg/calc.py::brand_new"]
    assert data["ok"] is True
    result, data = project.run_json("--quest", "check", "--quest-strict")
    assert result.ret == 1
    assert data["ok"] is False and data["strict"] is True
    assert data["regressions"] == []


def test_failing_test_fails_the_check_without_regression(
    project: Project, scanned: Callable[[Project], bytes]
) -> None:
    scanned(project)
    project.test("test_other", "def test_broken():\n    assert 1 == 2\n")
    result, data = project.run_json("--quest", "check")
    assert result.ret == 1
    assert data["regressions"] == []
    assert data["tests_failed"] == ["tests/test_other.py::test_broken"]
    assert data["ok"] is False


def test_failing_covering_test_is_a_regression(
    project: Project, scanned: Callable[[Project], bytes]
) -> None:
    scanned(project)
    project.test("test_sign", TEST_SIGN.replace("== 1\n", "== 2\n"))
    result, data = project.run_json("--quest", "check")
    assert result.ret == 1
    assert list(by_id(data)) == ["src/pkg/calc.py::sign"]
    assert data["tests_failed"] == ["tests/test_sign.py::test_sign"]


@pytest.mark.children_measured
def test_collection_error_interrupts_the_check(
    project: Project, scanned: Callable[[Project], bytes]
) -> None:
    before = scanned(project)
    project.test("test_bad", "def test_x(:\n    pass\n")
    result, data = project.run_json("--quest", "check", "--quest-export-to", "r.sarif")
    assert result.ret == 2
    assert "export" not in data and not (project.path / "r.sarif").exists()
    assert data["ok"] is False
    assert data["regressions"] == []
    assert [e["file"] for e in data["collection_errors"]] == ["tests/test_bad.py"]
    assert (project.path / "quest.json").read_bytes() == before


def test_check_without_ratchet_file_is_a_usage_error(project: Project) -> None:
    project.source("calc", CALC)
    project.test("test_double", TEST_DOUBLE)
    result = project.run("--quest", "check")
    assert result.ret == 4
    assert "run `pytest --quest scan` first" in result.stdout.str() + result.stderr.str()
    assert not (project.path / "quest.json").exists()


def test_github_actions_annotations_and_summary(
    project: Project,
    scanned: Callable[[Project], bytes],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    scanned(project)
    (project.path / "tests" / "test_sign.py").unlink()
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = project.run("--quest", "check")
    assert result.ret == 1
    errors = [line for line in result.stdout.lines if line.startswith("::error")]
    passed = project.ratchet()["quests"]["src/pkg/calc.py::sign"]["passed_at"]
    title = "title=pytest-quest regression%3A sign"
    assert errors == [
        f"::error file=src/pkg/calc.py,line={line},{title}::{what} not covered"
        f" [src/pkg/calc.py::sign, PASS since {passed}]"
        for line, what in ((7, "line 7"), (8, "line 8"), (9, "line 9"))
    ] + [
        f"::error file=src/pkg/calc.py,line=7,{title}::branch {arc} not taken"
        f" [src/pkg/calc.py::sign, PASS since {passed}]"
        for arc in ("7->8", "7->9")
    ]
    text = summary.read_text()
    assert text.startswith("earlier step\n## pytest-quest check failed\n")
    assert "- `src/pkg/calc.py::sign`: PASS since " in text
    assert "`src/pkg/calc.py:8`" in text

    # JSON mode: stdout stays one JSON object; annotations go to stderr.
    result, data = project.run_json("--quest", "check")
    assert result.ret == 1 and data["ok"] is False
    assert sum(line.startswith("::error file=src/pkg/calc.py") for line in result.stderr.lines) == 5
    assert summary.read_text().count("## pytest-quest check failed") == 2


# -- the "done means", on example_project -------------------------------


APPLY_PERCENT_TEST = """
import pytest

from shop.pricing import apply_percent


def test_apply_percent_bounds():
    assert apply_percent(1000, 0) == 1000
    assert apply_percent(1000, 100) == 0
    assert apply_percent(1000, 50) == 500
    for bad in (-1, 101):
        with pytest.raises(ValueError):
            apply_percent(1000, bad)
"""

APPLY = "src/shop/pricing.py::apply_percent"
REMOVE = "src/shop/cart.py::Cart.remove"


def checked(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = run_pytest(
        pytester.path, "--quest", "check", "--quest-format", "json", *args, autoload=True
    )
    return result, json.loads(result.stdout.str())


@pytest.mark.slow
def test_example_project_ratchet_serial_and_xdist(pytester: pytest.Pytester) -> None:
    shutil.copytree(EXAMPLE, pytester.path, dirs_exist_ok=True)
    result = run_pytest(pytester.path, "--quest", "scan", "-q", autoload=True)
    assert result.ret == 0
    # Work a quest: a new test, submitted through the gate.
    new_test = pytester.path / "tests" / "test_pricing_quest.py"
    new_test.write_text(APPLY_PERCENT_TEST)
    result = run_pytest(
        pytester.path,
        "--quest",
        "submit",
        "--quest-id",
        APPLY,
        "--quest-format",
        "json",
        autoload=True,
    )
    assert json.loads(result.stdout.str())["verdict"] == "PASS", result.stdout.str()
    ratchet = pytester.path / "quest.json"
    before = ratchet.read_bytes()
    passed_at = ratchet_view(before)["quests"][APPLY]["passed_at"]
    for xdist in ((), ("-n", "2")):
        result, data = checked(pytester, *xdist)
        # example_project has an xfail and a skip, no failing test.
        assert result.ret == 0, (xdist, data)
        assert data["checked"] == 13
        # Deleting the covering test: the function's missing line and branch as facts.
        new_test.unlink()
        result, data = checked(pytester, *xdist)
        assert result.ret == 1, xdist
        assert [r["id"] for r in data["regressions"]] == [APPLY]
        assert [
            (f["check"], f["field"], f["message"]) for f in data["regressions"][0]["facts"]
        ] == [
            (
                "coverage.line",
                "src/shop/pricing.py:12",
                f"line 12 not covered [{APPLY}, PASS since {passed_at}]",
            ),
            (
                "coverage.branch",
                "src/shop/pricing.py:11->12",
                f"branch 11->12 not taken [{APPLY}, PASS since {passed_at}]",
            ),
        ]
        # Restoring it: the check passes again.
        new_test.write_text(APPLY_PERCENT_TEST)
        result, data = checked(pytester, *xdist)
        assert result.ret == 0, xdist
        # A PASS entry made by hand is caught.
        edited = ratchet_view(before)
        edited["quests"][REMOVE].update(
            state="PASS",
            passed_at="2026-01-01T00:00:00Z",
            covering_tests=["tests/test_cart.py::test_total_with_coupon"],
            missing_lines=[],
            missing_branches=[],
            facts=[],
        )
        ratchet.write_text(json.dumps(edited, indent=2, sort_keys=True) + "\n")
        hand_edited = ratchet.read_bytes()
        result, data = checked(pytester, *xdist)
        assert result.ret == 1, xdist
        assert [r["id"] for r in data["regressions"]] == [REMOVE]
        assert [f["field"] for f in data["regressions"][0]["facts"]][:3] == [
            "src/shop/cart.py:44",
            "src/shop/cart.py:45",
            "src/shop/cart.py:46",
        ]
        assert ratchet.read_bytes() == hand_edited
        ratchet.write_bytes(before)
