"""A results table as plain text, character for character what rich prints where it prints no styles.

To a pipe or a file (no colours, no bold), rich's ``Table`` spends ~9 ms laying out the ten hits of
``ragline search``: more than the search itself. ``plain_table`` lays out the same table from rich's own
parts: its cell widths (``rich.cells``), its line breaking (``divide_line``), its sharing of the width
between columns (``Table._collapse_widths``, ``ratio_reduce``), its measurements and its box; the steps
below follow ``Table``, ``Padding`` and ``Text.wrap`` for the one table shape the CLI prints (every
column ``overflow="fold"``, default padding, edges and header). Where rich would print styles (a
terminal), and for what this module does not follow (tabs, a narrow console, Jupyter, legacy Windows),
it returns None and the caller prints rich's table. ``tests/cli/test_plain_table.py`` compares the two
on random tables at every width.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich import box
from rich._ratio import ratio_reduce
from rich._wrap import divide_line
from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.control import strip_control_codes
from rich.measure import Measurement
from rich.table import Table

MIN_WIDTH = 20  # a console narrower than this gets rich's table (columns of 0-2 cells have their own rules)
PAD = 1  # the cell padding left and right (rich's default)
_TRAILING_SPACE = re.compile(r"\s+$")


def plain_table(console: Console, title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str | None:
    """The text ``console.print(Table(...))`` writes for this table, or None where rich would print styles.

    ``rows`` hold plain text (no markup); a cell's lines are separated by "\\n".
    """
    width = console.width
    if console.color_system is not None or console.is_jupyter or console.legacy_windows or width < MIN_WIDTH:
        return None
    title = strip_control_codes(title)
    table = [[strip_control_codes(cell) for cell in row] for row in (headers, *rows)]
    if "\t" in title or any("\t" in cell for row in table for cell in row):
        return None
    columns = list(zip(*table))
    widths = _column_widths(columns, width - (len(columns) + 1))  # the edges and dividers take one cell each
    if min(widths) < 2 * PAD + 1:
        return None
    table_width = sum(widths) + len(columns) + 1
    frame = box.HEAVY_HEAD.substitute(console.options)
    lines = [line for part in title.split("\n") for line in _centered(part, table_width)] if title else []
    lines.append(frame.get_top(widths))
    for index, row in enumerate(table):
        cells = [_cell_lines(text, w) for text, w in zip(row, widths)]
        height = max(map(len, cells))
        if index == 0:  # the header row is aligned at the bottom, other rows at the top
            cells = [[" " * w] * (height - len(cell)) + cell for cell, w in zip(cells, widths)]
        else:
            cells = [cell + [" " * w] * (height - len(cell)) for cell, w in zip(cells, widths)]
        left, divider, right = (
            (frame.head_left, frame.head_vertical, frame.head_right)
            if index == 0
            else (frame.foot_left, frame.foot_vertical, frame.foot_right)
            if index == len(table) - 1
            else (frame.mid_left, frame.mid_vertical, frame.mid_right)
        )
        lines.extend(left + divider.join(parts) + right for parts in zip(*cells))
        if index == 0:
            lines.append(frame.get_row(widths, "head", edge=True))
    lines.append(frame.get_bottom(widths))
    if any(cell_len(line) > width for line in lines):  # rich would crop it: not followed here
        return None
    return "".join(line + "\n" for line in lines)


def _measure(text: str, max_width: int) -> Measurement:
    """``Measurement.get`` of a padded ``Text`` cell (``Padding.__rich_measure__``, ``Text.__rich_measure__``)."""
    if max_width < 1:
        return Measurement(0, 0)
    if max_width - 2 * PAD < 1:
        return Measurement(max_width, max_width)
    lines, words = text.splitlines(), text.split()
    longest = max(map(cell_len, lines)) if lines else 0
    inner = Measurement(max(map(cell_len, words)) if words else longest, longest).normalize().with_maximum(max_width)
    inner = Measurement(0, 0) if inner.maximum < 1 else inner.normalize()
    padded = Measurement(inner.minimum + 2 * PAD, inner.maximum + 2 * PAD).with_maximum(max_width).normalize()
    return Measurement(0, 0) if padded.maximum < 1 else padded.normalize()


def _measure_column(cells: Sequence[str], max_width: int) -> Measurement:
    if max_width < 1:
        return Measurement(0, 0)
    measured = [_measure(cell, max_width) for cell in cells]
    return Measurement(max(m.minimum for m in measured), max(m.maximum for m in measured)).with_maximum(max_width)


def _column_widths(columns: Sequence[Sequence[str]], max_width: int) -> list[int]:
    """``Table._calculate_column_widths`` for columns that may all wrap, of no fixed width."""
    widths = [_measure_column(cells, max_width).maximum or 1 for cells in columns]
    if sum(widths) > max_width:
        widths = Table._collapse_widths(widths, [True] * len(widths), max_width)
        if sum(widths) > max_width:  # the last resort: reduce every column evenly
            widths = ratio_reduce(sum(widths) - max_width, [1] * len(widths), widths, widths)
        widths = [_measure_column(cells, w).maximum or 0 for cells, w in zip(columns, widths)]
    return widths


def _wrapped(line: str, width: int) -> list[str]:
    """One line of text folded to ``width`` cells (``Text.wrap`` before justification)."""
    offsets = divide_line(line, width, fold=True)
    pieces = [line[a:b] for a, b in zip([0, *offsets], [*offsets, len(line)])]
    for i, piece in enumerate(pieces):  # Text.rstrip_end: spaces beyond the width go (counted in characters)
        space = _TRAILING_SPACE.search(piece) if len(piece) > width else None
        if space is not None:
            pieces[i] = piece[: -min(len(space.group()), len(piece) - width)]
    return pieces


def _cell_lines(text: str, width: int) -> list[str]:
    """A cell's lines, padded to the column's ``width``: left-justified, folded, one space either side."""
    inner = width - 2 * PAD
    lines = [set_cell_size(piece, inner) for line in text.split("\n") for piece in _wrapped(line, inner)]
    return [" " * PAD + line + " " * PAD for line in lines]


def _centered(line: str, width: int) -> list[str]:
    """A title line wrapped to ``width`` and centred (``Lines.justify(..., "center")``)."""
    out = []
    for piece in _wrapped(line, width):
        piece = piece.rstrip()
        if cell_len(piece) > width:
            piece = set_cell_size(piece, width)
        piece = " " * ((width - cell_len(piece)) // 2) + piece
        out.append(piece + " " * (width - cell_len(piece)))
    return out
