"""engine/measure.py's Measurer before it starts: no harvest yet, no notes without children,
every file analyzed, and the list settings its children get."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.engine.measure import Measurer


def _measurer(tmp_path: Path) -> Measurer:
    (tmp_path / "src").mkdir()
    return Measurer(tmp_path, [str(tmp_path / "src")], str(tmp_path / ".cov-data"))


def test_a_measurer_not_started(tmp_path: Path) -> None:
    made = _measurer(tmp_path)
    assert made.harvest is None
    assert made.children is None
    assert made.notes == []
    assert made.only_files() is None
    assert made.started is False


def test_notes_of_the_childrens_measurement(tmp_path: Path) -> None:
    made = _measurer(tmp_path)

    class Children:
        def __init__(self) -> None:
            self.notes = ["t::a: a child's data was left out"]

    children = Children()
    made.children = children  # type: ignore[assignment]
    notes = made.notes
    assert notes == ["t::a: a child's data was left out"]
    assert notes is not children.notes


def test_child_list_makes_folders_of_the_rootdir_absolute(tmp_path: Path) -> None:
    made = _measurer(tmp_path)
    (tmp_path / "lib").mkdir()
    made.cov.set_option("run:source", ["lib", "*/pattern", "a_package", "/abs/path"])
    assert made._child_list("run:source", ["given"]) == [
        str(tmp_path / "lib"),
        "*/pattern",
        "a_package",
        "/abs/path",
    ]


def test_child_list_of_packages_as_they_are(tmp_path: Path) -> None:
    made = _measurer(tmp_path)
    (tmp_path / "lib").mkdir()
    made.cov.set_option("run:source_pkgs", ["lib", "pkg"])
    assert made._child_list("run:source_pkgs", []) == ["lib", "pkg"]


def test_child_list_takes_the_given_items_when_the_setting_is_empty(tmp_path: Path) -> None:
    made = _measurer(tmp_path)
    made.cov.set_option("run:omit", None)
    assert made._child_list("run:omit", ["src", "x/*"]) == [str(tmp_path / "src"), "x/*"]
    made.cov.set_option("run:omit", [])
    assert made._child_list("run:omit", []) == []
