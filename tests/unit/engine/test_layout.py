"""The ratchet file's version 2 (engine/layout.py): what it stores, its diffs, reading version 1."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State, branch_fact, line_fact
from pytest_quest.core.seal import mark_seals
from pytest_quest.engine import layout, records
from pytest_quest.engine.codec import dumps, dumps_v1, loads, quest_to_dict, ratchet_to_dict
from pytest_quest.engine.store import RatchetStore

# Five PASS and two TODO quests of this repository's own quest.json as main
# wrote it in version 1 (2026-12-01), byte for byte.
V1_FIXTURE = Path(__file__).parent / "data" / "quest_v1.json"

FILE = "src/pkg/m.py"


def todo(name: str, tests: list[str], **fields: Any) -> Quest:
    quest = Quest(
        id=f"{FILE}::{name}",
        file=FILE,
        qualname=name,
        first=3,
        last=9,
        fingerprint=f"fp-{name}",
        statements=5,
        branches=2,
        missing_lines=[4, 5],
        missing_branches=[(3, 4), (8, -3)],
        covering_tests=tests,
        issued_at="2026-01-01T00:00:00Z",
    )
    quest.facts = [line_fact(FILE, 4), line_fact(FILE, 5)]
    quest.facts += [branch_fact(FILE, (3, 4)), branch_fact(FILE, (8, -3))]
    return replace(quest, **fields)


def passed(name: str, tests: list[str]) -> Quest:
    return Quest(
        id=f"{FILE}::{name}",
        file=FILE,
        qualname=name,
        first=20,
        last=22,
        fingerprint=f"fp-{name}",
        state=State.PASS,
        statements=2,
        covering_tests=tests,
        issued_at="2026-01-01T00:00:00Z",
        passed_at="2026-01-02T00:00:00Z",
        baseline=True,
    )


def ratchet_of(*quests: Quest) -> Ratchet:
    return Ratchet(quests={q.id: q for q in quests}, scanned_at="2026-01-01T00:00:00Z")


def stored(text: str, qid: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(text)["quests"][qid]
    return found


def test_a_scan_todo_stores_no_rendered_facts_and_reads_them_back() -> None:
    ratchet = ratchet_of(todo("f", ["tests/t.py::a"]))
    text = dumps(ratchet)
    assert "facts" not in stored(text, f"{FILE}::f")
    assert "never executed" not in text
    assert loads(text) == ratchet
    assert loads(text).quests[f"{FILE}::f"].facts == ratchet.quests[f"{FILE}::f"].facts


def test_a_gate_verdicts_facts_are_kept() -> None:
    gate = [Fact("gate.stability", f"{FILE}:4", "stable", "flaky", "line 4 flips")]
    for quest in (
        todo("f", ["tests/t.py::a"], facts=gate, tries=1),  # a FAILed submit
        todo("g", ["tests/t.py::a"], state=State.REVIEW, facts=gate),
        todo("h", [], facts=[]),  # no facts although lines are missing: not derivable
        todo("k", [], facts=[line_fact(FILE, 4)], extra={"facts_from": "gate"}),
    ):
        text = dumps(ratchet_of(quest))
        assert "facts" in stored(text, quest.id)
        assert loads(text).quests[quest.id] == quest
        assert loads(text).quests[quest.id].extra == quest.extra


def test_no_default_is_written() -> None:
    text = dumps(ratchet_of(passed("p", ["tests/t.py::a"])))
    entry = stored(text, f"{FILE}::p")
    assert set(entry) == {
        "file", "qualname", "lines", "fingerprint", "state", "statements",
        "covering_tests", "issued_at", "passed_at", "baseline",
    }  # fmt: skip
    top = json.loads(text)
    assert set(top) == {"schema", "tool", "scanned_at", "tests", "quests"}


def test_tests_are_interned_once_and_referenced_by_index() -> None:
    names = ["tests/t.py::test_a", "tests/t.py::test_b"]
    text = dumps(ratchet_of(todo("f", names), passed("p", names[::-1])))
    data = json.loads(text)
    assert data["tests"] == sorted(names)
    assert stored(text, f"{FILE}::f")["covering_tests"] == [0, 1]
    assert stored(text, f"{FILE}::p")["covering_tests"] == [1, 0]
    assert text.count("test_a") == 1


def test_a_one_quest_change_is_a_one_line_diff() -> None:
    quests = [todo(f"f{n}", [f"tests/t.py::t{n}"]) for n in range(30)]
    ratchet = loads(dumps(ratchet_of(*quests)))
    before = dumps(ratchet)
    # A submit: one quest gets a new covering test (appended to the table) and a try.
    quest = ratchet.quests[f"{FILE}::f7"]
    quest.tries = 1
    quest.covering_tests = [*quest.covering_tests, "tests/t.py::a_new_test"]
    after = dumps(ratchet)
    changed = [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    # The quest's line, and the table's new last line (with the comma before it).
    assert len([line for line in changed if line.startswith("+")]) == 3
    assert any(f"{FILE}::f7" in line for line in changed)
    assert loads(after) == ratchet


def test_the_table_is_rebuilt_once_a_quarter_is_unused() -> None:
    assert layout.table_order(["b", "a", "c", "d"], {"b": 0, "a": 0, "c": 0}) == [
        "b",
        "a",
        "c",
        "d",
    ]
    assert layout.table_order(["b", "a", "c", "d"], {"b": 0, "a": 0}) == ["a", "b"]
    assert layout.table_order(["b", "a"], {"b": 0, "a": 0, "z": 0, "e": 0}) == ["b", "a", "e", "z"]
    assert layout.table_order([], {"b": 0, "a": 0}) == ["a", "b"]


def test_the_projects_version_1_file_is_read_and_migrated(tmp_path: Path) -> None:
    text = V1_FIXTURE.read_text(encoding="utf-8")
    assert json.loads(text)["schema"] == 1
    ratchet = loads(text)
    # The same information as version 1's own reader sees: every field of every quest.
    v1 = json.loads(text)
    for qid, record in v1["quests"].items():
        assert quest_to_dict(ratchet.quests[qid]) == record
    path = tmp_path / "quest.json"
    path.write_text(text, encoding="utf-8")
    store = RatchetStore(path)
    assert store.load() == ratchet
    assert path.read_text(encoding="utf-8") == text  # a read never rewrites
    store.update(lambda r: None)  # the next write stores version 2
    migrated = path.read_text(encoding="utf-8")
    assert json.loads(migrated)["schema"] == 2
    assert len(migrated) < len(text) / 3
    mark_seals(ratchet, legacy=True)  # the file's first write marks its PASS seals
    assert store.load() == ratchet
    assert ratchet_to_dict(store.load()) == ratchet_to_dict(ratchet)


def test_the_v1_writer_output_migrates_to_the_same_ratchet() -> None:
    ratchet = ratchet_of(
        todo("f", ["tests/t.py::a"], history=[Event("2026-01-01T00:00:00Z", "scan")]),
        passed("p", ["tests/t.py::a", "tests/t.py::b"]),
        todo("g", [], facts=[Fact("c", "x", "e", "a")], issued_seal="sha256:1"),
    )
    ratchet.active = f"{FILE}::f"
    old = dumps_v1(ratchet)
    assert json.loads(old)["schema"] == 1
    assert loads(old) == ratchet
    assert loads(dumps(loads(old))) == ratchet


def test_a_v1_file_with_a_bad_field_still_names_it() -> None:
    data = json.loads(dumps_v1(ratchet_of(todo("f", ["tests/t.py::a"]))))
    data["quests"][f"{FILE}::f"]["tries"] = "2"
    with pytest.raises(
        RatchetFileError, match=rf"quests\['{FILE}::f'\]\.tries: expected an integer"
    ):
        loads(json.dumps(data))
    data["quests"][f"{FILE}::f"]["tries"] = 0
    data["quests"][f"{FILE}::f"]["covering_tests"] = [3]
    with pytest.raises(RatchetFileError, match=rf"quests\['{FILE}::f'\]\.covering_tests\[0\]"):
        loads(json.dumps(data))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d, q: q.update(covering_tests=[5]), r"\.covering_tests\[0\]: expected an index"),
        (lambda d, q: q.update(covering_tests=[-1]), r"\.covering_tests\[0\]: expected an index"),
        (lambda d, q: q.update(covering_tests=[True]), r"\.covering_tests\[0\]: expected an index"),
        (lambda d, q: q.update(covering_tests=["tests/t.py::a"]), r"\.covering_tests\[0\]"),
        (lambda d, q: q.update(covering_tests=0), r"\.covering_tests: expected a list"),
        (lambda d, q: d.update(tests=[1]), r"tests\[0\]: expected a string"),
        (lambda d, q: d.update(tests={}), r"tests: expected a list"),
        (
            lambda d, q: d["tests"].append(d["tests"][0]),
            r"tests\[1\]: 'tests/t.py::a' appears twice",
        ),
        (lambda d, q: q.update(tries=-1), r"\.tries: must not be negative"),
        (lambda d, q: q.update(facts=[{"check": "c"}]), r"\.facts\[0\]\.field: missing field"),
        (lambda d, q: q.pop("lines"), r"\.lines: missing field"),
    ],
)
def test_a_bad_version_2_field_is_named(
    change: Callable[[dict[str, Any], dict[str, Any]], object], message: str
) -> None:
    data = json.loads(dumps(ratchet_of(todo("f", ["tests/t.py::a"]))))
    change(data, data["quests"][f"{FILE}::f"])
    with pytest.raises(RatchetFileError, match=message):
        loads(json.dumps(data))


def test_derived_facts_refuses_what_is_not_well_formed() -> None:
    assert layout.derived_facts({"file": 3}) is None
    assert layout.derived_facts({"file": "a.py", "missing_lines": ["1"]}) is None
    assert layout.derived_facts({"file": "a.py", "missing_branches": [[1]]}) is None
    assert layout.derived_facts({"file": "a.py"}) == []


def test_migrating_leaves_what_it_cannot_read_for_the_reader() -> None:
    assert layout.migrate_1_to_2({"schema": 1, "quests": []}) == {"schema": 1, "quests": []}
    out = layout.migrate_1_to_2({"quests": {"x": 5, "y": {"covering_tests": "t"}}})
    assert out["quests"] == {"x": 5, "y": {"covering_tests": "t"}}
    assert out["tests"] == []


def test_the_direct_record_is_the_compacted_v1_record() -> None:
    ratchet = loads(V1_FIXTURE.read_text(encoding="utf-8"))
    gate = [Fact("gate.stability", f"{FILE}:4", "stable", "flaky", "line 4 flips")]
    for quest in (
        todo("f", ["tests/t.py::a"]),
        todo("g", ["tests/t.py::a"], facts=gate, tries=2, extra={"x": 1}, issued_seal="s"),
        todo("h", [], facts=[]),
        todo("k", [], facts=[branch_fact(FILE, (8, -3)), line_fact(FILE, 4), line_fact(FILE, 5)]),
        passed("p", ["tests/t.py::b", "tests/t.py::a"]),
        *ratchet.quests.values(),
    ):
        names = sorted(set(quest.covering_tests))
        index = {name: position for position, name in enumerate(names)}
        assert records.quest_record(quest, index) == layout.compact_quest(
            quest_to_dict(quest), dict(index)
        ), quest.id
