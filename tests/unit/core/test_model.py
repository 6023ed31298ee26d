"""Unit tests of the pure data: ``model.py`` values, ``ratchet.merge_scan`` (the
rescan rules) and the ratchet file's serialization round trip (``store.py``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import (
    SORT_KEY,
    Event,
    Fact,
    FunctionFacts,
    Quest,
    Ratchet,
    State,
    arc_text,
    branch_fact,
    line_fact,
    make_quest_id,
)
from pytest_quest.core.ratchet import merge_scan
from pytest_quest.engine.codec import dumps, loads, quest_to_dict

NOW = "2026-11-30T06:00:00Z"
LATER = "2026-11-30T07:00:00Z"
CONFIG: dict[str, object] = {"run:branch": True, "run:omit": None}


def facts(
    name: str,
    first: int,
    missing_lines: Iterable[int] = (),
    missing_branches: Iterable[tuple[int, int]] = (),
    file: str = "src/pkg/m.py",
    ordinal: int = 1,
    statements: int = 3,
    fingerprint: str = "",
    excluded_lines: Iterable[int] = (),
) -> FunctionFacts:
    return FunctionFacts(
        file=file,
        qualname=name,
        ordinal=ordinal,
        start=first,
        first=first,
        last=first + 4,
        fingerprint=fingerprint or f"sha256:{name}",
        statements=statements,
        branches=2,
        missing_lines=list(missing_lines),
        missing_branches=list(missing_branches),
        excluded_lines=list(excluded_lines),
        covering_tests=[] if missing_lines else [f"tests/test_m.py::test_{name}"],
    )


# -- model values ----------------------------------------------------------------


def test_arc_text_renders_negative_destinations_as_exit() -> None:
    assert arc_text((41, 44)) == "41->44"
    assert arc_text((16, -16)) == "16->exit"
    assert arc_text((3, -1)) == "3->exit"


def test_line_and_branch_facts_exact() -> None:
    assert line_fact("src/shop/cart.py", 41) == Fact(
        check="coverage.line",
        field="src/shop/cart.py:41",
        expected="executed by a passing test",
        actual="never executed",
        message="line 41 not covered",
    )
    assert line_fact("src/shop/cart.py", 41).text() == "src/shop/cart.py:41: line 41 not covered"
    branch = branch_fact("src/shop/cart.py", (41, 44))
    assert (branch.check, branch.field) == ("coverage.branch", "src/shop/cart.py:41->44")
    assert branch.text() == "src/shop/cart.py:41: branch 41->44 not taken"
    assert branch_fact("src/shop/cart.py", (41, -30)).text() == (
        "src/shop/cart.py:41: branch 41->exit not taken"
    )


def test_fact_without_message_renders_expected_and_actual() -> None:
    fact = Fact("x.check", "src/a.py:3", "a docstring", "none")
    assert fact.text() == "src/a.py:3: expected a docstring, got none"
    assert fact.to_dict() == {
        "check": "x.check",
        "field": "src/a.py:3",
        "expected": "a docstring",
        "actual": "none",
    }


def test_fact_dict_round_trip() -> None:
    fact = branch_fact("src/a.py", (2, -1))
    assert Fact.from_dict(fact.to_dict()) == fact
    assert Fact.from_dict(json.loads(json.dumps(fact.to_dict()))) == fact


def test_quest_ids_carry_an_ordinal_for_twins_only() -> None:
    assert make_quest_id("src/a.py", "C.x", 1) == "src/a.py::C.x"
    assert make_quest_id("src/a.py", "C.x", 2) == "src/a.py::C.x@2"
    assert facts("C.x", 10, ordinal=3).quest_id == "src/pkg/m.py::C.x@3"


def test_fully_covered_needs_lines_and_branches() -> None:
    assert facts("f", 1).fully_covered
    assert not facts("f", 1, missing_lines=[2]).fully_covered
    assert not facts("f", 1, missing_branches=[(2, -1)]).fully_covered


def test_only_todo_is_not_terminal() -> None:
    assert [state.terminal for state in State] == [False, True, True, True, True]


def test_next_todo_orders_by_file_then_line_not_by_insertion() -> None:
    ratchet = Ratchet()
    for qid, file, first, state in [
        ("src/b.py::g", "src/b.py", 1, State.TODO),
        ("src/a.py::late", "src/a.py", 30, State.TODO),
        ("src/a.py::early", "src/a.py", 5, State.PASS),
        ("src/a.py::mid", "src/a.py", 12, State.TODO),
    ]:
        ratchet.quests[qid] = Quest(
            id=qid,
            file=file,
            qualname=qid.split("::")[1],
            first=first,
            last=first,
            fingerprint="x",
            state=state,
        )
    assert [q.id for q in ratchet.ordered()] == [
        "src/a.py::early",
        "src/a.py::mid",
        "src/a.py::late",
        "src/b.py::g",
    ]
    todo = ratchet.next_todo()
    assert todo is not None
    assert todo.id == "src/a.py::mid"
    assert [q.id for q in ratchet.todo()] == ["src/a.py::mid", "src/a.py::late", "src/b.py::g"]
    assert SORT_KEY(todo) == ("src/a.py", 12, "src/a.py::mid")
    assert ratchet.counts() == {"TODO": 3, "PASS": 1, "REVIEW": 0, "DONE": 0, "EXCLUDED": 0}
    assert ratchet.remaining == 3


def test_next_todo_is_none_when_everything_is_settled() -> None:
    ratchet = Ratchet()
    assert ratchet.next_todo() is None
    assert ratchet.remaining == 0
    assert ratchet.counts() == {"TODO": 0, "PASS": 0, "REVIEW": 0, "DONE": 0, "EXCLUDED": 0}


# -- merge_scan: the rescan rules ----------------------------------------------------


def scanned(*functions: FunctionFacts, excluded: Iterable[str] = (), now: str = NOW) -> Ratchet:
    ratchet = Ratchet()
    merge_scan(ratchet, list(functions), list(excluded), CONFIG, {"tests/test_m.py": "d1"}, now)
    return ratchet


def test_first_scan_new_functions_pass_when_fully_covered_else_todo() -> None:
    ratchet = Ratchet()
    report = merge_scan(
        ratchet,
        [facts("done", 1), facts("todo", 10, missing_lines=[12], missing_branches=[(11, 12)])],
        [],
        CONFIG,
        {"tests/test_m.py": "d1"},
        NOW,
    )
    assert (report.added, report.added_pass, report.removed) == (
        ["src/pkg/m.py::todo"],
        ["src/pkg/m.py::done"],
        [],
    )
    done = ratchet.quests["src/pkg/m.py::done"]
    assert (done.state, done.baseline, done.passed_at, done.facts) == (State.PASS, True, NOW, [])
    assert done.covering_tests == ["tests/test_m.py::test_done"]
    todo = ratchet.quests["src/pkg/m.py::todo"]
    assert (todo.state, todo.baseline, todo.passed_at, todo.tries) == (State.TODO, False, "", 0)
    assert [fact.text() for fact in todo.facts] == [
        "src/pkg/m.py:12: line 12 not covered",
        "src/pkg/m.py:11: branch 11->12 not taken",
    ]
    assert (todo.issued_at, todo.first, todo.last) == (NOW, 10, 14)
    assert ratchet.coverage_config == CONFIG
    assert ratchet.test_files == {"tests/test_m.py": "d1"}
    assert ratchet.scanned_at == NOW


def test_new_function_without_statements_is_not_a_quest() -> None:
    ratchet = scanned(facts("empty", 1, statements=0), excluded=["src/pkg/m.py::empty"])
    assert ratchet.quests == {}
    assert ratchet.excluded_functions == ["src/pkg/m.py::empty"]


def test_rescan_never_touches_a_pass_entry() -> None:
    ratchet = scanned(facts("f", 1))
    before = quest_to_dict(ratchet.quests["src/pkg/m.py::f"])
    # The same function, now uncovered and changed: the PASS record stays as it was.
    merge_scan(
        ratchet,
        [facts("f", 1, missing_lines=[2, 3], fingerprint="sha256:other")],
        [],
        CONFIG,
        {},
        LATER,
    )
    assert quest_to_dict(ratchet.quests["src/pkg/m.py::f"]) == before


def test_rescan_never_passes_a_todo_but_refreshes_what_is_missing() -> None:
    ratchet = scanned(facts("f", 1, missing_lines=[2, 3]))
    quest = ratchet.quests["src/pkg/m.py::f"]
    quest.tries = 2
    report = merge_scan(ratchet, [facts("f", 1, missing_lines=[3])], [], CONFIG, {}, LATER)
    assert report.added == report.added_pass == report.removed == []
    assert (quest.state, quest.tries, quest.missing_lines) == (State.TODO, 2, [3])
    assert [fact.field for fact in quest.facts] == ["src/pkg/m.py:3"]
    merge_scan(ratchet, [facts("f", 1)], [], CONFIG, {}, LATER)
    assert quest.state is State.TODO
    assert (quest.missing_lines, quest.missing_branches) == ([], [])


def test_rescan_names_pass_functions_no_longer_fully_covered_and_keeps_them() -> None:
    ratchet = scanned(facts("f", 1), facts("g", 10), facts("h", 20, missing_lines=[21]))
    before = quest_to_dict(ratchet.quests["src/pkg/m.py::f"])
    report = merge_scan(
        ratchet,
        [
            facts("f", 1, missing_branches=[(2, 3)]),
            facts("g", 10),
            facts("h", 20, missing_lines=[21]),
        ],
        [],
        CONFIG,
        {},
        LATER,
    )
    # `h` is TODO: not a regression; `g` still fully covered.
    assert report.regressed == ["src/pkg/m.py::f"]
    assert quest_to_dict(ratchet.quests["src/pkg/m.py::f"]) == before


@pytest.mark.parametrize("state", [State.REVIEW, State.DONE])
def test_rescan_keeps_review_and_done(state: State) -> None:
    ratchet = scanned(facts("f", 1, missing_lines=[2]))
    quest = ratchet.quests["src/pkg/m.py::f"]
    quest.state = state
    merge_scan(ratchet, [facts("f", 1)], [], CONFIG, {}, LATER)
    assert quest.state is state
    assert quest.missing_lines == [2]


def test_removed_functions_go_to_removed_visibly() -> None:
    ratchet = scanned(facts("kept", 1), facts("gone", 10, missing_lines=[11]))
    report = merge_scan(ratchet, [facts("kept", 1)], [], CONFIG, {}, LATER)
    assert report.removed == ["src/pkg/m.py::gone"]
    assert list(ratchet.quests) == ["src/pkg/m.py::kept"]
    assert ratchet.removed == [
        {
            "id": "src/pkg/m.py::gone",
            "state": "TODO",
            "at": LATER,
            "note": "function not found by scan",
            # What finds it again if it comes back moved or renamed (not PASS: never a baseline).
            "fingerprint": "sha256:gone",
            "tries": "0",
        }
    ]


def test_a_function_excluded_since_its_scan_is_kept_not_removed() -> None:
    ratchet = scanned(facts("f", 1, missing_lines=[2]))
    report = merge_scan(
        ratchet, [facts("f", 1, statements=0)], ["src/pkg/m.py::f"], CONFIG, {}, LATER
    )
    assert report.removed == []
    assert "src/pkg/m.py::f" in ratchet.quests


def test_new_functions_of_a_rescan_are_added_beside_the_old() -> None:
    ratchet = scanned(facts("a", 1))
    report = merge_scan(
        ratchet,
        [facts("a", 1), facts("b", 10, missing_lines=[11]), facts("c", 20)],
        [],
        CONFIG,
        {},
        LATER,
    )
    assert (report.added, report.added_pass) == (["src/pkg/m.py::b"], ["src/pkg/m.py::c"])
    assert ratchet.quests["src/pkg/m.py::b"].issued_at == LATER
    assert ratchet.quests["src/pkg/m.py::a"].issued_at == NOW


@pytest.mark.parametrize(
    ("active_state", "kept"),
    [(State.TODO, True), (State.PASS, False), (State.REVIEW, False), (State.DONE, False)],
)
def test_active_is_reset_when_settled(active_state: State, kept: bool) -> None:
    ratchet = scanned(facts("f", 1, missing_lines=[2]))
    ratchet.active = "src/pkg/m.py::f"
    ratchet.quests["src/pkg/m.py::f"].state = active_state
    merge_scan(ratchet, [facts("f", 1, missing_lines=[2])], [], CONFIG, {}, LATER)
    assert ratchet.active == ("src/pkg/m.py::f" if kept else None)


def test_active_is_reset_when_its_function_is_removed() -> None:
    ratchet = scanned(facts("f", 1, missing_lines=[2]), facts("g", 10, missing_lines=[11]))
    ratchet.active = "src/pkg/m.py::f"
    merge_scan(ratchet, [facts("g", 10, missing_lines=[11])], [], CONFIG, {}, LATER)
    assert ratchet.active is None


def test_changed_coverage_config_is_reported_and_the_first_one_kept() -> None:
    ratchet = scanned(facts("f", 1))
    report = merge_scan(
        ratchet, [facts("f", 1)], [], {"run:branch": False, "run:omit": None}, {}, LATER
    )
    assert report.config_changes == ["run:branch"]
    assert ratchet.coverage_config == CONFIG


def test_moving_a_function_keeps_its_exclusions_at_the_same_offset() -> None:
    # Gate step 2 and the CI check compare exclusions by their offset from the
    # function's first line; a rescan that moves the function must move them too.
    ratchet = scanned(facts("f", 10, missing_lines=[12], excluded_lines=[13]))
    quest = ratchet.quests["src/pkg/m.py::f"]
    merge_scan(
        ratchet, [facts("f", 20, missing_lines=[22], excluded_lines=[23])], [], CONFIG, {}, LATER
    )
    assert (quest.first, quest.last) == (20, 24)
    assert [line - quest.first for line in quest.excluded_lines] == [3]


# -- the ratchet file's text --------------------------------------------------------------


def full_ratchet() -> Ratchet:
    ratchet = scanned(
        facts("b", 10, missing_lines=[11], missing_branches=[(10, -10)]),
        facts("a", 1),
        facts("x", 1, file="src/pkg/a.py", missing_lines=[2]),
    )
    quest = ratchet.quests["src/pkg/m.py::b"]
    quest.tries = 1
    quest.history.append(Event(at=LATER, action="submit", verdict="FAIL", note="3-coverage"))
    quest.last_run_seconds = 1.5
    ratchet.active = "src/pkg/m.py::b"
    ratchet.removed.append({"id": "src/pkg/m.py::old", "state": "TODO", "at": NOW, "note": "gone"})
    return ratchet


def test_dumps_loads_round_trip_is_stable() -> None:
    ratchet = full_ratchet()
    text = dumps(ratchet)
    again = loads(text)
    assert dumps(again) == text
    assert again.quests == ratchet.quests
    assert again.active == ratchet.active
    assert again.removed == ratchet.removed
    assert again.quests["src/pkg/m.py::b"].missing_branches == [(10, -10)]
    assert loads(text.encode("utf-8")).quests == ratchet.quests


def test_dumps_has_sorted_keys_one_quest_per_entry_and_a_schema() -> None:
    text = dumps(full_ratchet())
    data = json.loads(text)
    assert data["schema"] == 2
    assert list(data["quests"]) == sorted(data["quests"])
    for entry in data["quests"].values():
        assert list(entry) == sorted(entry)
    assert text.endswith("}\n")
    # Version 2: the quests last, one a line, sorted by id.
    assert '\n"quests": {\n"src/pkg/a.py::x": {' in text


def test_dumps_does_not_depend_on_insertion_order() -> None:
    ratchet = full_ratchet()
    shuffled = copy.deepcopy(ratchet)
    shuffled.quests = dict(reversed(list(shuffled.quests.items())))
    shuffled.test_files = dict(reversed(list(shuffled.test_files.items())))
    assert dumps(shuffled) == dumps(ratchet)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (
            lambda d: d["quests"]["src/pkg/m.py::b"].update(state="WON"),
            "quests['src/pkg/m.py::b'].state",
        ),
        (
            lambda d: d["quests"]["src/pkg/m.py::b"].update(tries=-1),
            "quests['src/pkg/m.py::b'].tries",
        ),
        (
            lambda d: d["quests"]["src/pkg/m.py::b"].pop("fingerprint"),
            "quests['src/pkg/m.py::b'].fingerprint",
        ),
        (lambda d: d.update(active="src/pkg/m.py::nope"), "active"),
        (
            lambda d: d["quests"]["src/pkg/m.py::a"].update(covering_tests=[]),
            "quests['src/pkg/m.py::a'].covering_tests",
        ),
    ],
)
def test_hand_edits_are_errors_naming_the_field(
    edit: Callable[[dict[str, Any]], object], field: str
) -> None:
    data = json.loads(dumps(full_ratchet()))
    edit(data)
    with pytest.raises(RatchetFileError) as info:
        loads(json.dumps(data), "quest.json")
    assert str(info.value).startswith(f"quest.json: {field}: ")


def test_invalid_json_is_an_error_with_its_position() -> None:
    with pytest.raises(RatchetFileError, match=r"quest.json: not valid JSON at line 1 column 2"):
        loads("{oops", "quest.json")


@pytest.mark.parametrize(
    ("fact", "text"),
    [
        (Fact("x.check", "", "e", "a", "the whole message"), "the whole message"),
        (
            Fact("test.failed", "t.py::test_x", "e", "a", "failed: boom"),
            "t.py::test_x failed: boom",
        ),
        (
            Fact("coverage.branch", "src/a.py:41->44", "e", "a", "branch not taken"),
            "src/a.py:41: branch not taken",
        ),
        (Fact("coverage.branch", "src/a.py:41->exit", "e", "a", "m"), "src/a.py:41: m"),
        (Fact("coverage.line", "src/a.py:41", "e", "a", "m"), "src/a.py:41: m"),
        (
            Fact("coverage.line", "src/a.py:41", "run", "never"),
            "src/a.py:41: expected run, got never",
        ),
    ],
)
def test_a_fact_reads_as_one_line_at_its_place(fact: Fact, text: str) -> None:
    assert fact.text() == text
