"""``combine`` takes only shards that describe the tree it runs in (docs/ci.md).

A shard records its commit and the digests of every test file of the project;
shards of different trees, or of a tree other than the combining checkout's,
are refused with exit 4 naming the difference, so a stale shard cannot
stand in for a test that is gone.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.shard import MANIFEST, manifest_of, read_manifest
from tests.support.gitrepo import commit_all, init_repo
from tests.support.projects import DOUBLE, SIGN, TEST_DOUBLE, TEST_SIGN, Project, calc_project

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """The calc project with both functions tested and scanned: double and sign PASS."""
    made = Project(tmp_path / "project")
    calc_project(made)
    made.test("test_sign", TEST_SIGN)
    (made.path / ".gitignore").write_text("__pycache__/\n*.lock\nshard-*/\n")
    result, data = made.run_json("--quest", "scan")
    assert result.ret == 0 and sorted(data["added_pass"]) == [DOUBLE, SIGN], data
    return made


def shard(project: Project, name: str, *tests: str) -> tuple[int, dict[str, Any]]:
    result, data = project.run_json("--quest", "check", "--quest-shard-out", name, *tests)
    return int(result.ret), data


def test_a_shard_made_before_a_test_was_deleted_is_refused(project: Project) -> None:
    assert shard(project, "shard-1", "tests/test_double.py")[0] == 0
    assert shard(project, "shard-2", "tests/test_sign.py")[0] == 0
    (project.path / "tests" / "test_sign.py").unlink()
    result, data = project.run_json("--quest", "check")
    assert result.ret == 1 and [r["id"] for r in data["regressions"]] == [SIGN], data
    result, data = project.run_json("--quest", "combine", "shard-1", "shard-2")
    assert result.ret == 4, data
    assert "tests/test_sign.py is in shard shard-1, not in this checkout" in data["error"]


def test_a_test_changed_after_the_shards_were_made_is_named(project: Project) -> None:
    assert shard(project, "shard-1")[0] == 0
    project.test("test_double", TEST_DOUBLE.replace("double(3) == 6", "double(3) > 0"))
    result, data = project.run_json("--quest", "combine", "shard-1")
    assert result.ret == 4, data
    assert "tests/test_double.py differs between shard shard-1 and this checkout" in data["error"]


def test_shards_of_two_trees_are_not_combined(project: Project) -> None:
    assert shard(project, "shard-1", "tests/test_double.py")[0] == 0
    project.test("test_more", "def test_more():\n    pass\n")
    assert shard(project, "shard-2", "tests/test_sign.py")[0] == 0
    result, data = project.run_json("--quest", "combine", "shard-1", "shard-2")
    assert result.ret == 4, data
    assert (
        "shards shard-1 and shard-2 were made with different test files "
        "(tests/test_more.py is in shard shard-2, not in shard shard-1)" in data["error"]
    )


def test_shards_of_two_commits_are_not_combined(project: Project, tmp_path: Path) -> None:
    init_repo(project.path)
    assert shard(project, "shard-1", "tests/test_double.py")[0] == 0
    (project.path / "README").write_text("a commit that changes no test and no source\n")
    commit_all(project.path, "readme")
    assert shard(project, "shard-2", "tests/test_sign.py")[0] == 0
    result, data = project.run_json("--quest", "combine", "shard-1", "shard-2")
    assert result.ret == 4, data
    assert "shards shard-1 and shard-2 were made at different commits" in data["error"]
    shutil.rmtree(project.path / "shard-1")
    assert shard(project, "shard-1", "tests/test_double.py")[0] == 0
    result, data = project.run_json("--quest", "combine", "shard-1", "shard-2")
    assert result.ret == 0 and data["ok"] is True, data


def test_shards_of_another_commit_than_the_checkout_are_refused(project: Project) -> None:
    init_repo(project.path)
    assert shard(project, "shard-1")[0] == 0
    (project.path / "README").write_text("the checkout moved on\n")
    commit_all(project.path, "readme")
    result, data = project.run_json("--quest", "combine", "shard-1")
    assert result.ret == 4, data
    assert "was made at commit" in data["error"] and "this checkout is at" in data["error"]


def test_a_shard_resealed_with_this_checkouts_test_digests_still_names_its_deleted_test(
    project: Project,
) -> None:
    """The digests are no signature: a manifest re-sealed with the checkout's test digests
    passes the tree check, and the tests it ran still name a file that is gone."""
    assert shard(project, "shard-1", "tests/test_sign.py")[0] == 0
    (project.path / "tests" / "test_sign.py").unlink()
    assert shard(project, "shard-2", "tests/test_double.py")[0] == 0
    now = read_manifest(json.loads((project.path / "shard-2" / MANIFEST).read_text()), "2")
    path = project.path / "shard-1" / MANIFEST
    stale = read_manifest(json.loads(path.read_text()), "1")
    stale.test_digests = now.test_digests
    path.write_text(json.dumps(manifest_of(stale), indent=1, sort_keys=True))
    result, data = project.run_json("--quest", "combine", "shard-1", "shard-2")
    assert result.ret == 4, data
    assert (
        "shard shard-1 ran tests/test_sign.py::test_sign, whose file tests/test_sign.py "
        "is not in this checkout" in data["error"]
    )
