"""PowerPoint decks (``.pptx``, python-pptx) as Documents: one section per slide, its anchor the slide number.

Each slide becomes a ``# `` heading (its title; "Slide N" when it has none), then the text of its shapes in
the order they are laid out (top to bottom, then left to right): a text frame of one line as a paragraph, of
several as list items (indented by level: slides are bullets); tables as Markdown tables with their header
(``tables.py``); grouped shapes read inside; then the
speaker notes under ``## Notes``. ``metadata["slide_starts"]`` records where each slide starts, so a chunk's
``slide`` (and a citation's) is the slide it comes from (``ragline.anchors``); ``metadata["slides"]`` the count.

Metadata: ``author``, ``created``, ``modified``; the title is the core title, else the first slide's title, else
the file name; a sidecar overrides them. Refused, by name: encrypted, legacy ``.ppt``, truncated or corrupt.
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


def load_pptx(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One ``.pptx`` file as a Document; raises ``InputError`` saying what is wrong with it."""
    data = office_bytes(path, max_bytes, ".pptx")
    blocks = Blocks(str(path), text_cap(max_bytes))
    metadata, first_title = pptx_into(blocks, data, str(path))
    return structured_document(path, relative, blocks, metadata, first_title)


def pptx_into(blocks: Blocks, data: bytes, where: str, level: int = 1) -> tuple[dict[str, Any], str]:
    """Write a deck's slides into ``blocks`` (slide headings at ``level``); its metadata and first title back."""
    import pptx
    from pptx.exc import PackageNotFoundError

    check_office(data, where, ".pptx")
    try:
        deck = pptx.Presentation(io.BytesIO(data))
        slides = list(deck.slides)
    except (PackageNotFoundError, KeyError, ValueError) as error:
        raise InputError(where, f"not a PowerPoint deck, or a corrupt one ({type(error).__name__}: {error})") from None
    except Exception as error:  # noqa: BLE001 (lxml and zipfile raise many kinds on a damaged part)
        raise InputError(where, f"corrupt .pptx, cannot be read ({type(error).__name__}: {error})") from None
    first_title = ""
    for number, slide in enumerate(slides, start=1):
        title_shape = slide.shapes.title
        title = title_shape.text_frame.text.strip() if title_shape is not None and title_shape.has_text_frame else ""
        first_title = first_title or title
        blocks.mark("slide_starts")
        blocks.heading(level, title or f"Slide {number}")
        for shape in _ordered(slide.shapes):
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            _shape(blocks, shape)
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                blocks.heading(level + 1, "Notes")
                blocks.paragraph(notes.text)
    metadata = core_metadata(deck.core_properties)
    metadata["slides"] = len(slides)
    return metadata, first_title


def _ordered(shapes: Any) -> list[Any]:
    """Shapes top to bottom, then left to right (placeholders without a position keep their order)."""
    listed = list(shapes)
    return sorted(listed, key=lambda s: (s.top if s.top is not None else 0, s.left if s.left is not None else 0))


def _shape(blocks: Blocks, shape: Any) -> None:
    if shape.shape_type is not None and int(shape.shape_type) == 6:  # MSO_SHAPE_TYPE.GROUP
        for inner in _ordered(shape.shapes):
            _shape(blocks, inner)
        return
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
        blocks.add(markdown_tables(rows))
        return
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        paragraphs = [(p.level, "".join(run.text for run in p.runs) or p.text) for p in shape.text_frame.paragraphs]
        paragraphs = [(lvl, text) for lvl, text in paragraphs if text.strip()]
        if len(paragraphs) == 1 and paragraphs[0][0] == 0:
            blocks.paragraph(paragraphs[0][1])
            return
        for lvl, text in paragraphs:  # a slide's lines are bullets: each one an item of its own
            blocks.item(text, lvl)
