"""core/shard.py: a shard's manifest read strictly, and the pure merge of the shards' runs."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.run import CollectionError
from pytest_quest.core.shard import (
    SHARD_FORMAT,
    Shard,
    changed_sources,
    check_fits,
    digest_bytes,
    manifest_of,
    merge,
    read_manifest,
)

CONFIG = {"run:branch": True, "run:source": ["src/pkg"], "report:exclude_lines": ["pragma"]}
ENV = {"python": "CPython 3.11", "coverage": "7.17.5"}


def make(where: str, outcomes: dict[str, str], **changes: Any) -> Shard:
    values: dict[str, Any] = {
        "kind": "scan",
        "sources": ["src/pkg"],
        "measured_roots": ["src/pkg"],
        "config": copy.deepcopy(CONFIG),
        "environment": dict(ENV),
        "outcomes": outcomes,
        "data_digest": digest_bytes(b"data"),
        "source_digests": {"src/pkg/m.py": digest_bytes(b"m")},
        "where": where,
    }
    values.update(changes)
    return Shard(**values)


def test_a_manifest_reads_back_as_its_shard() -> None:
    shard = make(
        "shards/1",
        {"t::a": "passed", "t::b": "failed"},
        errors={"t::b": "AssertionError"},
        collection_errors=[CollectionError("tests/t.py", 3, "boom")],
        notes=["t::a: a child process wrote late"],
        only_files=["src/pkg/m.py"],
    )
    manifest = manifest_of(shard)
    assert manifest["format"] == SHARD_FORMAT
    assert read_manifest(manifest, "shards/1") == shard
    assert read_manifest(manifest_of(make("x", {})), "x").only_files is None


def field_error(manifest: dict[str, Any], where: str = "shards/2") -> str:
    with pytest.raises(QuestUsageError) as caught:
        read_manifest(manifest, where)
    return str(caught.value)


def resealed(manifest: dict[str, Any]) -> dict[str, Any]:
    """`manifest` with its digest made to match again (a careful hand edit)."""
    from pytest_quest.core.shard import _canonical

    manifest["digest"] = digest_bytes(_canonical(manifest))
    return manifest


def test_a_hand_edit_is_refused_by_the_digest_naming_the_shard() -> None:
    manifest = manifest_of(make("s", {"t::a": "failed"}))
    manifest["outcomes"]["t::a"] = "passed"  # the cheat: make a failed test count
    message = field_error(manifest)
    assert message.startswith("shard shards/2: manifest.json does not match its digest")
    assert "pytest --quest scan --quest-shard-out DIR" in message
    del manifest["digest"]
    assert "field digest: missing" in field_error(manifest)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda m: m.update(format="pytest-quest-shard/0"), "field format: 'pytest-quest-shard/0'"),
        (lambda m: m.update(kind="audit"), "field kind: 'audit' is neither scan nor check"),
        (lambda m: m.pop("outcomes"), "field outcomes: missing"),
        (lambda m: m.update(outcomes=[]), "field outcomes: expected an object, found list"),
        (lambda m: m["outcomes"].update({"t::a": "won"}), "outcomes['t::a']: unknown value 'won'"),
        (lambda m: m["outcomes"].update({"t::a": 1}), "outcomes['t::a']: expected a string"),
        (lambda m: m.update(sources=["src", 3]), "field sources: expected a list of strings"),
        (lambda m: m.update(data={"file": "x.db"}), "field data: expected"),
        (lambda m: m.update(collection_errors=[{"file": "a"}]), "collection_errors[0]"),
        (
            lambda m: m["source_digests"].update({"../etc/passwd": "sha256:0"}),
            "source_digests['../etc/passwd']: climbs out",
        ),
        (
            lambda m: m.update(test_digests={"../tests/test_x.py": "sha256:0"}),
            "test_digests['../tests/test_x.py']: climbs out",
        ),
        (lambda m: m.update(only_files=[1]), "field only_files: expected a list of strings"),
        (lambda m: m.update(notes=True), "field notes: expected a list, found bool"),
    ],
)
def test_each_bad_field_is_named(edit: Callable[[dict[str, Any]], object], expected: str) -> None:
    manifest = manifest_of(make("s", {"t::a": "passed"}))
    edit(manifest)
    message = field_error(resealed(manifest))
    assert message.startswith("shard shards/2: ")
    assert expected in message


def test_a_manifest_that_is_no_object_is_no_shard() -> None:
    assert "is not a JSON object" in field_error([1, 2])  # type: ignore[arg-type]


def test_merge_adds_up_the_runs_as_one_run_of_the_whole_suite() -> None:
    one = make(
        "1",
        {"t::a": "passed", "t::b": "failed", "t::s": "skipped"},
        errors={"t::b": "boom"},
        collection_errors=[CollectionError("tests/x.py", 1, "bad")],
        notes=["n1"],
    )
    two = make(
        "2",
        {"t::c": "passed", "t::s": "passed", "t::e": "error", "t::b": "failed"},
        errors={"t::e": "in setup: oops", "t::b": "other"},
        measured_roots=["src/pkg", "src/other"],
        source_digests={"src/pkg/m.py": digest_bytes(b"m"), "src/pkg/n.py": digest_bytes(b"n")},
        notes=["n1", "n2"],
    )
    merged = merge([one, two])
    assert merged.kind == "scan"
    assert merged.outcomes == {
        "t::a": "passed",
        "t::b": "failed",
        "t::c": "passed",
        "t::e": "error",
        "t::s": "passed",  # skipped in one shard, passed in another: it passed, failed nowhere
    }
    assert merged.passed == {"t::a", "t::c", "t::s"}
    assert merged.failed == {"t::b", "t::e"}
    assert merged.errors == {"t::b": "boom", "t::e": "in setup: oops"}
    assert merged.collection_errors == [CollectionError("tests/x.py", 1, "bad")]
    assert merged.notes == ["n1", "n2"]
    assert merged.measured_roots == ["src/pkg", "src/other"]
    assert sorted(merged.source_digests) == ["src/pkg/m.py", "src/pkg/n.py"]
    assert merged.only_files is None
    assert merge([]).kind == "scan"
    assert merge([make("3", {"t::x": "xfailed"})]).outcomes == {"t::x": "xfailed"}


@pytest.mark.parametrize("failing", ["failed", "error"])
def test_a_test_that_failed_in_any_shard_never_counts(failing: str) -> None:
    passed = make("shards/a", {"t::flaky": "passed"})
    failed = make("shards/b", {"t::flaky": failing})
    for order in ([passed, failed], [failed, passed]):
        with pytest.raises(QuestUsageError) as caught:
            merge(order)
        message = str(caught.value)
        assert message.startswith(
            f"test t::flaky passed in shard shards/a and {failing} in shard shards/b"
        )
        assert "run each test in one shard only" in message


def test_only_files_are_merged_with_every_file_of_a_shard_that_analyzed_all() -> None:
    limited = make("1", {}, only_files=["src/pkg/m.py"], source_digests={})
    whole = make("2", {}, source_digests={"src/pkg/n.py": digest_bytes(b"n")})
    assert merge([limited, whole]).only_files == ["src/pkg/m.py", "src/pkg/n.py"]
    assert merge([limited]).only_files == ["src/pkg/m.py"]


def test_shards_that_saw_different_sources_are_refused() -> None:
    one = make("1", {})
    two = make("2", {}, source_digests={"src/pkg/m.py": digest_bytes(b"changed")})
    with pytest.raises(QuestUsageError, match=r"shards 1 and 2 measured different contents of "):
        merge([one, two])


def fits(shard: Shard, **changes: Any) -> None:
    values: dict[str, Any] = {
        "kind": "scan",
        "config": CONFIG,
        "sources": ["src/pkg"],
        "environment": ENV,
        "rootdir_hint": " (hint)",
    }
    values.update(changes)
    check_fits(shard, **values)


def test_a_shard_fits_a_combine_of_the_same_kind_config_sources_and_versions() -> None:
    fits(make("1", {}))
    with pytest.raises(QuestUsageError, match=r"^shard 1 is a check shard, the first one a scan"):
        fits(make("1", {}, kind="check"))
    with pytest.raises(QuestUsageError) as caught:
        fits(make("1", {}, environment={"python": "CPython 3.12", "coverage": "7.17.5"}))
    assert "shard 1 was made in another environment (python is 'CPython 3.12' there, " in str(
        caught.value
    )
    with pytest.raises(QuestUsageError, match=r"measured the sources \['lib'\], this combine"):
        fits(make("1", {}, sources=["lib"]))
    edited = copy.deepcopy(CONFIG)
    edited["report:exclude_lines"] = ["pragma", "return"]
    with pytest.raises(QuestUsageError) as caught:
        fits(make("1", {}, config=edited))
    message = str(caught.value)
    assert message.startswith("shard 1 was measured with other coverage settings")
    assert "report:exclude_lines is ['pragma', 'return'] there, ['pragma'] here" in message
    assert message.endswith(" (hint)")


def test_a_source_changed_since_the_shards_is_refused() -> None:
    merged = merge([make("shards/1", {})])
    changed_sources(merged, {"src/pkg/m.py": digest_bytes(b"m")})
    with pytest.raises(QuestUsageError, match=r"^shard shards/1 measured src/pkg/m.py, which has"):
        changed_sources(merged, {"src/pkg/m.py": digest_bytes(b"new")})
    with pytest.raises(QuestUsageError, match=r"which is missing here"):
        changed_sources(merged, {"src/pkg/m.py": None})


COMMIT = "0123456789abcdef0123"
TESTS = {"tests/test_a.py": "sha256:a", "tests/test_b.py": "sha256:b"}


def same_tree_error(
    shards: list[Shard], *, commit: str = COMMIT, tests: dict[str, str] | None = None
) -> str:
    from pytest_quest.core.shard import check_same_tree

    with pytest.raises(QuestUsageError) as raised:
        check_same_tree(shards, commit=commit, tests=TESTS if tests is None else tests)
    return str(raised.value)


def test_shards_of_this_commit_and_these_test_files_fit() -> None:
    from pytest_quest.core.shard import check_same_tree

    shards = [make(f"s/{n}", {}, commit=COMMIT, test_digests=dict(TESTS)) for n in (1, 2)]
    check_same_tree(shards, commit=COMMIT, tests=dict(TESTS))  # no error


def test_shards_made_at_different_commits_are_refused_naming_both() -> None:
    shards = [
        make("s/1", {}, commit=COMMIT, test_digests=dict(TESTS)),
        make("s/2", {}, commit="", test_digests=dict(TESTS)),
    ]
    assert same_tree_error(shards) == (
        "shards s/1 and s/2 were made at different commits (0123456789ab and outside git): "
        "make every shard from the same commit"
    )


@pytest.mark.parametrize(
    ("second", "difference"),
    [
        ({"tests/test_a.py": "sha256:a"}, "tests/test_b.py is in shard s/1, not in shard s/2"),
        (
            {**TESTS, "tests/test_c.py": "sha256:c"},
            "tests/test_c.py is in shard s/2, not in shard s/1",
        ),
        (
            {**TESTS, "tests/test_a.py": "sha256:x"},
            "tests/test_a.py differs between shard s/1 and shard s/2",
        ),
    ],
)
def test_shards_made_with_different_test_files_name_the_first_difference(
    second: dict[str, str], difference: str
) -> None:
    shards = [
        make("s/1", {}, commit=COMMIT, test_digests=dict(TESTS)),
        make("s/2", {}, commit=COMMIT, test_digests=second),
    ]
    assert same_tree_error(shards) == (
        f"shards s/1 and s/2 were made with different test files ({difference}): "
        "make every shard from the same tree"
    )


def test_shards_of_another_commit_than_the_checkout_are_refused() -> None:
    shards = [make("s/1", {}, commit=COMMIT, test_digests=dict(TESTS))]
    assert same_tree_error(shards, commit="") == (
        "shard s/1 was made at commit 0123456789ab, this checkout is at (outside git): run the "
        "combine in a checkout of the commit the shards were made from"
    )
    outside = [make("s/1", {}, commit="", test_digests=dict(TESTS))]
    assert same_tree_error(outside, commit=COMMIT) == (
        "shard s/1 was made at commit (outside git), this checkout is at 0123456789ab: run the "
        "combine in a checkout of the commit the shards were made from"
    )


def test_shards_made_with_other_test_files_than_the_checkout_are_refused() -> None:
    shards = [make("s/1", {}, commit=COMMIT, test_digests=dict(TESTS))]
    here = {**TESTS, "tests/test_b.py": "sha256:changed"}
    assert same_tree_error(shards, tests=here) == (
        "shard s/1 was made with other test files than this checkout's (tests/test_b.py differs "
        "between shard s/1 and this checkout): what a deleted or changed test covered would "
        "count; make the shards again from this tree"
    )


def test_a_shard_that_ran_a_test_of_a_file_not_here_is_refused() -> None:
    from pytest_quest.core.shard import check_tests_present

    shards = [
        make("s/1", {"tests/test_a.py::test_x": "passed"}),
        make("s/2", {"tests/test_gone.py::test_y": "passed", "tests/test_a.py::test_z": "failed"}),
    ]
    check_tests_present(shards[:1], {"tests/test_a.py"})  # no error
    with pytest.raises(QuestUsageError) as raised:
        check_tests_present(shards, {"tests/test_a.py"})
    assert str(raised.value) == (
        "shard s/2 ran tests/test_gone.py::test_y, whose file tests/test_gone.py is not in this "
        "checkout: make the shards again from this tree"
    )
