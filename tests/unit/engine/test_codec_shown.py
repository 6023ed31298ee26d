"""Reading for `status` and `next` (``codec.loads(lazy=True)``): same ratchet, same refusals."""

from __future__ import annotations

import json
import re

import pytest

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import DECODED_ON_USE, Quest, Ratchet, State
from pytest_quest.engine.codec import dumps, loads
from pytest_quest.report.text import draw_status, status_view
from tests.e2e.test_store_corruption import CORRUPTIONS, VALID, valid_ratchet
from tests.unit.engine.test_layout import passed, ratchet_of, todo


def loads_lazy(text: str | bytes, path: str = "quest.json") -> Ratchet:
    return loads(text, path, lazy=True)


def pending(quest: Quest) -> set[str]:
    """The list fields of `quest` not decoded yet."""
    return {name for name in DECODED_ON_USE if name not in vars(quest)}


def test_the_same_ratchet_as_the_full_reader() -> None:
    assert loads_lazy(VALID) == loads(VALID) == valid_ratchet()
    ratchet = ratchet_of(todo("a", ["t::x", "t::y"]), passed("p", ["t::y"]))
    ratchet.quests["src/pkg/m.py::a"].extra = {"note": [1, 2]}
    ratchet.quests["src/pkg/m.py::a"].issued_seal = "sha256:00"
    text = dumps(ratchet)
    lazy = loads_lazy(text)
    assert lazy == ratchet and dumps(lazy) == text


def test_lists_wait_for_their_first_use() -> None:
    ratchet = loads_lazy(dumps(ratchet_of(todo("a", ["t::x"]), passed("p", ["t::y"]))))
    quest = ratchet.quests["src/pkg/m.py::a"]
    assert pending(quest) == DECODED_ON_USE
    assert quest.covering_tests == ["t::x"]
    assert pending(quest) == DECODED_ON_USE - {"covering_tests"}  # resolved on their own
    assert [fact.field for fact in quest.facts][:2] == ["src/pkg/m.py:4", "src/pkg/m.py:5"]
    assert pending(quest) == set()
    with pytest.raises(AttributeError):
        quest.nothing  # type: ignore[attr-defined]  # noqa: B018 - no such field: only the list fields are decoded on use


def test_a_value_set_before_the_first_use_stays() -> None:
    ratchet = loads_lazy(dumps(ratchet_of(todo("a", ["t::x"]))))
    quest = ratchet.quests["src/pkg/m.py::a"]
    quest.missing_lines = [9]
    quest.covering_tests = []
    assert quest.facts and quest.missing_lines == [9] and quest.covering_tests == []


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_every_damage_is_refused_with_the_same_message_when_read(kind: str) -> None:
    """At once for what every command reads; on first use for a list's elements."""
    damaged, message = CORRUPTIONS[kind]
    with pytest.raises(RatchetFileError) as info:
        dumps(loads_lazy(damaged, "quest.json"))  # reads every field of every quest
    assert re.search(message, str(info.value)), str(info.value)
    with pytest.raises(RatchetFileError) as full:
        loads(damaged, "quest.json")
    assert str(info.value) == str(full.value)


# What status and next read of every quest: refused by the lazy reader at once.
AT_ONCE = [
    "unknown-state",
    "missing-field",
    "pass-without-tests",
    "pass-without-date",
    "pass-with-missing-lines",
    "wrong-type",
    "bool-for-int",
    "negative-tries",
    "bad-lines",
    "unknown-field",
    "extra-not-object",
    "id-mismatch",
    "file-absolute",
    "qualname-newline",
]


@pytest.mark.parametrize("kind", AT_ONCE)
def test_what_every_command_reads_is_refused_at_once(kind: str) -> None:
    damaged, message = CORRUPTIONS[kind]
    with pytest.raises(RatchetFileError, match=message):
        loads_lazy(damaged, "quest.json")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("missing_lines", ["x"]),
        ("covering_tests", [99]),
        ("facts", [{"check": 1}]),
        ("history", [{"at": 5}]),
    ],
)
def test_a_bad_element_is_named_at_once_or_on_its_use(field: str, value: object) -> None:
    data = json.loads(VALID)
    sign = next(qid for qid, q in data["quests"].items() if q.get("state", "TODO") == "TODO")
    data["quests"][sign][field] = value
    with pytest.raises(RatchetFileError, match=rf"quests\['{re.escape(sign)}'\]\.{field}"):
        getattr(loads_lazy(json.dumps(data)).quests[sign], field)
    # In the writer's layout, a test index out of range waits for the table's first use.
    data["quests"][sign].pop(field)
    laid_out = dumps(loads(json.dumps(data)))
    assert '"covering_tests": [0]' in laid_out
    ratchet = loads_lazy(laid_out.replace('"covering_tests": [0]', '"covering_tests": [99]'))
    with pytest.raises(RatchetFileError, match=r"\.covering_tests\[0\]: expected an index"):
        [quest.covering_tests for quest in ratchet.quests.values()]


def test_a_list_of_another_kind_is_judged_at_once() -> None:
    data = json.loads(VALID)
    sign = next(iter(data["quests"]))
    data["quests"][sign]["history"] = {}
    with pytest.raises(RatchetFileError, match=r"\.history: expected a list"):
        loads_lazy(json.dumps(data))


def test_an_unusual_but_valid_quest_is_read_field_by_field() -> None:
    data = json.loads(VALID)
    sign = next(qid for qid, q in data["quests"].items() if q.get("state", "TODO") == "TODO")
    twin = sign + "@2"  # a twin's id is not file::qualname
    data["quests"][twin] = data["quests"].pop(sign)
    data["active"] = twin
    text = json.dumps(data)
    assert loads_lazy(text) == loads(text)


def test_status_text_decodes_only_the_quests_it_lists() -> None:
    quests = [todo(f"t{n}", ["t::x"]) for n in range(5)]
    quests += [passed(f"p{n}", ["t::y"]) for n in range(5)]
    quests.append(todo("r", ["t::z"], state=State.REVIEW))
    ratchet = loads_lazy(dumps(ratchet_of(*quests)))
    text = draw_status(status_view(ratchet), 3, markup=False, width=100, ascii=True)
    assert "src/pkg/m.py:4: line 4 not covered" in text
    decoded = [qid for qid, quest in ratchet.quests.items() if pending(quest) != DECODED_ON_USE]
    assert decoded == ["src/pkg/m.py::r"]
