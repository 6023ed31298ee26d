"""pytest-xdist: ``-n 2`` gives the same quests, facts and verdicts as a serial run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.projects import Project, qid, scanned_template
from tests.support.quests import ratchet_view

pytest.importorskip("xdist")
pytestmark = pytest.mark.all_plugins

SOURCES = {
    "shapes": """
        def area(w, h):
            if w < 0 or h < 0:
                raise ValueError("negative")
            return w * h


        def perimeter(w, h):
            return 2 * (w + h)
        """,
    "words": """
        def shout(text):
            return text.upper() + "!"


        def count(text, letter):
            total = 0
            for char in text:
                if char == letter:
                    total += 1
            return total


        class Box:
            def __init__(self, items):
                self.items = list(items)

            @property
            def size(self):
                return len(self.items)

            def first(self):
                if not self.items:
                    return None
                return self.items[0]
        """,
    "money": """
        def cents(amount):
            return round(amount * 100)


        def fmt(amount):
            if amount < 0:
                return "-" + fmt(-amount)
            return f"{amount:.2f}"
        """,
}

TESTS = {
    "test_shapes": """
        from pkg.shapes import area, perimeter

        def test_area():
            assert area(2, 3) == 6

        def test_perimeter():
            assert perimeter(1, 2) == 6
        """,
    "test_words": """
        import pytest
        from pkg.words import Box, count, shout

        def test_shout():
            assert shout("hi") == "HI!"

        def test_count():
            assert count("banana", "a") == 3

        def test_box():
            box = Box([1, 2])
            assert box.size == 2
            assert box.first() == 1

        def test_box_failing():
            # Runs Box.first's empty branch, but fails: it must not count.
            assert Box([]).first() == 0

        @pytest.mark.skip(reason="not today")
        def test_skipped():
            assert Box([]).first() is None
        """,
    "test_money": """
        from pkg.money import cents, fmt

        def test_cents():
            assert cents(1.5) == 150

        def test_fmt():
            assert fmt(-1) == "-1.00"
            assert fmt(2) == "2.00"
        """,
}


def comparable(ratchet: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ratchet's quests without timestamps and run-specific extras."""
    quests = {}
    for quest_id, entry in ratchet["quests"].items():
        quests[quest_id] = {
            key: value
            for key, value in entry.items()
            if key not in ("issued_at", "passed_at", "extra", "history")
        }
    return quests


@pytest.fixture
def several(project: Project) -> Project:
    for name, text in SOURCES.items():
        project.source(name, text)
    for name, text in TESTS.items():
        project.test(name, text)
    return project


# Slow: four pytest runs with every plugin loaded, two of them starting two xdist workers
# (7.6 s of CPU, the most of any test in the fast loop). The fast loop keeps xdist's
# scan, check and audit below (-p xdist.plugin); CI runs this one too.
@pytest.mark.slow
def test_scan_and_check_same_under_xdist(several: Project) -> None:
    project = several
    # The project has a failing test: scan exits 1 like pytest, quests still recorded.
    result, serial_scan = project.run_json("--quest", "scan", "--quest-file", "serial.json")
    assert result.ret == 1, serial_scan
    result, parallel_scan = project.run_json(
        "--quest", "scan", "--quest-file", "parallel.json", "-n", "2"
    )
    assert result.ret == 1, parallel_scan
    # Workers really ran the tests (xdist's own report) and the result is the same.
    assert "2 workers" in result.stderr.str() or "gw1" in result.stderr.str()
    for key in ("added", "added_pass", "removed", "counts", "remaining", "tests_not_passed"):
        assert parallel_scan[key] == serial_scan[key], key
    serial = ratchet_view((project.path / "serial.json").read_bytes())
    parallel = ratchet_view((project.path / "parallel.json").read_bytes())
    assert comparable(parallel) == comparable(serial)
    # Per-test attribution is intact: the failing test's lines did not count.
    first = serial["quests"]["src/pkg/words.py::Box.first"]
    assert first["state"] == "TODO"
    assert first["missing_lines"] == [24]
    assert first["covering_tests"] == ["tests/test_words.py::test_box"]
    assert serial["quests"]["src/pkg/money.py::fmt"]["state"] == "PASS"

    # The check: a covering test deleted, the same regressions either way.
    (project.path / "tests" / "test_money.py").write_text(
        "from pkg.money import cents\n\ndef test_cents():\n    assert cents(1.5) == 150\n"
    )
    before = (project.path / "serial.json").read_bytes()
    result, serial_check = project.run_json("--quest", "check", "--quest-file", "serial.json")
    assert result.ret == 1
    result, parallel_check = project.run_json(
        "--quest", "check", "--quest-file", "serial.json", "-n", "2"
    )
    assert result.ret == 1
    assert parallel_check["regressions"] == serial_check["regressions"]
    assert [r["id"] for r in serial_check["regressions"]] == ["src/pkg/money.py::fmt"]
    assert [f["field"] for f in serial_check["regressions"][0]["facts"]] == [
        "src/pkg/money.py:7",
        "src/pkg/money.py:8",
        "src/pkg/money.py:9",
        "src/pkg/money.py:7->8",
        "src/pkg/money.py:7->9",
    ]
    for key in ("ok", "checked", "untracked", "tests_failed", "changed"):
        assert parallel_check[key] == serial_check[key], key
    assert (project.path / "serial.json").read_bytes() == before


# Autoload off (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1, as tests/support/runner.py runs every
# child): xdist comes by `-p xdist.plugin`, so it is registered as "xdist.plugin", not
# "xdist" (its entry point's name); the workers must still measure and hand their data over.
BY_P = ("-p", "xdist.plugin", "-n", "2")

AUDITED = """
    def checked(x):
        if x > 0:
            return "pos"
        return "neg"


    def unchecked(x):
        if x > 0:
            return "pos"
        return "neg"
    """

TEST_AUDITED = """
    from pkg.audited import checked, unchecked

    def test_checked():
        assert checked(1) == "pos"
        assert checked(-1) == "neg"

    def test_unchecked_runs():
        unchecked(1)
        unchecked(-1)
    """


def _build_audited(project: Project) -> None:
    project.source("audited", AUDITED)
    project.test("test_audited", TEST_AUDITED)


@pytest.fixture(scope="module")
def scanned_serially(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, Any]]:
    """The audited project scanned once, serially, with autoload off."""
    return scanned_template(tmp_path_factory, _build_audited)


@pytest.fixture
def autoload_off(tmp_path: Path, scanned_serially: tuple[Project, dict[str, Any]]) -> Project:
    template, data = scanned_serially
    assert not template.autoload
    assert sorted(data["added_pass"]) == [qid("audited", "checked"), qid("audited", "unchecked")]
    return Project(tmp_path / "project").fill_from(template)


def _on_workers(result: pytest.RunResult) -> None:
    assert "2 workers" in result.stderr.str() or "gw1" in result.stderr.str()


def test_scan_by_p_xdist_with_autoload_off(autoload_off: Project) -> None:
    result, data = autoload_off.run_json("--quest", "scan", "--quest-file", "parallel.json", *BY_P)
    assert result.ret == 0, data
    _on_workers(result)
    assert sorted(data["added_pass"]) == [qid("audited", "checked"), qid("audited", "unchecked")]
    serial = ratchet_view((autoload_off.path / "quest.json").read_bytes())
    parallel = ratchet_view((autoload_off.path / "parallel.json").read_bytes())
    assert comparable(parallel) == comparable(serial)


def test_check_by_p_xdist_with_autoload_off(autoload_off: Project) -> None:
    result, data = autoload_off.run_json("--quest", "check", *BY_P)
    assert result.ret == 0, data
    _on_workers(result)
    assert (data["ok"], data["checked"], data["regressions"]) == (True, 2, [])


@pytest.mark.children_measured
def test_audit_by_p_xdist_with_autoload_off(autoload_off: Project) -> None:
    result, data = autoload_off.run_json("--quest", "audit", *BY_P)
    assert result.ret == 0, data
    _on_workers(result)
    assert data["audited"] == [qid("audited", "checked"), qid("audited", "unchecked")]
    assert [finding["id"] for finding in data["findings"]] == [qid("audited", "unchecked")]
