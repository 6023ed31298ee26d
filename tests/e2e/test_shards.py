"""Scans across machines: three shards made in three checkouts, combined in a fourth, give
the ratchet (and the check) of one scan of the whole suite (docs/ci.md).

Each "machine" is its own copy of the project, so the shards' paths really
are made portable.  Built and run once per module; the tests compare.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_export import COMMON, documented_keys
from tests.support.quests import ratchet_view
from tests.support.runner import parse_json, run_pytest

SEMVER = Path(__file__).resolve().parents[1] / "acceptance" / "projects" / "semver"
SYNTH = Path(__file__).resolve().parents[2] / "benchmarks" / "synth.py"


def generate(root: Path, **sizes: int) -> dict[str, Any]:
    """benchmarks/synth.py's project (loaded by path: benchmarks/ is no package)."""
    spec = importlib.util.spec_from_file_location("synth", SYNTH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made: dict[str, Any] = module.generate(root, **sizes)
    return made


EXTRA = """\
def split(x):
    if x > 0:
        return "pos"
    return "neg"


def only_failing(x):
    return x + 1
"""

# `split` is covered by two shards together; `only_failing` only by a test that fails.
EXTRA_A = (
    "from synthpkg.extra import split\n\n\ndef test_split_pos():\n    assert split(1) == 'pos'\n"
)
EXTRA_B = (
    "from synthpkg.extra import only_failing, split\n\n\n"
    "def test_split_neg():\n    assert split(-1) == 'neg'\n\n\n"
    "def test_fails_in_one_shard():\n    assert only_failing(1) == 0\n"
)
SYNTH_SPLIT = [
    ["tests/test_mod000.py", "tests/test_extra_a.py"],
    ["tests/test_mod001.py", "tests/test_extra_b.py"],
    ["tests/test_mod002.py"],
]
SEMVER_SPLIT = [
    ["tests/test_compare.py"],
    ["tests/test_compare_invalid_operands.py", "tests/test_issue484.py"],
    ["tests/test_next_version_legacy_order.py", "tests/test_strict_parsing.py"],
]


def run_json(folder: Path, *args: str, autoload: bool = False) -> tuple[int, dict[str, Any], str]:
    result = run_pytest(
        folder,
        *args,
        "-W",
        "ignore::DeprecationWarning",
        "--quest-format",
        "json",
        autoload=autoload,
    )
    return int(result.ret), parse_json(result), result.stderr.str()


def comparable(path: Path) -> dict[str, Any]:
    """A ratchet file without what depends on the clock (issue times, their seals)."""
    view = ratchet_view(path.read_bytes())
    quests = {}
    for qid, entry in view["quests"].items():
        kept = {k: v for k, v in entry.items() if k not in ("issued_at", "passed_at")}
        # The seals cover the issue and pass times (the clock).
        kept["extra"] = {
            k: v for k, v in entry.get("extra", {}).items() if k not in ("issued_seal", "pass_seal")
        }
        quests[qid] = kept
    return {
        "quests": quests,
        **{k: v for k, v in view.items() if k not in ("quests", "scanned_at")},
    }


class Sharded:
    """A project, one checkout per job and one for the combine; what each run answered."""

    def __init__(self, root: Path, template: Path, split: list[list[str]]) -> None:
        self.split = split
        self.jobs = [root / f"job{n}" for n in range(1, len(split) + 1)]
        self.final = root / "final"
        self.single = root / "single"
        for folder in [*self.jobs, self.final, self.single]:
            shutil.copytree(template, folder)
        self.outputs: list[dict[str, Any]] = []  # what each job answered

    def shards(self, kind: str, xdist: int = 0) -> list[str]:
        """Run each job on its part; copy its shard to the final checkout (the artifacts).

        Job number `xdist` runs its part with ``-n 2`` (every installed plugin loaded).
        """
        names = []
        for n, (job, paths) in enumerate(zip(self.jobs, self.split), start=1):
            args = ["--quest", kind, "--quest-shard-out", "out", *paths]
            if n == xdist:
                args += ["-n", "2"]
            code, data, err = run_json(job, *args, autoload=n == xdist)
            failed = bool(data.get("tests_not_passed")) and any(
                "fails" in test for test in data["tests_not_passed"]
            )
            assert code == (1 if failed else 0), err
            assert data["shard"] == "out" and data["kind"] == kind
            assert n != xdist or "2/2 workers" in err, err
            self.outputs.append(data)
            name = f"shards/{kind}-{n}"
            shutil.copytree(job / "out", self.final / name)
            shutil.rmtree(job / "out")
            names.append(name)
        return names


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("synth")
    template = root / "template"
    generate(template, functions=60, tests=150, seed=1)
    (template / "synthpkg" / "extra.py").write_text(EXTRA)
    (template / "tests" / "test_extra_a.py").write_text(EXTRA_A)
    (template / "tests" / "test_extra_b.py").write_text(EXTRA_B)
    project = Sharded(root, template, SYNTH_SPLIT)
    answers: dict[str, Any] = {}
    answers["single"] = run_json(project.single, "--quest", "scan")
    scan_shards = project.shards("scan")
    answers["combine"] = run_json(project.final, "--quest", "combine", *scan_shards)
    return {"project": project, "answers": answers, "scan_shards": scan_shards}


@pytest.fixture(scope="module")
def synth_check(synth: dict[str, Any]) -> dict[str, Any]:
    """The check of the combined ratchet: in one run, and in three shards combined."""
    project: Sharded = synth["project"]
    answers: dict[str, Any] = synth["answers"]
    shutil.copy(project.final / "quest.json", project.single / "quest.json")
    answers["check"] = run_json(project.single, "--quest", "check")
    for job in project.jobs:
        shutil.copy(project.final / "quest.json", job / "quest.json")
    check_shards = project.shards("check")
    answers["combine_check"] = run_json(project.final, "--quest", "combine", *check_shards)
    answers["partial_check"] = run_json(project.final, "--quest", "combine", *check_shards[:2])
    answers["mixed"] = run_json(
        project.final, "--quest", "combine", synth["scan_shards"][0], check_shards[1]
    )
    return answers


def test_combined_scan_shards_are_the_ratchet_of_one_scan(synth: dict[str, Any]) -> None:
    project, answers = synth["project"], synth["answers"]
    single_code, single, _ = answers["single"]
    code, data, err = answers["combine"]
    # One test failed (in shard 2 only): the scan exits 1, as pytest; quests are recorded.
    assert (code, single_code) == (1, 1), err
    assert data["command"] == "combine" and data["kind"] == "scan"
    assert data["shards"] == ["shards/scan-1", "shards/scan-2", "shards/scan-3"]
    for key in ("added", "added_pass", "removed", "tests_not_passed", "counts", "remaining"):
        assert data[key] == single[key], key
    combined = comparable(project.final / "quest.json")
    assert combined == comparable(project.single / "quest.json")
    quests = combined["quests"]
    assert len(quests) > 60
    split = quests["synthpkg/extra.py::split"]
    assert split["state"] == "PASS"  # measured in two shards, merged
    assert split["covering_tests"] == [
        "tests/test_extra_a.py::test_split_pos",
        "tests/test_extra_b.py::test_split_neg",
    ]
    failing = quests["synthpkg/extra.py::only_failing"]
    assert failing["state"] == "TODO"  # its only test failed: it does not count
    assert failing["covering_tests"] == []
    assert data["tests_not_passed"] == ["tests/test_extra_b.py::test_fails_in_one_shard"]
    docs = documented_keys()  # docs/json-schema.md
    assert set(data) - COMMON <= docs["combine"] | docs["scan"]
    for output in project.outputs:
        assert output["command"] == "scan"
        assert set(output) - COMMON <= docs["shard"]


@pytest.mark.slow
def test_combined_check_shards_are_the_check_of_the_whole_suite(
    synth_check: dict[str, Any],
) -> None:
    answers = synth_check
    single_code, single, _ = answers["check"]
    code, data, err = answers["combine_check"]
    assert code == single_code == 1, err  # the failing test fails the check, as in one run
    assert data["kind"] == "check"
    assert set(data) - COMMON <= documented_keys()["combine"] | documented_keys()["check"]
    for key in ("ok", "checked", "regressions", "tests_failed", "counts"):
        assert data[key] == single[key], key
    assert data["regressions"] == []
    assert data["checked"] > 10
    # Two shards of three: what only the third's tests cover regresses.
    code, data, err = answers["partial_check"]
    assert code == 1, err
    assert data["regressions"]
    assert all(r["id"].startswith("synthpkg/mod002.py::") for r in data["regressions"])


@pytest.mark.slow
def test_scan_and_check_shards_are_not_mixed(synth_check: dict[str, Any]) -> None:
    code, data, err = synth_check["mixed"]
    assert code == 4
    assert data["error"] == (
        "shard shards/check-2 is a check shard, the first one a scan shard: "
        "combine shards of one kind (all made by scan, or all by check)"
    )


def test_a_resealed_shard_cannot_make_its_failed_test_count(
    synth: dict[str, Any], tmp_path: Path
) -> None:
    # The attack: the failed test's outcome edited to "passed" and the manifest's
    # digest recomputed (the digest is no signature).  The job kept that test's
    # arcs apart from the passing tests' (engine/harvest.py), so they still
    # count for nothing.
    from pytest_quest.core.shard import manifest_of, read_manifest

    project = synth["project"]
    final = tmp_path / "final"
    shutil.copytree(project.final, final)
    (final / "quest.json").unlink()
    manifest = final / synth["scan_shards"][1] / "manifest.json"
    shard = read_manifest(json.loads(manifest.read_text()), "s")
    shard.outcomes["tests/test_extra_b.py::test_fails_in_one_shard"] = "passed"
    manifest.write_text(json.dumps(manifest_of(shard)))
    code, data, err = run_json(final, "--quest", "combine", *synth["scan_shards"])
    assert code == 0, err  # the forged shard says every test passed
    failing = comparable(final / "quest.json")["quests"]["synthpkg/extra.py::only_failing"]
    assert failing["state"] == "TODO"
    assert failing["covering_tests"] == []


def test_a_hand_edited_shard_is_refused_with_exit_4(synth: dict[str, Any], tmp_path: Path) -> None:
    project = synth["project"]
    final = tmp_path / "final"
    shutil.copytree(project.final, final)
    manifest = final / synth["scan_shards"][1] / "manifest.json"
    data = json.loads(manifest.read_text())
    data["outcomes"]["tests/test_extra_b.py::test_fails_in_one_shard"] = "passed"
    manifest.write_text(json.dumps(data))
    before = (final / "quest.json").read_bytes()
    code, answer, _ = run_json(final, "--quest", "combine", *synth["scan_shards"])
    assert code == 4
    assert answer["error"].startswith(
        "shard shards/scan-2: manifest.json does not match its digest (hand-edited or damaged)"
    )
    assert (final / "quest.json").read_bytes() == before
    code, answer, _ = run_json(final, "--quest", "combine", "shards/none")
    assert (code, answer["error"]) == (4, "file or directory not found: shards/none")
    code, answer, _ = run_json(final, "--quest", "combine")
    assert code == 4 and answer["error"].startswith("combine needs the shard folders")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["next", "--quest-shard-out", "out"], "--quest-shard-out is an option of `pytest"),
        (
            ["check", "--quest-shard-out", "out", "--quest-base", "HEAD"],
            "--quest-base belongs to `pytest --quest combine`",
        ),
    ],
)
def test_shard_out_is_refused_where_it_does_not_fit(
    synth: dict[str, Any], args: list[str], message: str
) -> None:
    code, answer, _ = run_json(synth["project"].final, "--quest", *args)
    assert code == 4
    assert answer["error"].startswith(message)


@pytest.mark.slow
@pytest.mark.children_measured
def test_combined_shards_of_a_real_suite_are_the_ratchet_of_one_scan(tmp_path: Path) -> None:
    # semver 3.1.2's own tests, split by file into three jobs; the first with xdist.
    pytest.importorskip("xdist")
    template = tmp_path / "template"
    shutil.copytree(SEMVER, template)
    project = Sharded(tmp_path, template, SEMVER_SPLIT)
    code, single, err = run_json(project.single, "--quest", "scan")
    assert code == 0, err
    code, data, err = run_json(project.final, "--quest", "combine", *project.shards("scan", 1))
    assert code == 0, err
    assert data["counts"] == single["counts"]
    combined = comparable(project.final / "quest.json")
    assert combined == comparable(project.single / "quest.json")
    assert sum(q["state"] == "PASS" for q in combined["quests"].values()) >= 20
    # A function measured by tests of several shards is merged.
    covering = combined["quests"]["src/semver/version.py::Version.compare"]["covering_tests"]
    assert {test.split("::")[0] for test in covering} >= {
        "tests/test_compare.py",
        "tests/test_compare_invalid_operands.py",
    }


@pytest.mark.slow
def test_a_combined_check_re_judges_against_a_base_as_one_check(tmp_path: Path) -> None:
    # The combine runs the check's --quest-base-file re-judging (gate steps 1-5
    # for each PASS new since the base) exactly as one check of the suite does.
    from pytest_quest.engine.codec import dumps, loads

    template = tmp_path / "template"
    shutil.copytree(SEMVER, template)
    code, _, err = run_json(template, "--quest", "scan")
    assert code == 0, err
    ratchet = loads((template / "quest.json").read_bytes())
    new = "src/semver/version.py::Version.is_valid"
    assert ratchet.quests[new].state.name == "PASS"
    del ratchet.quests[new]  # the base: before that PASS
    written = dumps(ratchet)
    (template / "base.json").write_bytes(
        written if isinstance(written, bytes) else written.encode()
    )
    project = Sharded(tmp_path, template, SEMVER_SPLIT)
    base = ["--quest-base-file", "base.json"]
    code, single, err = run_json(project.single, "--quest", "check", *base)
    assert code == 0, err
    shards = project.shards("check")
    code, data, err = run_json(project.final, "--quest", "combine", *shards, *base)
    assert code == 0, err
    assert data["kind"] == "check" and data["ok"] is True
    for answer in (single, data):  # the time taken, and the base's path in its checkout
        del answer["rejudged"]["seconds"], answer["rejudged"]["base"]
    assert data["rejudged"] == single["rejudged"]
    assert [q["id"] for q in data["rejudged"]["quests"]] == [new]
    assert data["rejudged"]["quests"][0]["verdict"] == "PASS"
