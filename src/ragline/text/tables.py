"""Reading Markdown tables back out of a text: where each table block is, and the header and cells of a row.

Loaders write tables as Markdown (``ragline.ingest.tables``): a header line, a rule line (``| --- |``), then one
``|`` line per row, blocks of rows each under the header again. Chunkers keep a block whole, and readers use the
header to know what a cell is (:func:`row_at`): the cell ``$95`` in the row ``Zurich`` under the column
``Per diem`` answers "What is the per diem for Zurich?", though no sentence says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RULE = re.compile(r"^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$")
_CELL_BAR = re.compile(r"(?<!\\)\|")


def table_blocks(text: str) -> list[tuple[int, int, list[int]]]:
    """``(start, end, row_starts)`` of each Markdown table block of ``text``: a header line, its rule line and
    the ``|`` lines after them, up to a line that is not a table row. ``row_starts`` are the data rows' starts."""
    blocks = []
    lines = [(m.start(), m.end(), m.group()) for m in re.finditer(r"[^\n]*", text) if m.start() < len(text)]
    lines = [line for i, line in enumerate(lines) if i == 0 or line[0] != lines[i - 1][1]]  # no empty matches
    i = 0
    while i + 1 < len(lines):
        start, _, line = lines[i]
        if line.lstrip().startswith("|") and _RULE.match(lines[i + 1][2]):
            j = i + 2
            rows = []
            while j < len(lines) and lines[j][2].lstrip().startswith("|"):
                rows.append(lines[j][0])
                j += 1
            blocks.append((start, lines[j - 1][1], rows))
            i = j
        else:
            i += 1
    return blocks


def cell_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each cell's text (stripped) in the table line ``text[start:end]``."""
    line = text[start:end]
    bars = [m.start() for m in _CELL_BAR.finditer(line)]
    if line.lstrip().startswith("|") and bars:
        bars = bars if line.rstrip().endswith("|") else [*bars, len(line)]
    else:
        bars = [-1, *bars, len(line)]
    spans = []
    for a, b in zip(bars, bars[1:]):
        cell_start, cell_end = a + 1, b
        while cell_start < cell_end and line[cell_start].isspace():
            cell_start += 1
        while cell_end > cell_start and line[cell_end - 1].isspace():
            cell_end -= 1
        spans.append((start + cell_start, start + cell_end))
    return spans


@dataclass(frozen=True, slots=True)
class Row:
    """A data row of a table block: its line, its cells and the header's cells, as offsets into the text."""

    start: int
    end: int
    cells: list[tuple[int, int]]
    header: list[tuple[int, int]]

    def column_of(self, offset: int) -> int | None:
        """The index of the cell holding ``offset`` (None: between cells)."""
        return next((i for i, (a, b) in enumerate(self.cells) if a <= offset <= b and a < b), None)


def table_rows(text: str) -> dict[int, Row]:
    """Every data row of every table block of ``text``, by the offset where its line starts."""
    rows: dict[int, Row] = {}
    for block_start, _, starts in table_blocks(text):
        header_end = text.find("\n", block_start)
        header = cell_spans(text, block_start, header_end)
        for row_start in starts:
            row_end = text.find("\n", row_start)
            row_end = len(text) if row_end < 0 else row_end
            rows[row_start] = Row(row_start, row_end, cell_spans(text, row_start, row_end), header)
    return rows


def row_at(text: str, offset: int, rows: dict[int, Row] | None = None) -> Row | None:
    """The table data row holding character ``offset`` of ``text``, or None."""
    line_start = text.rfind("\n", 0, offset) + 1
    if not text.startswith("|", line_start) and not text[line_start:offset].lstrip().startswith("|"):
        return None
    rows = table_rows(text) if rows is None else rows
    return rows.get(line_start)
