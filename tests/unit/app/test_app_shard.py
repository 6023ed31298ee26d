"""app/shard.py in-process: three shards combined give the ratchet of one scan of the whole suite.

The coverage data is written here as a run leaves it (one context per test,
the import-time arcs in the empty context), so no tracer runs: the shards go
through the real writer, reader, coverage.py's ``CoverageData.update`` and
the scan's own analysis and merge.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from app_calc import CLAMP, DOUBLE, SIGN, CalcProject

from pytest_quest.app.check import check
from pytest_quest.app.context import RunData
from pytest_quest.app.scan import scan
from pytest_quest.app.shard import ShardRun, combine, shard_out
from pytest_quest.core.errors import MeasurementError, QuestUsageError
from pytest_quest.core.run import CollectionError
from pytest_quest.core.shard import digest_bytes, manifest_of
from pytest_quest.engine.measure import Measurer, analyze, coverage_settings
from pytest_quest.engine.shard import read_shard
from pytest_quest.engine.testfiles import digest_test_files
from tests.support.quests import ratchet_view

# The arcs coverage.py records for src/pkg/calc.py (app_calc.CALC).
IMPORT = [(-1, 1), (1, 5), (5, 11), (11, -1)]
DOUBLE_ARCS = [(-1, 2), (2, -1)]
SIGN_NEG = [(-5, 6), (6, 7), (7, -5)]
SIGN_POS = [(-5, 6), (6, 8), (8, -5)]
CLAMP_LOW = [(-11, 12), (12, 13), (13, -11)]
CLAMP_HIGH = [(-11, 12), (12, 14), (14, 15), (15, -11)]
CLAMP_MID = [(-11, 12), (12, 14), (14, 16), (16, -11)]

# Per shard: test -> (outcome, arcs).  clamp is covered only by the three
# shards together; sign's negative branch only by a test that fails.
Shards = dict[str, dict[str, tuple[str, list[tuple[int, int]]]]]
SHARDS: Shards = {
    "a": {
        "tests/test_calc.py::test_double": ("passed", DOUBLE_ARCS),
        "tests/test_calc.py::test_low": ("passed", CLAMP_LOW),
    },
    "b": {
        "tests/test_sign.py::test_negative": ("failed", SIGN_NEG),
        "tests/test_sign.py::test_positive": ("passed", SIGN_POS),
        "tests/test_sign.py::test_high": ("passed", CLAMP_HIGH),
    },
    "c": {
        "tests/test_mid.py::test_mid": ("passed", CLAMP_MID),
        "tests/test_mid.py::test_skipped": ("skipped", []),
    },
}


class Job:
    """One measuring process: a measurer configured as the scan's (never started), its data."""

    def __init__(self, project: CalcProject, name: str) -> None:
        self.project = project
        folder = Path(tempfile.mkdtemp(prefix=f"data-{name}-", dir=project.root.parent))
        self.measurer = Measurer(
            project.root,
            [str(project.root / "src" / "pkg")],
            str(folder / ".coverage"),
            data_dir=str(folder),
            children=False,
        )

    def record(self, tests: dict[str, tuple[str, list[tuple[int, int]]]]) -> dict[str, str]:
        """Write the tests' arcs into the measurer's data as a run does; their outcomes."""
        filename = str(self.project.root / "src" / "pkg" / "calc.py")
        data = self.measurer.cov.get_data()
        data.set_context("")
        data.add_arcs({filename: IMPORT})
        for test, (_, arcs) in tests.items():
            data.set_context(test)
            data.add_arcs({filename: arcs})
        data.set_context(None)
        return {test: outcome for test, (outcome, _) in tests.items()}

    def run(self, outcomes: dict[str, str], **changes: Any) -> RunData:
        passed = {t for t, o in outcomes.items() if o == "passed"}
        failed = {t for t, o in outcomes.items() if o in ("failed", "error")}
        values: dict[str, Any] = {
            "outcomes": outcomes,
            "measured_roots": [str(self.project.root / "src" / "pkg")],
            "analyze": lambda: analyze(self.measurer.cov, self.project.root, passed, failed=failed),
        }
        values.update(changes)
        return RunData(**values)

    def shard_run(self) -> ShardRun:
        cov = self.measurer.cov
        return ShardRun(
            data_filename=cov.config.data_file,
            config=coverage_settings(cov, self.project.root),
            measured_roots=[str(self.project.root / "src" / "pkg")],
            errors={"tests/test_sign.py::test_negative": "AssertionError"},
            test_digests=digest_test_files(self.project.context("scan").tests, self.project.root),
        )


def quests(project: CalcProject) -> dict[str, Any]:
    view = ratchet_view((project.root / "quest.json").read_bytes())
    found = {}
    for qid, entry in view["quests"].items():
        kept = {k: v for k, v in entry.items() if k not in ("issued_at", "passed_at")}
        kept["extra"] = {
            k: v for k, v in entry["extra"].items() if k not in ("issued_seal", "pass_seal")
        }
        found[qid] = kept
    header = {k: v for k, v in view.items() if k not in ("quests", "scanned_at")}
    return {"quests": found, "header": header}


def make_shards(project: CalcProject, kind: str, shards: Shards = SHARDS) -> list[Path]:
    ratchet = project.root / "quest.json"
    before = ratchet.read_bytes() if ratchet.exists() else None
    folders = []
    for name, tests in shards.items():
        job = Job(project, f"{kind}-{name}")
        outcomes = job.record(tests)
        folder = project.root / "shards" / f"{kind}-{name}"
        ctx = project.context(kind, run=job.run(outcomes), shard_out=folder)
        output = shard_out(ctx, job.shard_run())
        assert output.data["shard"] == f"shards/{kind}-{name}"
        failed = any(outcome == "failed" for outcome, _ in tests.values())
        assert output.exitcode == (1 if failed else 0)  # as the job's pytest
        folders.append(folder)
    # A shard's job writes no ratchet.
    assert (ratchet.read_bytes() if ratchet.exists() else None) == before
    return folders


def single_scan(project: CalcProject) -> dict[str, Any]:
    job = Job(project, "single")
    outcomes = job.record({t: v for tests in SHARDS.values() for t, v in tests.items()})
    return scan(project.context("scan", run=job.run(outcomes))).data


Pair = tuple[CalcProject, CalcProject]


@pytest.fixture
def pair(tmp_path: Path) -> Pair:
    single = CalcProject(tmp_path / "single")
    sharded = CalcProject(tmp_path / "sharded")
    for project in (single, sharded):
        project.test("test_calc", "def test_double():\n    pass\n")
        # The files of the tests the shards name: a combine refuses a test whose file is gone.
        project.test("test_sign", "def test_positive():\n    pass\n")
        project.test("test_mid", "def test_mid():\n    pass\n")
    return single, sharded


def test_three_shards_combine_into_the_ratchet_of_one_scan(pair: Pair) -> None:
    single, sharded = pair
    expected = single_scan(single)
    folders = make_shards(sharded, "scan")
    output = combine(sharded.context("combine", shards=folders))
    assert output.exitcode == 1  # a test failed in shard b: as the scan's pytest, 1
    assert quests(sharded) == quests(single)
    assert output.data["kind"] == "scan"
    assert output.data["shards"] == ["shards/scan-a", "shards/scan-b", "shards/scan-c"]
    for key in ("added", "added_pass", "tests_not_passed", "counts"):
        assert output.data[key] == expected[key], key
    assert output.lines[0] == "combine: 3 scan shards, 7 tests, 5 passed"
    view = quests(sharded)["quests"]
    assert view[CLAMP]["state"] == "PASS"  # measured in three shards, merged
    assert view[CLAMP]["covering_tests"] == [
        "tests/test_calc.py::test_low",
        "tests/test_mid.py::test_mid",
        "tests/test_sign.py::test_high",
    ]
    assert view[SIGN]["state"] == "TODO"  # its negative branch: only a failing test ran it
    assert view[SIGN]["missing_lines"] == [7]
    assert view[SIGN]["covering_tests"] == ["tests/test_sign.py::test_positive"]
    assert view[DOUBLE]["state"] == "PASS"


def test_check_shards_combine_into_the_check_of_the_whole_suite(pair: Pair) -> None:
    _, project = pair
    make_shards(project, "scan")
    combine(project.context("combine", shards=sorted((project.root / "shards").iterdir())))
    folders = make_shards(project, "check")
    output = combine(project.context("combine", shards=folders))
    assert output.exitcode == 1  # the failing test of shard b fails the check, as in one run
    assert output.data["tests_failed"] == ["tests/test_sign.py::test_negative"]
    assert output.data["kind"] == "check"
    assert output.data["regressions"] == []
    assert output.data["checked"] == 2
    passing = {name: dict(tests) for name, tests in SHARDS.items()}
    del passing["b"]["tests/test_sign.py::test_negative"]
    folders = make_shards(project, "check", passing)
    output = combine(project.context("combine", shards=folders))
    assert output.exitcode == 0, output.lines
    assert output.lines[-1] == "check: OK"
    # Without shard c, clamp's last branch is not taken: the check of that part regresses.
    output = combine(project.context("combine", shards=folders[:2]))
    assert output.exitcode == 1
    assert [r["id"] for r in output.data["regressions"]] == [CLAMP]


def test_a_test_passing_in_one_shard_and_failing_in_another_is_refused(pair: Pair) -> None:
    _, project = pair
    flaky = "tests/test_calc.py::test_double"
    folders = make_shards(
        project,
        "scan",
        {"a": {flaky: ("passed", DOUBLE_ARCS)}, "b": {flaky: ("failed", DOUBLE_ARCS)}},
    )
    with pytest.raises(QuestUsageError) as caught:
        combine(project.context("combine", shards=folders))
    assert str(caught.value).startswith(
        f"test {flaky} passed in shard shards/scan-a and failed in shard shards/scan-b"
    )
    assert not (project.root / "quest.json").exists()


def test_a_shard_edited_or_truncated_is_refused_naming_it(pair: Pair) -> None:
    _, project = pair
    folders = make_shards(project, "scan")
    manifest = folders[1] / "manifest.json"
    original = manifest.read_text()
    data = json.loads(original)
    data["outcomes"]["tests/test_sign.py::test_negative"] = "passed"
    manifest.write_text(json.dumps(data))
    with pytest.raises(
        QuestUsageError, match=r"^shard shards/scan-b: manifest.json does not match"
    ):
        combine(project.context("combine", shards=folders))
    manifest.write_text(original[: len(original) // 2])
    with pytest.raises(QuestUsageError, match=r"^shard shards/scan-b: manifest.json is not valid"):
        combine(project.context("combine", shards=folders))
    manifest.write_text(original)
    database = folders[2] / "coverage.db"
    database.write_bytes(database.read_bytes()[:1000])
    with pytest.raises(QuestUsageError, match=r"^shard shards/scan-c: its data file coverage.db"):
        combine(project.context("combine", shards=folders))
    os.unlink(database)
    with pytest.raises(QuestUsageError, match=r"coverage.db is missing or unreadable"):
        read_shard(folders[2], "x")
    (folders[0] / "manifest.json").unlink()
    with pytest.raises(QuestUsageError, match=r"^shard shards/scan-a: no manifest.json"):
        combine(project.context("combine", shards=folders))
    with pytest.raises(QuestUsageError, match=r"^combine needs the shard folders"):
        combine(project.context("combine"))
    with pytest.raises(QuestUsageError, match=r"^shard shards/scan-b is given twice"):
        combine(project.context("combine", shards=[folders[1], folders[2], folders[1]]))
    assert not (project.root / "quest.json").exists()


def test_shards_of_another_kind_source_or_commit_are_refused(pair: Pair) -> None:
    _, project = pair
    scans = make_shards(project, "scan")
    checks = make_shards(project, "check", {"x": SHARDS["a"]})
    with pytest.raises(QuestUsageError, match=r"^shard shards/check-x is a check shard, the first"):
        combine(project.context("combine", shards=[scans[0], checks[0]]))
    with pytest.raises(QuestUsageError, match=r"^--quest-base is an option of a check"):
        combine(project.context("combine", shards=scans, base_ref="HEAD"))
    (project.root / "lib").mkdir()
    with pytest.raises(QuestUsageError, match=r"measured the sources \['src/pkg'\], this combine"):
        combine(project.context("combine", shards=scans, sources=[project.root / "lib"]))
    (project.root / "pyproject.toml").write_text(
        "[tool.coverage.report]\nexclude_lines = ['return -1']\n"
    )
    with pytest.raises(QuestUsageError, match=r"other coverage settings \(report:exclude_lines"):
        combine(project.context("combine", shards=scans))
    (project.root / "pyproject.toml").unlink()
    project.write_source(project.source + "\n\ndef more():\n    return 2\n")
    with pytest.raises(
        QuestUsageError, match=r"measured src/pkg/calc.py, which has other contents"
    ):
        combine(project.context("combine", shards=scans))


def test_a_shard_with_collection_errors_is_written_and_refused_as_the_scan_would(
    pair: Pair,
) -> None:
    _, project = pair
    job = Job(project, "broken")
    outcomes = job.record(SHARDS["a"])
    error = CollectionError("tests/test_broken.py", 2, "NameError: name 'x' is not defined")
    folder = project.root / "shards" / "broken"
    ctx = project.context(
        "scan", run=job.run(outcomes, collection_errors=[error]), shard_out=folder
    )
    with pytest.raises(QuestUsageError, match=r"^collection error in the tests \(tests/test_b"):
        shard_out(ctx, job.shard_run())
    assert read_shard(folder, "broken").collection_errors == [error]
    with pytest.raises(QuestUsageError, match=r"^collection error in the tests \(tests/test_b"):
        combine(project.context("combine", shards=[folder]))
    # check: the shard says so and exits as the check of a suite that did not run.
    check_folder = project.root / "shards" / "broken-check"
    ctx = project.context(
        "check", run=job.run(outcomes, collection_errors=[error]), shard_out=check_folder
    )
    output = shard_out(ctx, job.shard_run())
    assert output.exitcode == 2
    assert output.data["collection_errors"] == 1
    single_scan(project)
    expected = check(
        project.context("check", run=RunData(outcomes=outcomes, collection_errors=[error]))
    )
    output = combine(project.context("combine", shards=[check_folder]))
    assert output.exitcode == expected.exitcode == 2
    assert output.data["collection_errors"] == expected.data["collection_errors"]
    assert output.lines[1:] == expected.lines


def test_a_shard_folder_holding_other_files_is_refused(pair: Pair) -> None:
    _, project = pair
    folder = project.root / "busy"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    job = Job(project, "busy")
    ctx = project.context("scan", run=job.run(job.record(SHARDS["c"])), shard_out=folder)
    with pytest.raises(QuestUsageError, match=r"the folder holds other files \(notes.txt\)"):
        shard_out(ctx, job.shard_run())
    (folder / "notes.txt").unlink()
    shard_out(ctx, job.shard_run())
    shard_out(ctx, job.shard_run())  # a shard there is replaced
    assert sorted(p.name for p in folder.iterdir()) == ["coverage.db", "manifest.json"]
    (project.root / "file").write_text("")
    ctx = project.context("scan", run=job.run({}), shard_out=project.root / "file")
    with pytest.raises(QuestUsageError, match=r"file: not a folder"):
        shard_out(ctx, job.shard_run())


def test_coverage_data_that_cannot_be_read_writes_no_shard(pair: Pair) -> None:
    _, project = pair
    job = Job(project, "garbage")
    ctx = project.context(
        "scan", run=job.run(job.record(SHARDS["c"])), shard_out=project.root / "g"
    )
    run = job.shard_run()
    job.measurer.cov.get_data().close()
    Path(str(run.data_filename)).write_bytes(b"not a database")
    with pytest.raises(MeasurementError, match=r"could not be read \(.*; no shard was written to"):
        shard_out(ctx, run)
    assert not (project.root / "g" / "manifest.json").exists()


def test_a_resealed_shard_must_still_name_a_digest_for_each_file_and_hold_coverage_data(
    pair: Pair,
) -> None:
    _, project = pair
    folder = make_shards(project, "scan", {"a": SHARDS["a"]})[0]
    shard = read_shard(folder, "a")
    manifest = folder / "manifest.json"

    def reseal() -> None:
        manifest.write_text(json.dumps(manifest_of(shard)))

    shard.source_digests = {}
    reseal()
    with pytest.raises(QuestUsageError, match=r"^shard a: its data names src/pkg/calc.py, which"):
        read_shard(folder, "a")
    shard.source_digests = {"src/pkg/calc.py": "sha256:x"}
    (folder / "coverage.db").write_bytes(b"not a database" * 100)
    shard.data_digest = digest_bytes((folder / "coverage.db").read_bytes())
    reseal()
    with pytest.raises(QuestUsageError, match=r"^shard a: its data file coverage.db is not cov"):
        read_shard(folder, "a")
