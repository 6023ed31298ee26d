"""engine/examples.py's parts: a test's names and rank, its source, enclosing functions, and
which node ids the scan saw."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_quest.core.model import Quest, Ratchet, State
from pytest_quest.engine.examples import _enclosing_functions, _Scanned, _TestFiles
from pytest_quest.engine.testfiles import digest

TESTS = """\
import pytest


def test_plain():
    run(1)


@pytest.mark.parametrize("x", [1, 2])
def test_checks(x):
    assert helper.value(x) == x


class TestGroup:
    def test_inner(self):
        pytest.raises(ValueError, int, "x")
"""


def _files(tmp_path: Path) -> _TestFiles:
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "test_a.py").write_text(TESTS)
    return _TestFiles(tmp_path)


def test_names_and_rank_of_a_test(tmp_path: Path) -> None:
    files = _files(tmp_path)
    assert files.names("tests/test_a.py::test_checks[1]") == (
        frozenset({"pytest", "mark", "parametrize", "x", "helper", "value"}),
        (False, 2),
    )
    assert files.names("tests/test_a.py::test_plain") == (frozenset({"run"}), (True, 1))
    assert files.names("tests/test_a.py::TestGroup::test_inner") == (
        frozenset({"pytest", "raises", "ValueError", "int"}),
        (False, 1),
    )


def test_names_are_kept_once_found(tmp_path: Path) -> None:
    files = _files(tmp_path)
    first = files.names("tests/test_a.py::test_checks[1]")
    (tmp_path / "tests" / "test_a.py").write_text("")
    assert files.names("tests/test_a.py::test_checks[2]") is first
    assert list(files.seen) == ["tests/test_a.py::test_checks"]


def test_names_of_a_test_not_found(tmp_path: Path) -> None:
    files = _files(tmp_path)
    assert files.names("tests/test_a.py::test_gone") is None
    assert files.seen == {"tests/test_a.py::test_gone": None}
    assert files.names("tests/test_a.py::test_gone") is None


def test_node_of_an_id_without_a_test(tmp_path: Path) -> None:
    files = _files(tmp_path)
    assert files._node("tests/test_a.py") is None
    assert files.parsed == {}


def test_node_of_a_file_that_cannot_be_read_or_parsed(tmp_path: Path) -> None:
    files = _files(tmp_path)
    (tmp_path / "tests" / "test_bad.py").write_text("def (:\n")
    assert files._node("tests/test_missing.py::test_x") is None
    assert files._node("tests/test_bad.py::test_x") is None
    assert files.parsed == {"tests/test_missing.py": None, "tests/test_bad.py": None}


def test_node_inside_a_class(tmp_path: Path) -> None:
    files = _files(tmp_path)
    found = files._node("tests/test_a.py::TestGroup::test_inner")
    assert found is not None
    assert found[0] == TESTS
    assert isinstance(found[1], ast.FunctionDef)
    assert found[1].name == "test_inner"
    assert files._node("tests/test_a.py::TestGroup::test_gone") is None
    assert files._node("tests/test_a.py::test_plain::test_inner") is None


def test_test_source_with_its_decorators_dedented(tmp_path: Path) -> None:
    files = _files(tmp_path)
    found = files.test("tests/test_a.py::test_checks[2]")
    assert found is not None
    assert found[0] == (
        '@pytest.mark.parametrize("x", [1, 2])\n'
        "def test_checks(x):\n"
        "    assert helper.value(x) == x"
    )
    assert len(found) == 2
    assert isinstance(found[1], ast.FunctionDef)
    assert found[1].name == "test_checks"
    inner = files.test("tests/test_a.py::TestGroup::test_inner")
    assert inner is not None
    assert inner[0] == 'def test_inner(self):\n    pytest.raises(ValueError, int, "x")'
    assert isinstance(inner[1], ast.FunctionDef)
    assert inner[1].name == "test_inner"


def test_test_not_found(tmp_path: Path) -> None:
    files = _files(tmp_path)
    assert files.test("tests/test_a.py::test_gone") is None


def test_test_whose_source_cannot_be_cut(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    files = _files(tmp_path)
    monkeypatch.setattr(
        "pytest_quest.engine.examples.ast.get_source_segment", lambda source, node: None
    )
    assert files.test("tests/test_a.py::test_plain") is None


SOURCE = """\
def outer():
    def inner():
        def deepest():
            pass


class Box:
    def method(self):
        def helper():
            pass
"""


def _quest(qualname: str, file: str = "src/m.py") -> Quest:
    return Quest(
        id=f"{file}::{qualname}", file=file, qualname=qualname, first=1, last=2, fingerprint="x"
    )


def test_enclosing_functions_leave_classes_out(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(SOURCE)
    assert _enclosing_functions(_quest("outer.inner.deepest"), tmp_path) == {"outer", "inner"}
    assert _enclosing_functions(_quest("Box.method.helper"), tmp_path) == {"method"}
    assert _enclosing_functions(_quest("Box.method"), tmp_path) == set()
    assert _enclosing_functions(_quest("Gone.method.helper"), tmp_path) == set()
    assert _enclosing_functions(_quest("outer.gone.helper"), tmp_path) == {"outer"}


def test_enclosing_functions_of_a_file_that_cannot_be_read(tmp_path: Path) -> None:
    assert _enclosing_functions(_quest("outer.inner", "src/gone.py"), tmp_path) == set()
    (tmp_path / "bad.py").write_text("def (:\n")
    assert _enclosing_functions(_quest("outer.inner", "bad.py"), tmp_path) == set()


def _scanned(tmp_path: Path) -> _Scanned:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_same.py").write_text("same\n")
    (tmp_path / "tests" / "test_changed.py").write_text("changed since\n")
    quest = _quest("f")
    quest.covering_tests = ["tests/test_changed.py::test_seen"]
    ratchet = Ratchet(
        quests={quest.id: quest},
        test_files={
            "tests/test_same.py": digest(tmp_path / "tests" / "test_same.py"),
            "tests/test_changed.py": "sha256:old",
            "tests/test_gone.py": "sha256:old",
        },
    )
    return _Scanned(ratchet, tmp_path)


def test_scanned_contains_tests_of_unchanged_files_and_recorded_ones(tmp_path: Path) -> None:
    scanned = _scanned(tmp_path)
    assert "tests/test_same.py::test_any" in scanned
    assert "tests/test_changed.py::test_seen" in scanned
    assert "tests/test_changed.py::test_new" not in scanned
    assert scanned.unchanged == {"tests/test_same.py": True, "tests/test_changed.py": False}
    assert scanned.missing == set()


def test_scanned_leaves_out_a_file_gone_since(tmp_path: Path) -> None:
    scanned = _scanned(tmp_path)
    assert "tests/test_gone.py::test_x" not in scanned
    assert scanned.missing == {"tests/test_gone.py"}
    assert scanned._recorded is None
    assert "tests/test_gone.py::test_y" not in scanned
    assert scanned.unchanged == {"tests/test_gone.py": False}


def test_scanned_holds_no_object_that_is_not_a_node_id(tmp_path: Path) -> None:
    scanned = _scanned(tmp_path)
    assert 3 not in scanned
    assert None not in scanned
    assert scanned.unchanged == {}


def test_scanned_recorded_from_the_given_function(tmp_path: Path) -> None:
    quest = _quest("f")
    quest.state = State.TODO
    quest.covering_tests = ["tests/test_x.py::test_from_ratchet"]
    calls: list[int] = []

    def given() -> set[str]:
        calls.append(1)
        return {"tests/test_x.py::test_given"}

    scanned = _Scanned(Ratchet(quests={quest.id: quest}), tmp_path, given)
    assert scanned.recorded == {"tests/test_x.py::test_given"}
    assert scanned.recorded == {"tests/test_x.py::test_given"}
    assert calls == [1]
    assert _Scanned(Ratchet(quests={quest.id: quest}), tmp_path).recorded == {
        "tests/test_x.py::test_from_ratchet"
    }
