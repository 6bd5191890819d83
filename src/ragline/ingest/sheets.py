"""Spreadsheets (``.xlsx``, openpyxl) and ``.csv`` files as Documents: one Markdown table per sheet.

Each sheet becomes a ``# <sheet name>`` section holding its table: the header row is detected (the first row of
at least two cells that are not numbers or dates; title rows above it join the caption, ``tables.py``), and the
rows follow in groups of at most 12 rows or about 120 words, **each group opening with the header again**, so a
chunk that holds a cell holds its column's name and its row's first cells, however wide or long the sheet.
``metadata["sheet_starts"]`` and ``metadata["sheet_names"]`` record where each sheet starts, so a chunk's
``sheet`` (and a citation's) names the sheet it comes from (``ragline.anchors``); hidden sheets are read too.

Memory stays bounded: the workbook is opened read-only (openpyxl streams the rows of each sheet from the zip,
cell values only, formulas as their cached results), and the text may grow to at most ``TEXT_PER_BYTE`` times
the file size cap before the file is refused by name. A CSV file is decoded as text files are (``files.py``),
its delimiter sniffed (``,`` ``;`` tab ``|``), and read as one table.

Refused, by name: an encrypted (password-protected) workbook, a legacy ``.xls`` renamed, a truncated or corrupt
file. Metadata: ``author`` (the creator), ``created``, ``modified``; a sidecar overrides them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

from ragline.errors import InputError
from ragline.ingest.files import DEFAULT_MAX_BYTES, decode_text, read_capped
from ragline.ingest.structured import Blocks, check_office, core_metadata, office_bytes, structured_document, text_cap
from ragline.ingest.tables import cell_text, header_row, markdown_tables
from ragline.types import Document

HEADER_LOOKAHEAD = 5  # rows read before the header is chosen


def load_xlsx(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One ``.xlsx`` workbook as a Document; raises ``InputError`` saying what is wrong with it."""
    data = office_bytes(path, max_bytes, ".xlsx")
    blocks = Blocks(str(path), text_cap(max_bytes))
    metadata = xlsx_into(blocks, data, str(path))
    return structured_document(path, relative, blocks, metadata)


def xlsx_into(blocks: Blocks, data: bytes, where: str, level: int = 1) -> dict[str, Any]:
    """Write each sheet of a workbook into ``blocks`` (a heading of ``level`` and a table); metadata back."""
    import openpyxl

    check_office(data, where, ".xlsx")
    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as error:  # noqa: BLE001 (openpyxl raises zipfile, KeyError, lxml and its own kinds)
        raise InputError(where, f"corrupt .xlsx, cannot be read ({type(error).__name__}: {error})") from None
    try:
        properties = core_metadata(book.properties)
        if getattr(book.properties, "creator", None):
            properties["author"] = book.properties.creator
        for sheet in book.worksheets:
            rows = _capped(sheet.iter_rows(values_only=True), blocks)
            blocks.mark("sheet_starts", sheet.title)
            blocks.heading(level, sheet.title)
            try:
                blocks.add(_table(rows))
            except InputError:
                raise
            except Exception as error:  # noqa: BLE001 (a damaged sheet part fails while it streams)
                raise InputError(where, f"corrupt .xlsx: sheet {sheet.title!r} cannot be read ({error})") from None
        properties["sheets"] = len(book.worksheets)
        return properties
    finally:
        book.close()


def load_csv(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One ``.csv`` file as a Document (one table); raises ``InputError`` saying what is wrong with it."""
    text, encoding = decode_text(read_capped(path, max_bytes), str(path))
    blocks = Blocks(str(path), text_cap(max_bytes))
    csv_into(blocks, text, str(path))
    return structured_document(path, relative, blocks, {"encoding": encoding})


def csv_into(blocks: Blocks, text: str, where: str) -> None:
    """Write a CSV text's table into ``blocks``."""
    try:
        dialect: Any = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        blocks.add(_table(_capped(csv.reader(io.StringIO(text), dialect), blocks)))
    except csv.Error as error:
        raise InputError(where, f"not a readable CSV file ({error})") from None


def _table(rows: Iterator[Sequence[object]]) -> str:
    """A table streamed from ``rows``: the header chosen among the first rows, then every row after it."""
    first = [[cell_text(c) for c in row] for _, row in zip(range(HEADER_LOOKAHEAD), rows)]
    if not first:
        return ""
    at = header_row(first)
    caption = " ".join(" ".join(c for c in row if c) for row in first[:at]).strip()
    rest: Iterable[Sequence[object]] = chain(first[at + 1 :], rows)
    return markdown_tables(rest, header=first[at], caption=caption)


def _capped(rows: Iterable[Sequence[object]], blocks: Blocks) -> Iterator[Sequence[object]]:
    """``rows`` as they come, refused (by name) once their cells hold more characters than the text may."""
    total = blocks.length
    for row in rows:
        total += sum(len(str(c)) + 3 for c in row if c is not None)
        if total > blocks.max_chars:
            raise InputError(
                blocks.where, f"its text is over {blocks.max_chars:,} characters (raise --max-file-mb to index it)"
            )
        yield row
