"""The ratchet file's one reader (engine/codec.py): every form read alike, every forgery named.

Attacks first: every forgery below is made on a file as the writer lays it
out, the form msgspec decodes straight into the Structs; each must be
refused with the message the strict parser's path gives for it, naming the
field, by the commands that write and by those that only show the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State, branch_fact, line_fact
from pytest_quest.core.policy import GatePolicy
from pytest_quest.engine import codec
from pytest_quest.engine.store import RatchetStore

REPO = Path(__file__).resolve().parents[3]
FILE = "src/pkg/m.py"


def quest(n: int, state: State = State.TODO, **fields: object) -> Quest:
    qualname = f"C.f{n}"
    passed = state is State.PASS
    base = Quest(
        id=f"{FILE}::{qualname}",
        file=FILE,
        qualname=qualname,
        first=10 * n + 1,
        last=10 * n + 8,
        fingerprint=f"sha256:{n:064x}",
        state=state,
        tries=0 if passed else n % 3,
        statements=7,
        branches=2,
        missing_lines=[] if passed else [10 * n + 2],
        missing_branches=[] if passed else [(10 * n + 3, -(10 * n + 1))],
        excluded_lines=[10 * n + 8] if n % 2 else [],
        covering_tests=[f"tests/test_m.py::test_{k}" for k in range(n % 4 + 1)],
        issued_at="2026-01-01T00:00:00Z",
        passed_at="2026-01-02T00:00:00Z" if passed else "",
        baseline=passed,
        issued_seal=f"sha256:{n + 1:064x}",
    )
    if not passed:
        base.facts = [line_fact(FILE, 10 * n + 2), branch_fact(FILE, (10 * n + 3, -(10 * n + 1)))]
    for key, value in fields.items():
        setattr(base, key, value)
    return base


def sample() -> Ratchet:
    quests = [
        quest(1),
        quest(2, State.PASS, history=[Event("2026-01-02T00:00:00Z", "submit", "PASS", by="a")]),
        quest(3, State.REVIEW, facts=[Fact("gate.stability", f"{FILE}:32", "stable", "flaky")]),
        quest(4, State.DONE, last_run_seconds=0.25, mutation_seconds=1.5, passed_policy="p1"),
        quest(5, verification={"votes": [1, 2], "by": {"x": "y"}}, partial_lines=["if x:"]),
        quest(6, extra={"note": "kept", "nested": {"deep": [1, 2.5, None, True]}}),
        quest(7, State.EXCLUDED, facts=[]),
        quest(9, State.PASS, unwitnessed=[{"id": "m1234abcd", "line": 92, "operator": "x"}]),
    ]
    twin = quest(8)
    twin.id += "@2"
    quests.append(twin)
    ratchet = Ratchet(
        quests={q.id: q for q in quests},
        active=quests[0].id,
        scanned_at="2026-01-01T00:00:00Z",
        coverage_config={"run:source": ["src"], "report:exclude_lines": ["pragma: no cover"]},
        test_files={"tests/test_m.py": "sha256:ab"},
        test_paths=["tests/unit", "."],
        removed=[{"id": f"{FILE}::gone", "at": "2026-01-01T00:00:00Z"}],
        excluded_functions=[f"{FILE}::dead"],
        policy=GatePolicy(),
        policy_history=[{"at": "t", "by": "p", "key": "k", "old": "a", "new": "b"}],
    )
    return ratchet


def slow(data: bytes | str) -> Ratchet:
    """The ratchet as the strict parser's path reads it (any form, every defect named)."""
    return codec._checked(data, codec._Fail("quest.json"))


def fast(data: bytes | str, *, lazy: bool = False) -> Ratchet | None:
    """The ratchet as decoded straight into the Structs (None: not in the writer's form)."""
    return codec._fast(data, "quest.json", lazy, None)


@pytest.fixture(scope="module")
def text() -> bytes:
    return codec.dump_bytes(sample())


# -- what it reads: the same ratchet whatever the path, lists built on use -------------


def test_the_writers_form_reads_as_the_strict_parsers_path_reads_it(text: bytes) -> None:
    read = fast(text)
    assert read is not None
    assert read == slow(text) == sample()
    assert read.test_table == slow(text).test_table
    assert fast(text.decode()) == read  # text as well as bytes
    assert codec.loads(text, lazy=True) == read
    assert codec.loads(text, lazy=True).test_table == read.test_table
    strict = slow(text)
    assert strict.quests[f"{FILE}::C.f8@2"].facts == sample().quests[f"{FILE}::C.f8@2"].facts
    assert strict.quests[f"{FILE}::C.f3"].facts == sample().quests[f"{FILE}::C.f3"].facts


def test_this_repositorys_own_ratchet_is_decoded_straight_into_the_structs() -> None:
    data = (REPO / "quest.json").read_bytes()
    read = fast(data)
    assert codec.dump_bytes(codec.loads(data)) is data  # nothing changed: the very bytes read
    assert read is not None and read == slow(data)
    assert codec.dump_bytes(read) == data  # every list decoded (compared): written again alike


def test_two_reads_share_nothing_a_change_could_reach(text: bytes) -> None:
    first, second = codec.loads(text), codec.loads(text)
    qid = f"{FILE}::C.f5"
    first.quests[qid].verification["votes"].append(3)  # type: ignore[index]
    first.quests[f"{FILE}::C.f6"].extra["nested"]["deep"].append(0)
    first.coverage_config["run:source"].append("other")
    first.quests[f"{FILE}::C.f1"].tries = 7
    first.quests[f"{FILE}::C.f2"].covering_tests.append("x")
    third = codec.loads(text)  # the same bytes again, while `first` lives: copied, not decoded
    assert second == third == slow(text)
    assert codec.dump_bytes(codec.loads(text)) is text


# -- attacks: each is refused by the fast path, then named by the full reader ---------


def forged(text: bytes, old: str, new: str, count: int = 1) -> bytes:
    assert text.count(old.encode()) >= 1, old
    return text.replace(old.encode(), new.encode(), count)


Q1 = f'"{FILE}::C.f1": {{'
ATTACKS: dict[str, Callable[[bytes], bytes]] = {
    "a quest id twice": lambda t: t.replace(b"\n}\n}\n", b",\n" + t.split(b"\n")[-4] + b"\n}\n}\n"),
    "a field twice in a quest": lambda t: forged(t, Q1, Q1 + '"tries": 2, '),
    "a key twice in extra": lambda t: forged(t, '"note": "kept"', '"note": "kept", "note": "x"'),
    "a key twice at the top": lambda t: forged(t, '"schema": 2,', '"schema": 2,\n"schema": 2,'),
    "a 16-digit count": lambda t: forged(t, '"statements": 7', '"statements": 1000000000000000'),
    "a 16-digit integer in extra": lambda t: forged(t, "[1, 2.5,", "[1000000000000000, 2.5,"),
    "a 16-digit integer in the configuration": lambda t: forged(
        t, '"run:source": ["src"]', '"run:source": [-1000000000000000]'
    ),
    "NaN": lambda t: forged(t, "2.5", "NaN"),
    "Infinity": lambda t: forged(t, "2.5", "-Infinity"),
    "a number beyond a float": lambda t: forged(t, "2.5", "1e999"),
    "a float for an integer": lambda t: forged(t, '"statements": 7', '"statements": 7.0'),
    "a boolean for an integer": lambda t: forged(t, '"statements": 7', '"statements": true'),
    "an unknown quest field": lambda t: forged(t, Q1, Q1 + '"zzz": 1, '),
    "an unknown fact field": lambda t: forged(t, '"actual": "flaky"', '"actual": "flaky", "b": 1'),
    "an unknown event field": lambda t: forged(
        t, '"action": "submit"', '"action": "submit", "a": 1'
    ),
    "an unknown top field": lambda t: forged(t, '"schema": 2,', '"schema": 2,\n"zz": 1,'),
    "an unknown state": lambda t: forged(t, '"state": "REVIEW"', '"state": "MAYBE"'),
    "lines out of order": lambda t: forged(t, '"lines": [11, 18]', '"lines": [18, 11]'),
    "line zero": lambda t: forged(t, '"lines": [11, 18]', '"lines": [0, 18]'),
    "three lines": lambda t: forged(t, '"lines": [11, 18]', '"lines": [11, 18, 19]'),
    "a test index out of range": lambda t: forged(
        t, '"covering_tests": [0, 1]', '"covering_tests": [0, 9]'
    ),
    "a negative test index": lambda t: forged(
        t, '"covering_tests": [0, 1]', '"covering_tests": [0, -1]'
    ),
    "a PASS without its date": lambda t: forged(t, '"passed_at": "2026-01-02T00:00:00Z", ', ""),
    "a PASS with a missing line": lambda t: forged(
        t, '"lines": [21, 28]', '"lines": [21, 28], "missing_lines": [22]'
    ),
    "an id that is not its file and name": lambda t: forged(
        t, '"qualname": "C.f1"', '"qualname": "C.f9"'
    ),
    "a twin @1": lambda t: forged(t, "C.f8@2", "C.f8@1", 2),
    "a twin @02": lambda t: forged(t, "C.f8@2", "C.f8@02", 2),
    "a qualname with an empty part": lambda t: forged(t, "C.f1", "C..f1", 3),
    "a qualname not an identifier": lambda t: forged(t, "C.f1", "C.1f", 3),
    "a file climbing out": lambda t: forged(t, FILE, "../m.py"),
    "a quest's file with a '.' part": lambda t: t.replace(FILE.encode(), b"src/./m.py").replace(
        b'"src/./m.py::dead"', f'"{FILE}::dead"'.encode()
    ),
    "a 16-digit extra value": lambda t: forged(t, '"note": "kept"', '"note": -1000000000000000'),
    "a test file climbing out": lambda t: forged(
        t, '"tests/test_m.py": "sha256:ab"', '"../t.py": "x"'
    ),
    "a test path that is absolute": lambda t: forged(t, '"tests/unit"', '"/tests"'),
    "a bad excluded id": lambda t: forged(t, f'"{FILE}::dead"', '"nope"'),
    "a test named twice in the table": lambda t: forged(
        t, '"tests/test_m.py::test_1"', '"tests/test_m.py::test_0"'
    ),
    "an active quest that is no quest": lambda t: forged(t, '"active": "', '"active": "x'),
    "a bad policy": lambda t: forged(t, '"policy": {', '"policy": {"zz": 1, '),
    "a string where a list is": lambda t: forged(
        t, '"excluded_lines": [', '"excluded_lines": "x", "y": ['
    ),
}


# What each forgery's message names: the field (or the key written twice) and the problem.
ATTACKS_NAMED = {
    "a quest id twice": "duplicate key 'src/pkg/m.py::C.f9' at line",
    "a field twice in a quest": "duplicate key 'tries' at line",
    "a key twice in extra": "duplicate key 'note' at line",
    "a key twice at the top": "duplicate key 'schema' at line",
    "a 16-digit count": "quests['src/pkg/m.py::C.f1'].statements: an integer of",
    "a 16-digit integer in extra": (
        "quests['src/pkg/m.py::C.f6'].extra.nested.deep[0]: an integer of"
    ),
    "a 16-digit integer in the configuration": "coverage_config.run:source[0]: an integer of",
    "NaN": "quests['src/pkg/m.py::C.f6'].extra.nested.deep[1]: NaN is not",
    "Infinity": "quests['src/pkg/m.py::C.f6'].extra.nested.deep[1]: -Infinity is not",
    "a number beyond a float": "quests['src/pkg/m.py::C.f6'].extra.nested.deep[1]: 1e999 is beyond",
    "a float for an integer": "quests['src/pkg/m.py::C.f1'].statements: expected an integer,",
    "a boolean for an integer": "quests['src/pkg/m.py::C.f1'].statements: expected an integer,",
    "an unknown quest field": "quests['src/pkg/m.py::C.f1'].zzz: unknown field (known:",
    "an unknown fact field": "quests['src/pkg/m.py::C.f3'].facts[0].b: unknown field (known:",
    "an unknown event field": "quests['src/pkg/m.py::C.f2'].history[0].a: unknown field (known:",
    "an unknown top field": "zz: unknown field (known:",
    "an unknown state": "quests['src/pkg/m.py::C.f3'].state: unknown state 'MAYBE'",
    "lines out of order": "quests['src/pkg/m.py::C.f1'].lines: expected [first, last]",
    "line zero": "quests['src/pkg/m.py::C.f1'].lines: expected [first, last]",
    "three lines": "quests['src/pkg/m.py::C.f1'].lines: expected [first, last]",
    "a test index out of range": (
        "quests['src/pkg/m.py::C.f1'].covering_tests[1]: expected an index"
    ),
    "a negative test index": "quests['src/pkg/m.py::C.f1'].covering_tests[1]: expected an index",
    "a PASS without its date": "quests['src/pkg/m.py::C.f2'].passed_at: a PASS quest",
    "a PASS with a missing line": "quests['src/pkg/m.py::C.f2']: a PASS quest",
    "an id that is not its file and name": "quests['src/pkg/m.py::C.f1']: id does not",
    "a twin @1": "quests['src/pkg/m.py::C.f8@1']: id does not",
    "a twin @02": "quests['src/pkg/m.py::C.f8@02']: id does not",
    "a qualname with an empty part": "quests['src/pkg/m.py::C..f1'].qualname: '' is not",
    "a qualname not an identifier": "quests['src/pkg/m.py::C.1f'].qualname: '1f' is not",
    "a file climbing out": "active: names '../m.py::C.f1', which",
    "a quest's file with a '.' part": "quests['src/./m.py::C.f1'].file: an empty or",
    "a 16-digit extra value": "quests['src/pkg/m.py::C.f6'].extra.note: an integer of",
    "a test file climbing out": "test_files['../t.py']: climbs out with",
    "a test path that is absolute": "test_paths[0]: an absolute path",
    "a bad excluded id": "excluded_functions[0]: expected FILE::QUALNAME (restore",
    "a test named twice in the table": "tests[1]: 'tests/test_m.py::test_0' appears twice",
    "an active quest that is no quest": "active: names 'xsrc/pkg/m.py::C.f1', which",
    "a bad policy": "policy.zz: unknown field (known:",
    "a string where a list is": "quests['src/pkg/m.py::C.f1'].excluded_lines: expected a list,",
}


def read_whole(data: bytes, *, lazy: bool) -> Ratchet:
    """`codec.loads`, every quest's lists and the tests table built (what a write reads)."""
    ratchet = codec.loads(data, "quest.json", lazy=lazy)
    for read in ratchet.quests.values():
        assert read.covering_tests is not None and read.facts is not None
    assert ratchet.test_table is not None
    return ratchet


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_every_forgery_is_refused_naming_the_field(text: bytes, name: str) -> None:
    bad = ATTACKS[name](text)
    assert bad != text
    with pytest.raises(RatchetFileError) as written:
        read_whole(bad, lazy=False)
    with pytest.raises(RatchetFileError) as strict:
        slow(bad)
    assert str(written.value) == str(strict.value)
    assert ATTACKS_NAMED[name] in str(written.value), str(written.value)
    # A key twice inside one quest's line is shown with its last value (docs/reliability.md).
    if name not in ("a field twice in a quest", "a key twice in extra"):
        with pytest.raises(RatchetFileError) as shown:
            read_whole(bad, lazy=True)
        assert str(shown.value) == str(strict.value)


LEFT_TO_THE_FULL_READER = {
    "a default written out": lambda t: forged(t, Q1, Q1 + '"baseline": false, '),
    "keys out of order": lambda t: forged(
        t, '"branches": 2, "covering_tests"', '"covering_tests"'
    ).replace(
        b'"file": "src/pkg/m.py", "fingerprint": "sha256:' + b"0" * 63 + b'1"',
        b'"file": "src/pkg/m.py", "fingerprint": "sha256:' + b"0" * 63 + b'1", "branches": 2',
        1,
    ),
    "a float written otherwise": lambda t: forged(t, "2.5", "2.50"),
    "an escaped character": lambda t: forged(t, '"kept"', '"k\\u00e9pt"'),
    "a character not ASCII": lambda t: forged(t, '"kept"', '"k\u00e9pt"'),
    "version 1": lambda t: codec.dumps_v1(codec.loads(t)).encode(),
}


@pytest.mark.parametrize("name", sorted(LEFT_TO_THE_FULL_READER))
def test_a_valid_file_in_another_form_is_read_by_the_full_reader(text: bytes, name: str) -> None:
    other = LEFT_TO_THE_FULL_READER[name](text)
    assert fast(other) is None
    assert codec.loads(other) == slow(other)


def test_a_hand_indented_file_is_read_by_its_content_and_written_afresh(text: bytes) -> None:
    indented = json.dumps(json.loads(text), indent=2).encode()
    ratchet = codec.loads(indented)
    assert ratchet == slow(indented)
    assert codec.dump_bytes(codec.loads(indented)) == text
    one_line_table = text.replace(b'[\n"tests/', b'["tests/').replace(b'",\n"tests/', b'", "tests/')
    assert codec.dump_bytes(codec.loads(one_line_table)) is one_line_table  # nothing changed
    changed, full = codec.loads(one_line_table), slow(one_line_table)
    changed.active = full.active = None
    assert codec.dump_bytes(changed) == codec.dump_bytes(full) != one_line_table


# -- the writer: untouched quests are the bytes read, one change is one line ----------


def test_nothing_changed_gives_the_bytes_read(text: bytes) -> None:
    ratchet = codec.loads(text)
    for quest_read in ratchet.quests.values():  # read every list, change none
        assert quest_read.facts is not None and quest_read.covering_tests is not None
    assert codec.dump_bytes(ratchet) == text
    assert codec.dump_bytes(codec.loads(text)) is text


def typed_extra_in_place(r: Ratchet) -> None:
    verification = r.quests[f"{FILE}::C.f5"].verification
    assert verification is not None
    verification.update(x=1)


def table_rebuilt(r: Ratchet) -> None:
    for q in r.quests.values():
        q.covering_tests.clear()


CHANGES: dict[str, Callable[[Ratchet], object]] = {
    "a count": lambda r: setattr(r.quests[f"{FILE}::C.f1"], "tries", 9),
    "a list in place": lambda r: r.quests[f"{FILE}::C.f1"].missing_lines.append(99),
    "a new covering test": lambda r: r.quests[f"{FILE}::C.f1"].covering_tests.append(
        "tests/new.py::t"
    ),
    "extra in place": lambda r: r.quests[f"{FILE}::C.f6"].extra["nested"]["deep"].append(3),
    "a typed extra in place": typed_extra_in_place,
    "a quest replaced": lambda r: r.quests.update({f"{FILE}::C.f1": quest(1, tries=2)}),
    "a quest added": lambda r: r.quests.update({f"{FILE}::C.f0": quest(0)}),
    "a quest removed": lambda r: r.quests.pop(f"{FILE}::C.f2"),
    "every quest removed": lambda r: r.quests.clear(),
    "a quest moved to another key": lambda r: r.quests.update(
        {f"{FILE}::C.f1@2": r.quests.pop(f"{FILE}::C.f1")}
    ),
    "the active pointer": lambda r: setattr(r, "active", None),
    "the table rebuilt": table_rebuilt,
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_change_is_written_as_the_full_writer_writes_it(text: bytes, name: str) -> None:
    fast, full = codec.loads(text), slow(text)
    CHANGES[name](fast)
    CHANGES[name](full)
    assert codec.dump_bytes(fast) == codec.dump_bytes(full)
    assert fast.test_table == full.test_table


def test_one_change_rewrites_one_line(text: bytes) -> None:
    ratchet = codec.loads(text)
    ratchet.quests[f"{FILE}::C.f3"].tries += 1
    after = codec.dump_bytes(ratchet).split(b"\n")
    changed = [line for line, old in zip(after, text.split(b"\n")) if line != old]
    assert len(after) == len(text.split(b"\n")) and len(changed) == 1
    assert changed[0].startswith(f'"{FILE}::C.f3": '.encode())


def test_a_nan_in_a_changed_quest_is_refused(text: bytes) -> None:
    ratchet = codec.loads(text)
    ratchet.quests[f"{FILE}::C.f1"].last_run_seconds = float("nan")
    with pytest.raises(ValueError):
        codec.dump_bytes(ratchet)


def test_a_noop_update_writes_nothing_and_a_change_one_line(tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "quest.json"
    path.write_bytes(text)
    store = RatchetStore(path)
    store.load()
    store.update(lambda r: None)
    assert store.writes == 0 and path.read_bytes() == text
    store.update(lambda r: setattr(r.quests[f"{FILE}::C.f1"], "tries", 5))
    assert store.writes == 1
    assert store.load().quests[f"{FILE}::C.f1"].tries == 5
    assert codec.dump_bytes(slow(path.read_bytes())) == path.read_bytes()
