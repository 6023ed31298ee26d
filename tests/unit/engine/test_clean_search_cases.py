"""engine/clean_search.py's parts: the function as judged, which survivors are pending, the
names a file is imported by, and the search records kept or held."""

from __future__ import annotations

from pathlib import Path

from pytest_quest.engine.clean_search import (
    Judged,
    _held,
    _well_formed,
    judged,
    module_names,
    pending,
)

SOURCE = "x = 1\n\n\ndef f(a):\n    return a + 1\n"


def test_judged_reads_the_function_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    found = judged(path, 4, ("arith.replace",))
    assert isinstance(found, Judged)
    assert (found.file, found.start, found.source, found.operators) == (
        str(path),
        4,
        SOURCE,
        ("arith.replace",),
    )
    assert found.fingerprint.startswith("sha256:")
    assert judged(path, 4, None) == Judged(str(path), 4, SOURCE, found.fingerprint, None)


def test_judged_of_a_line_with_no_def(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    assert judged(path, 1, None) is None


def test_judged_of_a_file_that_cannot_be_read(tmp_path: Path) -> None:
    assert judged(tmp_path / "gone.py", 1, None) is None
    (tmp_path / "bad.py").write_text("def (:\n")
    assert judged(tmp_path / "bad.py", 1, None) is None
    (tmp_path / "latin.py").write_bytes(b"x = '\xff'\n")
    assert judged(tmp_path / "latin.py", 1, None) is None


def test_pending_of_what_is_not_an_entry() -> None:
    assert pending("survived") is False  # type: ignore[arg-type]
    assert pending(None) is False  # type: ignore[arg-type]


def test_pending_only_for_a_survivor_without_witness_or_reason() -> None:
    assert pending({"status": "killed"}) is False
    held = {"calls": 0, "escapes": "", "problem": "it raised"}
    assert pending({"status": "survived", "search": held}) is False
    cleared = {"calls": 3, "escapes": "", "problem": ""}
    assert pending({"status": "survived", "search": cleared}) is True


def test_held_cuts_the_reason() -> None:
    assert _held("why") == {"calls": 0, "escapes": "", "problem": "why"}
    assert _held("x" * 400) == {"calls": 0, "escapes": "", "problem": "x" * 300}


def test_well_formed() -> None:
    assert _well_formed({"calls": 2, "escapes": "", "problem": ""}) is True
    assert _well_formed({"calls": 0, "escapes": "io", "problem": "p"}) is True
    assert _well_formed(None) is False
    assert _well_formed([2, "", ""]) is False
    assert _well_formed({"calls": True, "escapes": "", "problem": ""}) is False
    assert _well_formed({"calls": "2", "escapes": "", "problem": ""}) is False
    assert _well_formed({"calls": 2, "escapes": None, "problem": ""}) is False
    assert _well_formed({"calls": 2, "escapes": "", "problem": 1}) is False


def test_module_names_deepest_folder_first(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    file = tmp_path / "src" / "pkg" / "mod.py"
    path = [str(tmp_path), str(tmp_path / "src"), str(tmp_path / "elsewhere")]
    assert module_names(str(file), path) == ["pkg.mod", "src.pkg.mod"]
    path.append(str(tmp_path / "src" / "pkg"))
    assert module_names(str(file), path) == ["mod", "pkg.mod", "src.pkg.mod"]


def test_module_names_of_a_package(tmp_path: Path) -> None:
    init = tmp_path / "pkg" / "__init__.py"
    assert module_names(str(init), [str(tmp_path)]) == ["pkg"]
    assert module_names(str(init), [str(tmp_path / "pkg")]) == []


def test_module_names_leave_out_names_that_are_not_identifiers(tmp_path: Path) -> None:
    file = tmp_path / "my-pkg" / "mod.py"
    assert module_names(str(file), [str(tmp_path)]) == []
    assert module_names(str(file), [str(tmp_path / "my-pkg")]) == ["mod"]
