"""engine/source.py's facts_from_source: a function's facts read from its file alone."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.engine.source import facts_from_source

CODE = "def f(x):\n    if x:\n        return 1\n    return 2\n\n\ndef g():\n    return 3\n"


def test_every_line_missing_or_only_the_identity(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(CODE)
    missing = facts_from_source("m.py::f", "m.py", tmp_path, all_missing=True)
    assert missing is not None
    assert missing.missing_lines == [2, 3, 4]
    assert missing.statements == 3
    identity = facts_from_source("m.py::f", "m.py", tmp_path, all_missing=False)
    assert identity is not None
    assert (identity.statements, identity.missing_lines) == (0, [])
    assert identity.fingerprint == missing.fingerprint != ""


def test_a_gone_function_file_or_parse_is_none(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(CODE)
    assert facts_from_source("m.py::h", "m.py", tmp_path, all_missing=True) is None
    assert facts_from_source("n.py::f", "n.py", tmp_path, all_missing=True) is None
    (tmp_path / "bad.py").write_text("def f(:\n")
    assert facts_from_source("bad.py::f", "bad.py", tmp_path, all_missing=True) is None
