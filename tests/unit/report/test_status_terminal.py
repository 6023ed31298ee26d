"""The status view fits the terminal: its width down to 40 columns, ASCII off a terminal, calm colours."""

from __future__ import annotations

import pytest

from pytest_quest.core.model import Quest, Ratchet, State
from pytest_quest.report.text import draw_status, status_view

BOX = set("━┃╇│─┼╋┏┓┗┛┡┩└┘")


def ratchet(files: int = 5, long_name: bool = False) -> Ratchet:
    result = Ratchet()
    states = [State.TODO, State.PASS, State.PASS, State.REVIEW, State.DONE, State.TODO, State.PASS]
    for number in range(files):
        name = f"src/shop/module_{number}.py"
        if long_name and number == 0:
            name = "src/a/rather/deeply/nested/package/with_a_long_module_name.py"
        for index, state in enumerate(states):
            quest = Quest(
                id=f"{name}::f{index}",
                file=name,
                qualname=f"f{index}",
                first=index * 10 + 1,
                last=index * 10 + 5,
                fingerprint="sha256:x",
            )
            quest.state = state
            result.quests[quest.id] = quest
    return result


@pytest.mark.parametrize("width", [40, 50, 60, 80, 120])
@pytest.mark.parametrize("long_name", [False, True])
def test_every_line_of_the_table_fits_the_width(width: int, long_name: bool) -> None:
    text = draw_status(
        status_view(ratchet(long_name=long_name)), 3, markup=False, width=width, ascii=True
    )
    table = text.split("waiting for a person")[0]  # the REVIEW/DONE lists are plain lines
    for line in table.splitlines():
        assert len(line) <= width, (width, line)
    assert "…" not in table  # nothing cut: every count and name readable
    assert "src/shop/module_4.py" in table
    assert "".join(table.split()).count("with_a_long_module_name.py") == long_name


def test_a_narrow_terminal_shows_each_files_counts_on_their_own_line() -> None:
    text = draw_status(status_view(ratchet()), 3, markup=False, width=40, ascii=True)
    lines = text.splitlines()
    index = lines.index("src/shop/module_0.py")
    assert lines[index + 1] == "  2 TODO, 3 PASS, 1 REVIEW, 1 DONE (7)"


def test_a_wide_terminal_shows_one_table() -> None:
    text = draw_status(status_view(ratchet()), 3, markup=False, width=100, ascii=True)
    header = next(line for line in text.splitlines() if line.startswith("file"))
    assert header.split() == [
        "file",
        "|",
        "TODO",
        "|",
        "PASS",
        "|",
        "REVIEW",
        "|",
        "DONE",
        "|",
        "EXCLUDED",
        "|",
        "total",
    ]
    row = next(line for line in text.splitlines() if line.startswith("src/shop/module_0.py"))
    assert row.replace("|", " ").split()[1:] == ["2", "3", "1", "1", "0", "7"]


@pytest.mark.parametrize("width", [40, 100])
def test_ascii_has_no_box_drawing_glyphs(width: int) -> None:
    text = draw_status(status_view(ratchet()), 3, markup=False, width=width, ascii=True)
    assert text.isascii(), [c for c in text if not c.isascii()]


def test_on_a_terminal_the_glyphs_stay() -> None:
    text = draw_status(status_view(ratchet()), 3, markup=True, width=100, ascii=False)
    assert BOX & set(text)


def test_the_progress_bar_is_not_red() -> None:
    text = draw_status(status_view(ratchet()), 3, markup=True, width=100, ascii=False)
    bar = next(line for line in text.splitlines() if "settled" in line)
    assert "\x1b[31m" not in bar and "\x1b[91m" not in bar and "249;38;114" not in bar
    assert "\x1b[32m" in bar  # settled work: green


def test_the_ascii_progress_bar_shows_settled_and_unsettled_parts() -> None:
    text = draw_status(status_view(ratchet()), 3, markup=False, width=60, ascii=True)
    bar = next(line for line in text.splitlines() if "settled" in line)
    # 25 of 35 settled, 30 columns: 21 of them "#"
    assert bar == "[" + "#" * 21 + "-" * 9 + "] 25/35 settled (71%)"


def test_without_colour_the_progress_bar_still_shows_both_parts() -> None:
    """``--color=no`` on a terminal: no colour tells the parts apart, the glyphs do."""
    text = draw_status(status_view(ratchet()), 3, markup=False, width=60, ascii=False)
    bar = next(line for line in text.splitlines() if "settled" in line)
    assert bar == "[" + "█" * 21 + "░" * 9 + "] 25/35 settled (71%)"
    none_settled = Ratchet(
        quests={k: q for k, q in ratchet().quests.items() if q.state is State.TODO}
    )
    text = draw_status(status_view(none_settled), 3, markup=False, width=60, ascii=False)
    bar = next(line for line in text.splitlines() if "settled" in line)
    assert bar == "[" + "░" * 30 + "] 0/10 settled (0%)"


def rich_table(ratchet: Ratchet, markup: bool, width: int, ascii: bool) -> str:
    """The per-file table as rich alone draws it (every row), the reference of the fast rows."""
    from rich.table import Table

    from pytest_quest.report.text import terminal

    console, buffer = terminal(markup=markup, width=width, ascii=ascii)
    files: dict[str, list[int]] = {}
    for quest in ratchet.quests.values():
        files.setdefault(quest.file, [0] * len(State))[list(State).index(quest.state)] += 1
    table = Table(title=None, show_edge=False, pad_edge=False)
    table.add_column("file", no_wrap=True)
    for state in [*State, "total"]:
        table.add_column(getattr(state, "value", state), justify="right", no_wrap=True)
    for name in sorted(files):
        table.add_row(name, *(str(n) for n in files[name]), str(sum(files[name])))
    console.print(table)
    return buffer.getvalue()


@pytest.mark.parametrize(("markup", "ascii"), [(False, True), (True, False), (False, False)])
@pytest.mark.parametrize("files", [1, 2, 30])
def test_the_table_is_the_one_rich_draws(markup: bool, ascii: bool, files: int) -> None:
    shown = ratchet(files=files, long_name=True)
    text = draw_status(status_view(shown), 3, markup=markup, width=120, ascii=ascii)
    assert rich_table(shown, markup, 120, ascii).rstrip("\n") in text


def test_a_name_rich_would_read_as_markup_is_drawn_by_rich() -> None:
    shown = ratchet(files=3)
    for quest in list(shown.quests.values())[:7]:
        quest.file = "src/[bold]odd[/bold].py"
    text = draw_status(status_view(shown), 3, markup=False, width=120, ascii=True)
    assert rich_table(shown, False, 120, True).rstrip("\n") in text
