"""Tamper signs in submit: which files are judged, against what, and how they weigh on the verdict."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from pytest_quest.app.submit import with_tamper_signs
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, Verdict
from pytest_quest.engine.submitted import own_packages, submitted_files
from pytest_quest.engine.testfiles import FileSearch, digest_test_files

SIGN = Fact(check="tamper.atexit", field="tests/test_a.py:3", expected="", actual="", message="")
MISSING = Fact(check="coverage.line", field="line 3", expected="", actual="", message="")


def test_a_pass_with_signs_is_review_and_a_fail_stays_fail() -> None:
    assert with_tamper_signs(GateResult(Verdict.PASS, [], "done"), []).verdict is Verdict.PASS
    review = with_tamper_signs(GateResult(Verdict.PASS, [], "done"), [SIGN])
    assert (review.verdict, review.facts) == (Verdict.REVIEW, [SIGN])
    fail = with_tamper_signs(GateResult(Verdict.FAIL, [MISSING], "coverage"), [SIGN])
    assert (fail.verdict, fail.facts, fail.step) == (Verdict.FAIL, [MISSING, SIGN], "coverage")


def project(tmp_path: Path) -> tuple[Path, FileSearch]:
    root = tmp_path / "p"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_old.py").write_text("def test_old():\n    pass\n")
    (root / "tests" / "conftest.py").write_text("import atexit\n")
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\nquest_source = ["src"]\n')
    return root, FileSearch([root / "tests"])


def scan_time(seconds_ago: float = 0) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_without_git_files_older_than_the_scan_are_the_projects(tmp_path: Path) -> None:
    root, search = project(tmp_path)
    for path in (root / "tests" / "conftest.py", root / "pyproject.toml"):
        age(path, 3600)
    scanned = digest_test_files(search, root)
    (root / "tests" / "test_new.py").write_text("import atexit\n")
    files = submitted_files(search, root, scanned=scanned, scanned_at=scan_time(60))
    assert [(f.path, f.previous) for f in files] == [("tests/test_new.py", None)]
    (root / "tests" / "conftest.py").write_text("import atexit\nimport signal\n")
    files = submitted_files(search, root, scanned=scanned, scanned_at=scan_time(60))
    assert sorted(f.path for f in files) == ["tests/conftest.py", "tests/test_new.py"]


@pytest.mark.skipif(subprocess.run(["git", "--version"], check=False).returncode != 0, reason="git")
def test_with_git_a_changed_file_is_diffed_against_its_text_at_the_scan(tmp_path: Path) -> None:
    root, search = project(tmp_path)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    env = dict(os.environ, GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    subprocess.run([*git, "commit", "-qm", "x", "--date=2026-01-01T00:00:00Z"], check=True, env=env)
    scanned = digest_test_files(search, root)
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nquest_source = ["src"]\naddopts = "-p evil"\n'
    )
    files = submitted_files(search, root, scanned=scanned, scanned_at="2026-02-01T00:00:00Z")
    assert [(f.path, f.previous is not None) for f in files] == [("pyproject.toml", True)]


def test_own_packages(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "mod.py").write_text("")
    assert own_packages(["src/pkg", "mod.py", "bad-name"], tmp_path) == ["mod", "pkg"]
