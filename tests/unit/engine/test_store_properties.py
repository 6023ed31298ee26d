"""Hypothesis properties of the ratchet file format (``store.loads`` / ``store.dumps``).

Whatever bytes are in the file, reading it gives a valid ratchet or a
`RatchetFileError`, never another exception (a traceback for the user); a
valid ratchet survives a write and a read unchanged; a failed update leaves
the file's bytes as they were.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State, make_quest_id
from pytest_quest.engine.codec import dumps, loads
from pytest_quest.engine.store import RatchetStore
from tests.support.profiles import examples

# -- valid ratchets -----------------------------------------------------------------

texts = st.text(max_size=12)
lines = st.integers(min_value=1, max_value=500)
identifiers = st.from_regex(
    r"[A-Za-z_][A-Za-z0-9_]{0,6}(\.[A-Za-z_][A-Za-z0-9_]{0,6})?", fullmatch=True
)
files = st.sampled_from(["src/pkg/a.py", "src/pkg/sub/b.py", "lib/c d.py", "src/é.py"])
facts = st.builds(Fact, texts, texts, texts, texts, texts)
events = st.builds(Event, texts, texts, texts, texts, texts)


@st.composite
def quests(draw: st.DrawFn) -> Quest:
    file, qualname = draw(files), draw(identifiers)
    first = draw(lines)
    state = draw(st.sampled_from(State))
    passed = state is State.PASS
    return Quest(
        id=make_quest_id(file, qualname, draw(st.integers(1, 3))),
        file=file,
        qualname=qualname,
        first=first,
        last=first + draw(st.integers(0, 50)),
        fingerprint=draw(st.text(min_size=1 if passed else 0, max_size=8)),
        state=state,
        tries=draw(st.integers(0, 5)),
        statements=draw(st.integers(0, 99)),
        branches=draw(st.integers(0, 99)),
        missing_lines=[] if passed else draw(st.lists(lines, max_size=4)),
        missing_branches=[] if passed else draw(st.lists(st.tuples(lines, lines), max_size=3)),
        excluded_lines=draw(st.lists(lines, max_size=3)),
        covering_tests=draw(st.lists(texts, min_size=1 if passed else 0, max_size=3)),
        facts=draw(st.lists(facts, max_size=2)),
        issued_at=draw(texts),
        passed_at=draw(st.text(min_size=1, max_size=8)) if passed else draw(texts),
        baseline=draw(st.booleans()),
        history=draw(st.lists(events, max_size=2)),
        # Integers of at most 15 digits: the reader refuses longer ones.
        extra=draw(
            st.dictionaries(texts, st.integers(-(10**15) + 1, 10**15 - 1) | texts, max_size=2)
        ),
    )


@st.composite
def ratchets(draw: st.DrawFn) -> Ratchet:
    found = {quest.id: quest for quest in draw(st.lists(quests(), max_size=6))}
    active = draw(st.sampled_from([None, *sorted(found)]))
    return Ratchet(
        quests=found,
        active=active,
        coverage_config=draw(st.dictionaries(texts, st.booleans() | texts, max_size=3)),
        test_files=draw(st.dictionaries(files, texts, max_size=3)),
        removed=draw(st.lists(st.dictionaries(texts, texts, max_size=2), max_size=2)),
        excluded_functions=sorted(  # written sorted; quest ids, as the scanner writes them
            draw(
                st.lists(
                    st.builds(make_quest_id, files, identifiers, st.integers(1, 3)), max_size=2
                )
            )
        ),
        scanned_at=draw(texts),
    )


@settings(deadline=None)  # timing on a busy machine is not the property
@given(ratchets())
def test_a_written_ratchet_reads_back_equal(ratchet: Ratchet) -> None:
    text = dumps(ratchet)
    assert loads(text) == ratchet
    assert dumps(loads(text.encode("utf-8"))) == text


# -- any input ------------------------------------------------------------------------


def read(raw: bytes | str) -> Ratchet | None:
    """Ratchet, or None for a RatchetFileError; any other exception fails the test."""
    try:
        return loads(raw, "quest.json")
    except RatchetFileError as exc:
        assert str(exc).startswith("quest.json: ")
        return None


@settings(deadline=None)  # timing on a busy machine is not the property
@given(st.binary(max_size=2000))
def test_any_bytes_give_a_ratchet_or_the_usage_error(raw: bytes) -> None:
    read(raw)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(deadline=None)  # timing on a busy machine is not the property
@given(json_values)
def test_any_json_gives_a_ratchet_or_the_usage_error(value: object) -> None:
    read(json.dumps(value))


VALID = dumps(
    Ratchet(
        quests={
            "src/a.py::f": Quest(
                id="src/a.py::f",
                file="src/a.py",
                qualname="f",
                first=1,
                last=3,
                fingerprint="fp",
                tries=1,
                missing_lines=[2],
                missing_branches=[(1, 2)],
                facts=[Fact("c", "src/a.py:2", "e", "a", "m")],
                history=[Event("t", "submit", "FAIL", "me", "n")],
                extra={"k": 1},
            ),
            "src/a.py::g@2": Quest(
                id="src/a.py::g@2",
                file="src/a.py",
                qualname="g",
                first=5,
                last=6,
                fingerprint="fp",
                state=State.PASS,
                covering_tests=["tests/t.py::test"],
                passed_at="t",
            ),
        },
        active="src/a.py::f",
        coverage_config={"run:branch": True},
        test_files={"tests/t.py": "d"},
        removed=[{"id": "x"}],
        excluded_functions=["src/a.py::h"],
        scanned_at="t",
    )
)


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a node of a parsed JSON document."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += paths_of(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += paths_of(child, (*prefix, index))
    return found


NODES = [path for path in paths_of(json.loads(VALID)) if path]


@settings(deadline=None)  # timing on a busy machine is not the property
@given(st.sampled_from(NODES), json_values, st.booleans())
def test_a_hand_edit_anywhere_gives_a_ratchet_or_the_usage_error(
    path: tuple[str | int, ...], value: object, remove: bool
) -> None:
    # A person replaces (or deletes) one value anywhere in a valid file.
    data = json.loads(VALID)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if remove:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    text = json.dumps(data, indent=2)
    ratchet = read(text)
    if ratchet is not None:
        # What was accepted is kept: writing it back and reading gives it again.
        assert dumps(loads(dumps(ratchet))) == dumps(ratchet)


@settings(deadline=None)  # timing on a busy machine is not the property
@given(st.integers(min_value=0, max_value=len(VALID) - 2))
def test_every_truncation_is_refused(length: int) -> None:
    assert read(VALID[:length]) is None


@settings(deadline=None)  # timing on a busy machine is not the property
@given(
    st.integers(min_value=0, max_value=len(VALID) - 1),
    st.binary(min_size=1, max_size=3),
)
def test_a_damaged_byte_gives_a_ratchet_or_the_usage_error(position: int, garbage: bytes) -> None:
    raw = VALID.encode()
    read(raw[:position] + garbage + raw[position + 1 :])


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
def test_a_failed_update_leaves_the_bytes_alone(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "quest.json"
        path.write_bytes(raw)
        try:
            RatchetStore(path).update(lambda ratchet: setattr(ratchet, "active", None))
        except RatchetFileError:
            assert path.read_bytes() == raw
        else:
            assert read(path.read_bytes()) is not None
        assert RatchetStore(path).stale_temp_files() == []
