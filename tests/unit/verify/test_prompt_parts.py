"""What verifiers are shown: the tests' sources found by node id, the request, numbered lines."""

from __future__ import annotations

import ast
from pathlib import Path

from pytest_quest.core.model import FunctionFacts, Quest
from pytest_quest.verify.prompt import (
    QUESTIONS,
    Request,
    TestSource,
    _def_span,
    _parse_file,
    _read_lines,
    build_request,
    covering_test_sources,
    numbered,
)

TESTS = """\
import pytest


def test_one():
    assert 1


@pytest.mark.parametrize("x", [1, 2])
@pytest.mark.slow
def test_two(x):
    assert x


class TestGroup:
    def test_in(self):
        assert True

    x = 1


def test_one():
    assert 2
"""


def test_numbered_pads_the_line_numbers_to_five() -> None:
    assert numbered("a\n\nb", 9) == "    9 | a\n   10 | \n   11 | b"
    assert numbered("", 1) == "    1 | "


def test_def_span_of_functions_methods_and_what_is_not_one() -> None:
    tree = ast.parse(TESTS)
    assert _def_span(tree, ["test_one"]) == (21, 22)  # the last definition wins
    assert _def_span(tree, ["test_two"]) == (8, 11)  # from the first decorator
    assert _def_span(tree, ["TestGroup", "test_in"]) == (15, 16)
    assert _def_span(tree, ["TestGroup"]) is None  # a class, not a function
    assert _def_span(tree, ["TestGroup", "x"]) is None
    assert _def_span(tree, ["test_nothing"]) is None
    assert _def_span(tree, ["test_one", "inner"]) is None


def test_parse_file_and_read_lines(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text("x = 1\ny = 2\n", encoding="utf-8")
    parsed = _parse_file(good)
    assert parsed is not None
    assert ast.dump(parsed[0]) == ast.dump(ast.parse("x = 1\ny = 2\n"))
    assert parsed[1] == ["x = 1", "y = 2"]
    assert _read_lines(good) == ["x = 1", "y = 2"]
    bad = tmp_path / "bad.py"
    bad.write_text("def (:\n", encoding="utf-8")
    assert _parse_file(bad) is None
    nul = tmp_path / "nul.py"
    nul.write_bytes(b"x = 1\x00\n")
    assert _parse_file(nul) is None
    assert _parse_file(tmp_path / "missing.py") is None
    assert _read_lines(tmp_path / "missing.py") == []
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"s = '\xe9'\n")
    assert _read_lines(latin) == ["s = '\ufffd'"]


def test_covering_test_sources_in_order_each_test_once(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(TESTS, encoding="utf-8")
    (tmp_path / "tests" / "test_bad.py").write_text("def (:\n", encoding="utf-8")
    nodeids = [
        "tests/test_a.py::test_two[1]",
        "tests/test_a.py::test_two[a::b]",
        "tests/test_bad.py::test_x",
        "tests/test_a.py",
        "tests/test_a.py::test_gone",
        "tests/test_a.py::TestGroup::test_in",
        "tests/test_a.py::test_one",
    ]
    assert covering_test_sources(tmp_path, nodeids) == [
        TestSource(
            "tests/test_a.py::test_two",
            "tests/test_a.py",
            8,
            11,
            '@pytest.mark.parametrize("x", [1, 2])\n@pytest.mark.slow\ndef test_two(x):\n    assert x',
        ),
        TestSource(
            "tests/test_a.py::TestGroup::test_in",
            "tests/test_a.py",
            15,
            16,
            "    def test_in(self):\n        assert True",
        ),
        TestSource(
            "tests/test_a.py::test_one", "tests/test_a.py", 21, 22, "def test_one():\n    assert 2"
        ),
    ]


CODE = """\
import functools


@functools.cache
def f(x):
    return x + 1


def g():
    return 2
"""


def _quest() -> Quest:
    return Quest(
        id="pkg/m.py::f", file="pkg/m.py", qualname="f", first=5, last=6, fingerprint="sha256:0"
    )


def _facts(start: int, last: int, file: str = "pkg/m.py") -> FunctionFacts:
    return FunctionFacts(
        file=file,
        qualname="f",
        ordinal=0,
        start=start,
        first=start,
        last=last,
        fingerprint="sha256:0",
        statements=1,
        branches=0,
    )


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(CODE, encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_old.py").write_text(
        "def test_old():\n    assert True\n", encoding="utf-8"
    )
    (tmp_path / "tests" / "test_new.py").write_text(
        "def test_new():\n    assert False\n\n\ndef test_more():\n    pass\n", encoding="utf-8"
    )
    return tmp_path


def test_build_request_shows_the_changed_tests_and_the_decorators(tmp_path: Path) -> None:
    root = _project(tmp_path)
    request = build_request(
        rootdir=root,
        quest=_quest(),
        current=_facts(5, 6),
        covering_tests=[
            "tests/test_old.py::test_old",
            "tests/test_new.py::test_new",
            "tests/test_new.py::test_more",
        ],
        changed_files=["tests/test_new.py", "pkg/other.py"],
        questions=2,
    )
    assert request == Request(
        quest=_quest(),
        function_file="pkg/m.py",
        function_first=4,
        function_source="@functools.cache\ndef f(x):\n    return x + 1",
        tests=[
            TestSource(
                "tests/test_new.py::test_new",
                "tests/test_new.py",
                1,
                2,
                "def test_new():\n    assert False",
            ),
            TestSource(
                "tests/test_new.py::test_more",
                "tests/test_new.py",
                5,
                6,
                "def test_more():\n    pass",
            ),
        ],
        questions=[QUESTIONS[0], QUESTIONS[1]],
        files={
            "pkg/m.py": CODE.splitlines(),
            "tests/test_new.py": [
                "def test_new():",
                "    assert False",
                "",
                "",
                "def test_more():",
                "    pass",
            ],
        },
    )


def test_build_request_without_changed_tests_shows_every_covering_test(tmp_path: Path) -> None:
    root = _project(tmp_path)
    request = build_request(
        rootdir=root,
        quest=_quest(),
        current=_facts(9, 10),
        covering_tests=["tests/test_old.py::test_old"],
        changed_files=[],
        questions=0,
    )
    assert request.function_first == 9
    assert request.function_source == "def g():\n    return 2"
    assert request.tests == [
        TestSource(
            "tests/test_old.py::test_old",
            "tests/test_old.py",
            1,
            2,
            "def test_old():\n    assert True",
        )
    ]
    assert request.questions == [QUESTIONS[0]]
    assert request.files == {
        "pkg/m.py": CODE.splitlines(),
        "tests/test_old.py": ["def test_old():", "    assert True"],
    }


def test_build_request_for_a_file_that_does_not_parse(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("@deco\ndef f(:\n    pass\n", encoding="utf-8")
    request = build_request(
        rootdir=tmp_path,
        quest=_quest(),
        current=_facts(2, 3, "bad.py"),
        covering_tests=[],
        changed_files=[],
        questions=9,
    )
    assert (request.function_first, request.function_source) == (2, "def f(:\n    pass")
    assert request.tests == []
    assert request.questions == list(QUESTIONS)
    assert request.files == {"bad.py": ["@deco", "def f(:", "    pass"]}


def test_build_request_of_lines_where_no_def_starts(tmp_path: Path) -> None:
    root = _project(tmp_path)
    request = build_request(
        rootdir=root,
        quest=_quest(),
        current=_facts(1, 1),
        covering_tests=[],
        changed_files=[],
        questions=1,
    )
    assert (request.function_first, request.function_source) == (1, "import functools")
