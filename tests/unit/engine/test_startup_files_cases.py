"""engine/startup_files.py: the folders watched, files read, folders that cannot be listed."""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path

import pytest

from pytest_quest.engine import startup_files
from pytest_quest.engine.startup_files import StartupFiles, startup_folders


def test_startup_folders_with_the_user_site(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    system = tmp_path / "system"
    user = tmp_path / "user"
    on_path = tmp_path / "on_path"
    for folder in (system, user, on_path):
        folder.mkdir()
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(system), str(tmp_path / "gone")])
    monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(user))
    monkeypatch.setattr(sys, "path", ["", str(on_path), str(tmp_path / "nope"), str(system)])
    sites, paths = startup_folders()
    assert sites == [os.path.realpath(system), os.path.realpath(user)]
    assert paths == [
        os.path.realpath(system),
        os.path.realpath(tmp_path / "gone"),
        os.path.realpath(user),
        os.path.realpath(on_path),
    ]


def test_startup_folders_without_the_user_site(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    system = tmp_path / "system"
    system.mkdir()
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(system)])
    monkeypatch.setattr(site, "ENABLE_USER_SITE", False)
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(tmp_path / "user"))
    monkeypatch.setattr(sys, "path", [])
    assert startup_folders() == ([os.path.realpath(system)], [os.path.realpath(system)])


def test_read_a_file_a_package_and_a_missing_file(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_bytes(b"print(1)\n")
    package = tmp_path / "usercustomize"
    package.mkdir()
    (package / "__init__.py").write_bytes(b"x = 2\n")
    bare = tmp_path / "bare"
    bare.mkdir()
    assert startup_files._read(str(tmp_path / "sitecustomize.py")) == b"print(1)\n"
    assert startup_files._read(str(package)) == b"<package>x = 2\n"
    assert startup_files._read(str(bare)) == b"<package>"
    assert startup_files._read(str(tmp_path / "missing.py")) == b"<unreadable>"


def test_read_stops_at_its_limit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(startup_files, "_MAX_BYTES", 4)
    (tmp_path / "a.pth").write_bytes(b"123456789")
    assert startup_files._read(str(tmp_path / "a.pth")) == b"1234"


def test_scan_passes_over_a_folder_it_cannot_list(tmp_path: Path) -> None:
    site_folder = tmp_path / "site"
    site_folder.mkdir()
    (site_folder / "a.pth").write_text("import x\n")
    (site_folder / "sitecustomize.py").write_text("s\n")
    (site_folder / "other.py").write_text("o\n")
    path_folder = tmp_path / "path"
    path_folder.mkdir()
    (path_folder / "b.pth").write_text("not run\n")
    (path_folder / "usercustomize.py").write_text("u\n")
    missing = str(tmp_path / "missing")
    watch = StartupFiles(([missing, str(site_folder)], [str(path_folder), missing]))
    assert watch.before == {
        str(site_folder / "a.pth"): b"import x\n",
        str(site_folder / "sitecustomize.py"): b"s\n",
        str(path_folder / "usercustomize.py"): b"u\n",
    }
    assert watch.restore() == []
