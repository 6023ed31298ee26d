"""pytest-xdist: ``-n 2`` gives the same quests, facts and verdicts as a serial run."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.projects import Project
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
    for qid, entry in ratchet["quests"].items():
        quests[qid] = {
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
