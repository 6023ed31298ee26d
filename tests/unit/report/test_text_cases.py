"""The per-file table: rows written as rich draws them, or drawn by rich when they would differ."""

from __future__ import annotations

import io

from pytest_quest.report.text import _file_table, console_into

HEADER = ["file", "TODO", "total"]
ROWS = [["a.py", "1", "1"], ["bb.py", "22", "22"]]
NATURAL = "file  ┃ TODO ┃ total\n━━━━━━╇━━━━━━╇━━━━━━\na.py  │    1 │     1\nbb.py │   22 │    22\n"


def _drawn(rows: list[list[str]], widths: list[int]) -> str:
    buffer = io.StringIO()
    _file_table(console_into(buffer, markup=False, width=80), buffer, HEADER, rows, widths)
    return buffer.getvalue()


def test_rows_at_their_natural_widths_are_the_table_rich_draws() -> None:
    assert _drawn(ROWS, [5, 4, 5]) == NATURAL


def test_wider_columns_are_kept_for_every_row() -> None:
    assert _drawn(ROWS, [9, 4, 5]) == (
        "file      ┃ TODO ┃ total\n"
        "━━━━━━━━━━╇━━━━━━╇━━━━━━\n"
        "a.py      │    1 │     1\n"
        "bb.py     │   22 │    22\n"
    )


def test_widths_narrower_than_the_cells_leave_every_row_to_rich() -> None:
    assert _drawn(ROWS, [2, 1, 1]) == NATURAL


def test_a_cell_rich_might_draw_otherwise_is_drawn_by_rich() -> None:
    rows = [["a.py", "1", "1"], ["\u00e9.py", "2", "2"]]
    assert _drawn(rows, [4, 4, 5]) == (
        "file \u2503 TODO \u2503 total\n"
        "\u2501\u2501\u2501\u2501\u2501\u2547\u2501\u2501\u2501\u2501\u2501\u2501\u2547"
        "\u2501\u2501\u2501\u2501\u2501\u2501\n"
        "a.py \u2502    1 \u2502     1\n"
        "\u00e9.py \u2502    2 \u2502     2\n"
    )


def test_one_row_is_drawn_by_rich() -> None:
    assert _drawn(ROWS[:1], [4, 4, 5]) == (
        "file \u2503 TODO \u2503 total\n"
        "\u2501\u2501\u2501\u2501\u2501\u2547\u2501\u2501\u2501\u2501\u2501\u2501\u2547"
        "\u2501\u2501\u2501\u2501\u2501\u2501\n"
        "a.py \u2502    1 \u2502     1\n"
    )
