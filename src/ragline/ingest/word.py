"""Word files (``.docx``, python-docx) as Documents: headings, paragraphs, lists and tables in body order.

* a paragraph styled ``Heading N`` (or ``Title``: level 1) becomes a ``#``-line of level N, so the heading tree
  of the document is the section tree and each chunk gets its breadcrumb;
* a paragraph of a list style (``List Bullet``, ``List Number``, ...) or with numbering becomes a ``-`` item,
  indented two spaces a level;
* a table becomes a Markdown table, its first row the header, split into row groups with the header repeated
  (``tables.py``); a cell holding a nested table is read as its text;
* comments, tracked-change deletions, headers and footers of pages are left out (python-docx reads the body).

Metadata: ``author``, ``created``, ``modified`` from the core properties; the title is the core title, else
the first heading, else the file name; a ``<file>.meta.json`` sidecar (``acl``, ...) overrides them.
Refused, by name: an encrypted file, a legacy ``.doc`` renamed, a truncated or corrupt file (``structured.py``).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ragline.errors import InputError
from ragline.ingest.files import DEFAULT_MAX_BYTES
from ragline.ingest.structured import Blocks, check_office, core_metadata, office_bytes, structured_document, text_cap
from ragline.ingest.tables import markdown_tables
from ragline.types import Document


def load_docx(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One ``.docx`` file as a Document; raises ``InputError`` saying what is wrong with it."""
    data = office_bytes(path, max_bytes, ".docx")
    blocks = Blocks(str(path), text_cap(max_bytes))
    metadata = docx_into(blocks, data, str(path))
    return structured_document(path, relative, blocks, metadata, _first_heading(blocks))


def docx_into(blocks: Blocks, data: bytes, where: str) -> dict[str, Any]:
    """Write a ``.docx`` file's body into ``blocks``; its core metadata back."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    check_office(data, where, ".docx")
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError) as error:
        raise InputError(where, f"not a Word document, or a corrupt one ({type(error).__name__}: {error})") from None
    except Exception as error:  # noqa: BLE001 (lxml and zipfile raise many kinds on a damaged part)
        raise InputError(where, f"corrupt .docx, cannot be read ({type(error).__name__}: {error})") from None
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            blocks.add(markdown_tables(_rows(block)))
        else:
            _paragraph(blocks, block)
    return core_metadata(document.core_properties)


def _paragraph(blocks: Blocks, paragraph: Any) -> None:
    text = paragraph.text
    if not text.strip():
        return
    style = (paragraph.style.name if paragraph.style is not None else "") or ""
    if style == "Title":
        blocks.heading(1, text)
    elif style.startswith("Heading") and style[7:].strip().isdigit():
        blocks.heading(int(style[7:].strip()), text)
    elif style.startswith("List") or paragraph._p.pPr is not None and paragraph._p.pPr.numPr is not None:
        level = int(style.rsplit(" ", 1)[-1]) - 1 if style.rsplit(" ", 1)[-1].isdigit() else 0
        blocks.item(text, level, ordered="Number" in style)
    else:
        blocks.paragraph(text)


def _rows(table: Any) -> list[list[str]]:
    rows = []
    for row in table.rows:
        cells, previous = [], None
        for cell in row.cells:
            if cell._tc is previous:  # a horizontally merged cell repeats: once is enough
                continue
            previous = cell._tc
            cells.append(" ".join(p.text for p in cell.paragraphs))
        rows.append(cells)
    return rows


def _first_heading(blocks: Blocks) -> str:
    return next((part.lstrip("#").strip() for part in blocks.parts if part.startswith("#")), "")
