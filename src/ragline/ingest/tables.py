"""Tables as Markdown: the one table format every loader writes, and the rule that keeps a row with its header.

A loader that reads a table (Word, PowerPoint, a spreadsheet sheet, a CSV file, a PDF page) hands its rows to
:func:`markdown_tables`: the header row (detected by :func:`header_row` when the source does not mark it) becomes
the Markdown header, every other row a ``| a | b |`` line, and a table of more than ``ROWS_PER_BLOCK`` rows or
``WORDS_PER_BLOCK`` words is cut into blocks of whole rows, **each block starting with the header again** and
separated by blank lines. So any chunk that holds a cell also holds the names of its column (the header) and of
its row (the row's first cells), whatever the chunker: a table block is small enough for one chunk.

Chunkers cut by words, sentences or paragraphs, none of which knows a table: :func:`keep_tables_whole` moves
each chunk boundary that falls inside a table block to the block's edge (a block over ``MAX_WHOLE_WORDS`` words,
a long table written by hand in a Markdown file, only to the nearest row's edge), so a row group is never cut
from its header. ``Chunker.chunk`` applies it to every chunker's spans (:func:`bounded_spans`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ragline.anchors import split_at_anchors
from ragline.text.tables import table_blocks
from ragline.types import Document

ROWS_PER_BLOCK = 12
WORDS_PER_BLOCK = 120
MAX_WHOLE_WORDS = 400  # a table block up to this many words is never cut; a longer one only between rows

_SPACE = re.compile(r"\s+")
_NUMBERISH = re.compile(r"^[\s$€£%+\-.,:/()\d]*\d[\s$€£%+\-.,:/()\dA-Za-z]{0,4}$")


def cell_text(value: object) -> str:
    """One cell as Markdown table text: whitespace collapsed, ``|`` escaped; dates as ISO, whole floats as ints."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif hasattr(value, "isoformat"):
        value = value.isoformat()
        if isinstance(value, str) and value.endswith("T00:00:00"):
            value = value[: -len("T00:00:00")]
    return _SPACE.sub(" ", str(value)).strip().replace("|", "\\|")


def header_row(rows: Sequence[Sequence[str]]) -> int:
    """The index of the header among the first rows of a table that does not mark one (0 when unsure).

    The first row with at least two non-empty cells, none of them a number or a date: leading title rows (one
    cell, "Rates 2024" over the table) and blank rows are skipped; when the first such row holds numbers, the
    table has no header to trust and its first row stands for one.
    """
    for i, row in enumerate(rows[:5]):
        filled = [c for c in row if c.strip()]
        if len(filled) >= 2 and not any(_NUMBERISH.match(c) for c in filled):
            return i
        if len(filled) >= 2:
            return 0  # a data row first
    return 0


def markdown_tables(
    rows: Iterable[Sequence[object]],
    header: Sequence[object] | None = None,
    caption: str = "",
    rows_per_block: int = ROWS_PER_BLOCK,
    words_per_block: int = WORDS_PER_BLOCK,
) -> str:
    """Rows (and the header, when the source marks it; else the first row) as Markdown table blocks.

    Empty rows are dropped; short rows are padded to the widest. Blocks hold at most ``rows_per_block``
    rows and about ``words_per_block`` words besides the header, each opening with the header (and the
    caption, when given, on the line above the first). Rows are consumed as they come: a streamed sheet is
    never held whole as cells, only as the lines written so far.
    """
    head = [cell_text(c) for c in header] if header is not None else None
    blocks: list[str] = []
    block: list[str] = []
    words = 0
    width = len(head) if head is not None else 0
    for raw in rows:
        cells = [cell_text(c) for c in raw]
        while cells and not cells[-1]:
            cells.pop()
        if not any(cells):
            continue
        if head is None:
            head, width = cells, len(cells)
            continue
        width = max(width, len(cells))
        count = sum(len(c.split()) for c in cells)
        if block and (len(block) >= rows_per_block or words + count > words_per_block):
            blocks.append(_block(head, block, width))
            block, words = [], 0
        block.append("| " + " | ".join(cells + [""] * (width - len(cells))) + " |")
        words += count
    if head is None:
        return caption
    if block or not blocks:
        blocks.append(_block(head, block, width))
    text = "\n\n".join(blocks)
    return f"{caption}\n{text}" if caption else text


def _block(head: list[str], lines: list[str], width: int) -> str:
    head = head + [""] * (width - len(head))
    return "\n".join(["| " + " | ".join(head) + " |", "|" + " --- |" * len(head), *lines])


def table_from_grid(grid: Sequence[Sequence[object]], caption: str = "") -> str:
    """A table given as a list of rows with no marked header: the header detected, rows above it dropped
    into the caption (a title row over the table), the rest written by :func:`markdown_tables`."""
    texts = [[cell_text(c) for c in row] for row in grid]
    at = header_row(texts)
    above = " ".join(" ".join(c for c in row if c) for row in texts[:at]).strip()
    caption = " ".join(part for part in (caption, above) if part)
    return markdown_tables(texts[at + 1 :], header=texts[at], caption=caption) if texts[at:] else caption


# --- keeping table blocks whole in chunks ---------------------------------------------------------------


def bounded_spans(document: Document, spans: Sequence[tuple[int, int]], whole: bool = False) -> list[tuple[int, int]]:
    """A chunker's spans with the rules every chunker follows: no boundary inside a table block
    (:func:`keep_tables_whole`), no span across a page, slide or sheet (``split_at_anchors``). ``whole``: the
    span is the whole document (the ``none`` chunker), kept as it is."""
    if whole:
        return list(spans)
    return split_at_anchors(document.text, document.metadata, keep_tables_whole(document.text, spans))


def keep_tables_whole(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with every boundary inside a table block moved out to the block's edges (a start back to the
    block's start, an end on to its end); inside a block over ``MAX_WHOLE_WORDS`` words, to the enclosing
    row's edges. Spans that become equal are kept once; order is kept."""
    if "|" not in text:
        return list(spans)
    blocks = table_blocks(text)
    if not blocks:
        return list(spans)
    out: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    for start, end in spans:
        for b_start, b_end, rows in blocks:
            whole = len(text[b_start:b_end].split()) <= MAX_WHOLE_WORDS
            if b_start < start < b_end:
                start = b_start if whole else max([b_start, *(r for r in rows if r <= start)])
            if b_start < end < b_end:
                if whole:
                    end = b_end
                else:
                    newline = text.find("\n", end - 1, b_end)  # the end of the row the end falls in
                    end = b_end if newline < 0 else newline
        if (start, end) not in seen and start < end:
            seen.add((start, end))
            out.append((start, end))
    return out
