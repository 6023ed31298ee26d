"""Status written without rich (ASCII output) is, byte for byte, what rich draws.

`report/text.py` writes a line, the per-file table and the titles itself
when the output is ASCII and rich would change nothing; these tests draw the
same ratchets both ways (`_PLAIN` off: rich draws everything) and
compare, names and widths chosen by Hypothesis, hostile ones included.
"""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_quest.core.model import Fact, Quest, Ratchet, State
from pytest_quest.report import text
from pytest_quest.report.text import draw_status, status_view
from tests.support.profiles import examples

NAMES = st.text(
    alphabet=st.sampled_from("abcz_/.-[]~ \t\u00e9\u2502\x1b09"), min_size=1, max_size=40
).map(lambda name: f"src/{name}.py")


def ratchet_of(files: list[tuple[str, list[State]]]) -> Ratchet:
    ratchet = Ratchet()
    for name, states in files:
        for index, state in enumerate(states):
            quest = Quest(
                id=f"{name}::f{index}",
                file=name,
                qualname=f"f{index}",
                first=index + 1,
                last=index + 2,
                fingerprint="sha256:x",
                state=state,
                tries=index % 4,
            )
            if state is State.REVIEW and index % 2:
                quest.facts = [Fact("dispute.mutant", name, "killed", "survived", message="m")]
            ratchet.quests[quest.id] = quest
    return ratchet


def both(
    ratchet: Ratchet, width: int, monkeypatch: pytest.MonkeyPatch, *, markup: bool = False
) -> tuple[str, str]:
    plain = draw_status(status_view(ratchet), 3, markup, width, ascii=True)
    with monkeypatch.context() as patched:
        patched.setattr(text, "_PLAIN", False)
        drawn = draw_status(status_view(ratchet), 3, markup, width, ascii=True)
    return plain, drawn


@settings(max_examples=examples(60), deadline=None)
@given(
    files=st.lists(
        st.tuples(NAMES, st.lists(st.sampled_from(list(State)), min_size=1, max_size=12)),
        min_size=0,
        max_size=6,
        unique_by=lambda item: item[0],
    ),
    width=st.sampled_from([40, 41, 60, 79, 80, 120, 400]),
    markup=st.booleans(),
)
def test_plain_output_is_what_rich_draws(
    files: list[tuple[str, list[State]]], width: int, markup: bool
) -> None:
    """ASCII output with colour too (`--color=yes` off a terminal): rich draws its bold header."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        plain, drawn = both(ratchet_of(files), width, monkeypatch, markup=markup)
    assert plain == drawn


@pytest.mark.parametrize("count", [1, 9, 10, 99_999, 10**7])
def test_wide_counts_keep_their_columns(count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    ratchet = ratchet_of([("src/a.py", [State.TODO] * 3)])
    plain, drawn = both(ratchet, 120, monkeypatch)
    assert plain == drawn
    table = text._ascii_table(
        ["file", "TODO", "total"],
        [["src/a.py", str(count), str(count)]],
        [8, max(4, len(str(count))), max(5, len(str(count)))],
    )
    console, buffer = text.terminal(markup=False, width=400, ascii=True)
    assert table == text._rich_table(
        console, ["file", "TODO", "total"], [["src/a.py", str(count), str(count)]], None
    )


def test_ascii_output_imports_no_rich_when_nothing_needs_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [
        module for module in sys.modules if module == "rich" or module.startswith("rich.")
    ]:
        monkeypatch.delitem(sys.modules, name)
    draw_status(
        status_view(ratchet_of([("src/a.py", [State.TODO, State.REVIEW, State.DONE])])),
        3,
        False,
        80,
        ascii=True,
    )
    assert "rich.console" not in sys.modules


def test_status_lists_unwitnessed_survivors_in_their_own_section() -> None:
    ratchet = ratchet_of([("src/a.py", [State.PASS, State.PASS])])
    survivor = {"id": "m0000beef", "line": 3, "operator": "condition.false"}
    ratchet.quests["src/a.py::f1"].unwitnessed = [
        {**survivor, "original": "if x:", "mutated": "if False:"}
    ]
    view = text.status_view(ratchet)
    assert view.sections == {
        "survivors no call told apart, not held against the tests (unwitnessed)": (
            "  src/a.py::f1  (src/a.py:2-3, PASS)\n"
            "    src/a.py:3: `if x:` -> `if False:` (operator condition.false, mutant m0000beef)"
        )
    }
