"""One quest's extra field set on its own line of the ratchet file (engine/active.py)."""

from __future__ import annotations

from pytest_quest.engine.active import with_quest_extra

TEXT = (
    b'{\n"quests": {\n'
    b'"a.py::f": {"extra": {"k": "old"}, "state": "TODO"},\n'
    b'"a.py::g": {"state": "TODO"}\n'
    b"}\n}\n"
)


def test_the_value_is_set_on_the_quests_line_alone() -> None:
    assert with_quest_extra(TEXT, "a.py::f", "begun", "2026") == (
        b'{\n"quests": {\n'
        b'"a.py::f": {"extra": {"begun": "2026", "k": "old"}, "state": "TODO"},\n'
        b'"a.py::g": {"state": "TODO"}\n'
        b"}\n}\n"
    )


def test_a_last_line_without_comma_and_without_extra_gets_one() -> None:
    assert with_quest_extra(TEXT, "a.py::g", "k", "v") == (
        b'{\n"quests": {\n'
        b'"a.py::f": {"extra": {"k": "old"}, "state": "TODO"},\n'
        b'"a.py::g": {"extra": {"k": "v"}, "state": "TODO"}\n'
        b"}\n}\n"
    )


def test_an_existing_key_is_replaced() -> None:
    patched = with_quest_extra(TEXT, "a.py::f", "k", "new")
    assert patched is not None
    assert b'"a.py::f": {"extra": {"k": "new"}, "state": "TODO"},\n' in patched


def test_an_id_is_found_as_the_file_writes_it() -> None:
    text = b'{\n"q\\u00e9.py::f": {"state": "TODO"}\n}\n'
    assert (
        with_quest_extra(text, "q\u00e9.py::f", "k", "v")
        == b'{\n"q\\u00e9.py::f": {"extra": {"k": "v"}, "state": "TODO"}\n}\n'
    )


def test_none_when_the_file_is_not_laid_out_one_quest_a_line() -> None:
    assert with_quest_extra(TEXT, "a.py::h", "k", "v") is None  # not there
    twice = TEXT + b'\n"a.py::f": {},\n'
    assert with_quest_extra(twice, "a.py::f", "k", "v") is None
    assert with_quest_extra(b'{\n"a.py::f": {"state": \n}', "a.py::f", "k", "v") is None  # not JSON
    assert with_quest_extra(b'{\n"a.py::f": [1, 2],\n}', "a.py::f", "k", "v") is None
    assert with_quest_extra(b'{\n"a.py::f": {"extra": "x"}\n}', "a.py::f", "k", "v") is None
    assert with_quest_extra(b'{"a.py::f": {}}', "a.py::f", "k", "v") is None  # not at a line start
