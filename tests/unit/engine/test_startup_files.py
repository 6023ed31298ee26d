"""engine/startup_files.py: start-up files planted during a run are undone, nothing is lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Verdict
from pytest_quest.engine.startup_files import (
    QUARANTINE,
    StartupFiles,
    startup_folders,
    startup_watch,
    with_startup_changes,
)


def test_the_folders_are_this_interpreters_site_and_path_folders() -> None:
    sites, paths = startup_folders()
    assert sites and set(sites) <= set(paths)


def test_every_change_is_undone_and_kept_aside(tmp_path: Path) -> None:
    site, path = tmp_path / "site", tmp_path / "path"
    site.mkdir()
    path.mkdir()
    (site / "keep.pth").write_text("/somewhere\n")
    (site / "gone.pth").write_text("/elsewhere\n")
    (site / "module.py").write_text("x = 1\n")
    (path / "other.pth").write_text("not a site folder: never run\n")
    files = StartupFiles(([str(site)], [str(site), str(path)]))
    (site / "keep.pth").write_text("import evil\n")
    (site / "gone.pth").unlink()
    (site / "new.pth").write_text("import evil\n")
    (path / "sitecustomize.py").write_text("import evil\n")
    (site / "usercustomize").mkdir()
    (site / "module.py").write_text("x = 2\n")  # not a start-up file
    (path / "other.pth").write_text("changed\n")
    changes = files.restore()
    assert [c.split(" ", 2)[1] for c in changes] == [
        "added",
        "removed",
        "changed",
        "added",
        "added",
    ]
    assert (site / "keep.pth").read_text() == "/somewhere\n"
    assert (site / "gone.pth").read_text() == "/elsewhere\n"
    assert not (site / "new.pth").exists()
    assert not (path / "sitecustomize.py").exists()
    assert not (site / "usercustomize").exists()
    aside = sorted(p.name.split(QUARANTINE)[0] for p in tmp_path.rglob(f"*{QUARANTINE}*"))
    assert aside == ["keep.pth", "new.pth", "sitecustomize.py", "usercustomize"]
    assert files.restore() == []  # nothing more to undo; the kept-aside files are inert
    facts = with_startup_changes(GateResult(Verdict.PASS, [], "seal"), changes)
    assert facts.verdict is Verdict.REVIEW and facts.step == "guard"
    assert {f.check for f in facts.facts} == {"guard.startup_files"}
    failed = with_startup_changes(GateResult(Verdict.FAIL, [], "coverage"), changes)
    assert failed.verdict is Verdict.FAIL and len(failed.facts) == 5
    same = GateResult(Verdict.PASS, [], "seal")
    assert with_startup_changes(same, []) is same


def test_a_change_that_cannot_be_undone_is_still_named(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    files = StartupFiles(([str(site)], [str(site)]))
    files.before[str(tmp_path / "gone" / "x.pth")] = b"x"  # its folder is gone: not written back
    (changes,) = files.restore()
    assert changes.endswith(
        "removed during the run (could not be undone: No such file or directory)"
    )


def test_the_watch_runs_unless_the_engine_keeps_the_start_up_files_out_of_reach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_quest.engine import sandbox

    monkeypatch.setattr(sandbox, "_ACTIVE", [sandbox.Bubblewrap("bwrap")])
    assert startup_watch() is None
    for engine in (sandbox.Landlock(7), None):  # a project's own environment stays writable
        monkeypatch.setattr(sandbox, "_ACTIVE", [engine])
        assert isinstance(startup_watch(), StartupFiles)
