"""Reading the code under test: its text, a renamed function's fingerprint, facts without measuring."""

from __future__ import annotations

import ast
from pathlib import Path

from pytest_quest.core.model import FunctionFacts
from pytest_quest.engine.source import (
    _code_part,
    facts_from_source,
    fingerprint_as,
    fingerprint_node,
    read_source,
)


def test_code_part_cuts_a_trailing_comment_only_outside_strings() -> None:
    assert _code_part("x = 1  # one") == "x = 1  "
    assert _code_part("s = '#not' # yes") == "s = '#not' "
    assert _code_part('s = "it\'s # in" # out') == 's = "it\'s # in" '
    assert _code_part("s = 'a\"b#' + \"c'#\"") == "s = 'a\"b#' + \"c'#\""
    assert _code_part("no comment") == "no comment"
    assert _code_part("#") == ""
    assert _code_part("") == ""


def test_read_source_of_text_missing_and_undecodable_files(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text("x = 'é'\n", encoding="utf-8")
    assert read_source(good) == "x = 'é'\n"
    assert read_source(tmp_path / "missing.py") == ""
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"x = '\xe9'\n")
    assert read_source(bad) == "x = '\ufffd'\n"


SOURCE = "import os\n\n\ndef new_name(a):\n    return a + 1\n\n\nasync def run():\n    pass\n"


def test_fingerprint_as_is_the_fingerprint_under_the_old_name(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(SOURCE, encoding="utf-8")
    old = ast.parse("def old_name(a):\n    return a + 1\n").body[0]
    assert fingerprint_as(path, 4, "old_name") == fingerprint_node(old)
    assert fingerprint_as(path, 4, "new_name") == fingerprint_node(ast.parse(SOURCE).body[1])
    assert fingerprint_as(path, 4, "old_name") != fingerprint_as(path, 4, "new_name")
    was = ast.parse("async def go():\n    pass\n").body[0]
    assert fingerprint_as(path, 8, "go") == fingerprint_node(was)
    assert fingerprint_as(path, 1, "x") == ""
    assert fingerprint_as(path, 5, "x") == ""


def test_fingerprint_as_of_a_file_that_does_not_parse(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("def (:\n", encoding="utf-8")
    assert fingerprint_as(path, 1, "f") == ""
    nul = tmp_path / "nul.py"
    nul.write_bytes(b"def f():\n    pass\x00\n")
    assert fingerprint_as(nul, 1, "f") == ""
    assert fingerprint_as(tmp_path / "missing.py", 1, "f") == ""


def test_facts_from_source_with_every_line_missing_or_identity_only(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SOURCE, encoding="utf-8")
    fingerprint = fingerprint_node(ast.parse(SOURCE).body[1])
    missing = facts_from_source("pkg/m.py::new_name", "pkg/m.py", tmp_path, all_missing=True)
    assert missing == FunctionFacts(
        file="pkg/m.py",
        qualname="new_name",
        ordinal=1,
        start=4,
        first=4,
        last=5,
        fingerprint=fingerprint,
        statements=1,
        branches=0,
        missing_lines=[5],
    )
    identity = facts_from_source("pkg/m.py::new_name", "pkg/m.py", tmp_path, all_missing=False)
    assert identity == FunctionFacts(
        file="pkg/m.py",
        qualname="new_name",
        ordinal=1,
        start=4,
        first=4,
        last=5,
        fingerprint=fingerprint,
        statements=0,
        branches=0,
    )


def test_facts_from_source_is_none_when_there_is_nothing_to_show(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "empty.py").write_text("", encoding="utf-8")
    (tmp_path / "broken.py").write_text("def (:\n", encoding="utf-8")
    assert facts_from_source("m.py::gone", "m.py", tmp_path, all_missing=True) is None
    assert facts_from_source("missing.py::f", "missing.py", tmp_path, all_missing=True) is None
    assert facts_from_source("empty.py::f", "empty.py", tmp_path, all_missing=False) is None
    assert facts_from_source("broken.py::f", "broken.py", tmp_path, all_missing=True) is None
