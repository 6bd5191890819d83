"""PDF files as Documents: the text of each page (pypdf), with page numbers kept for citations.

The pages' texts are joined by blank lines; ``metadata["page_starts"]`` lists the character offset
where each page starts (page 1 at index 0), so the page of any chunk follows from its ``start``
(:func:`page_at`), with no page markers in the text to pollute chunks and embeddings. Empty pages
keep their entry (two equal offsets), so page numbers stay those printed by a viewer's page counter.
``metadata["pages"]`` is the page count. The title is the PDF's /Title when set, else the file name.

What is refused, each as an ``InputError`` naming the file and saying what to do:

* not a PDF (no ``%PDF-`` header), or truncated (no ``%%EOF`` near the end: an interrupted download);
* corrupt: pypdf cannot parse the file or one of its pages, or finds no pages;
* encrypted: a password is needed to read it. A PDF encrypted only against editing (empty user password,
  common for "protected" PDFs) opens without one and loads;
* no extractable text: every page is an image (a scan) or blank; OCR is out of scope.

Layout (``layout=True``, the default when pdfplumber is installed: ``pip install 'ragline[docs]'``): pypdf
checks the file as above, then pdfplumber reads each page from its characters' positions:

* **tables** found by their ruling lines become Markdown tables with their header row (``tables.py``: split
  into row groups with the header repeated), placed where they sit on the page; their cells are not read again
  as text (pypdf's text has a table as a run of numbers without its header); a ruled table with text beside its
  frame on its rows (row names left of the rules, as LaTeX and R print tables) is read over the page's width by
  text alignment, kept when that gives the same rows and more columns (``pdf_layout._beyond_rules``); a table
  with no rules at all is not found (it stays text lines);
* **text lines** outside tables, top to bottom; a vertical gap wider than a line starts a new paragraph;
  lines set in a font clearly larger than the document's body text (at least 15% larger, at most 12 words)
  become ``#`` headings, the largest size level 1 (up to 3 levels), so chunks get breadcrumbs;
* **page headers and footers**: lines in the top or bottom 8% of a page repeated on at least half the pages
  (and on 3; digits count as one, so "Page 3 of 9" repeats) are removed;
* a word **hyphenated** at a line end ("main-" / "tenance") is joined;
* a page with images but no text is a **scanned page**: its number is listed in ``metadata["ocr_pages"]``,
  and the load report names the file and the pages as needing OCR (no OCR model ships here); a PDF all of
  whose pages are scanned is refused as above.

Why pdfplumber and not pypdfium2 (pdfplumber installs it, for rendering only): pypdfium2 extracts
text faster but gives no table finder and no per-character font sizes in its text API; pdfplumber gives
characters with positions and sizes and finds tables by their lines, which is what headings and tables need.
Pages are read one at a time and their caches dropped, so memory grows with the text, not the page count.
``layout=False`` (or without pdfplumber) is pypdf's text: reading order follows the content stream, columns
may interleave, a hyphenated word stays split, and a PDF is one section.
"""

from __future__ import annotations

import io
import logging
import re
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragline.errors import InputError
from ragline.ingest.files import DEFAULT_MAX_BYTES, document_id, read_capped, with_sidecar
from ragline.types import Document

PAGE_SEPARATOR = "\n\n"


def load_pdf(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES, layout: bool | None = None) -> Document:
    """One PDF file as a Document; raises ``InputError`` saying what is wrong with it.

    ``layout``: read tables, headings and page furniture with pdfplumber (None: when it is installed)."""
    data = read_capped(path, max_bytes)
    where = str(path)
    pages, pdf_title, ocr = _pages(data, where, layout)
    text, page_starts = "", []
    for page in pages:
        text += PAGE_SEPARATOR if text else ""
        page_starts.append(len(text))
        text += page
    metadata: dict[str, Any] = {"pages": len(pages), "page_starts": page_starts}
    if ocr:
        metadata["ocr_pages"] = ocr
    with_sidecar(metadata, path, "PDF")
    title = str(metadata.pop("title", "") or pdf_title or path.stem)
    return Document(document_id(relative), text, title, metadata, source=relative.as_posix())


def pdf_text(data: bytes, where: str) -> str:
    """The text of a PDF given as bytes (an e-mail's attachment), pages separated by blank lines."""
    return PAGE_SEPARATOR.join(_pages(data, where, None)[0])


def _pages(data: bytes, where: str, layout: bool | None) -> tuple[list[str], str, list[int]]:
    """Each page's text, the /Title and the scanned pages' numbers; or ``InputError``."""
    if b"%PDF-" not in data[:1024]:
        raise InputError(where, "not a PDF (no %PDF- header)")
    if b"%%EOF" not in data[-1024:]:  # viewers accept the marker anywhere in the last 1 KiB
        raise InputError(where, "truncated PDF (no %%EOF marker at the end): download or export it again")
    pages, pdf_title = _read(data, where, text=not _use_layout(layout))
    if not pages:
        raise InputError(where, "corrupt PDF: it has no pages (a broken page tree?)")
    ocr: list[int] = []
    if _use_layout(layout):
        from ragline.ingest.pdf_layout import read_layout

        pages, ocr = read_layout(data, where)
    if not any(text.strip() for text in pages):
        raise InputError(where, "no extractable text (scanned image? run OCR first)")
    return pages, pdf_title, ocr


def _use_layout(layout: bool | None) -> bool:
    if layout is not None:
        return layout
    import importlib.util

    return importlib.util.find_spec("pdfplumber") is not None


def page_at(document: Document, offset: int) -> int | None:
    """The 1-based page holding character ``offset`` of a PDF's text; None for documents without pages."""
    starts = document.metadata.get("page_starts")
    if not isinstance(starts, list) or not starts:
        return None
    return max(bisect_right(starts, offset), 1)


def _read(data: bytes, where: str, text: bool = True) -> tuple[list[str], str]:
    """The text of each page (with ``text``; else "" for each: the file checked only) and the /Title."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    with _quiet("pypdf"):
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and not _try_empty_password(reader):
                raise InputError(where, "encrypted PDF: a password is needed to read it (decrypt it first)")
            pages = list(reader.pages)
        except InputError:
            raise
        except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as error:
            raise InputError(where, f"corrupt PDF, cannot be read ({type(error).__name__}: {error})") from None
        if not text:
            return [""] * len(pages), _title(reader)
        texts = []
        for number, page in enumerate(pages, start=1):
            try:
                texts.append(_clean(page.extract_text() or ""))
            except Exception as error:  # noqa: BLE001 (pypdf raises many kinds on damaged content streams)
                raise InputError(where, f"corrupt PDF: page {number} cannot be read ({error})") from None
        return texts, _title(reader)


@contextmanager
def _quiet(logger_name: str) -> Iterator[None]:
    """pypdf logs each syntax slip it recovers from; the one report we want is our InputError."""
    logger = logging.getLogger(logger_name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _try_empty_password(reader: Any) -> bool:
    try:
        return bool(reader.decrypt(""))  # PasswordType.NOT_DECRYPTED is 0
    except Exception:  # noqa: BLE001 (e.g. AES without the cryptography package: treat it as locked)
        return False


def _clean(text: str) -> str:
    """Trailing spaces off each line, runs of blank lines down to one, no blank lines at either end."""
    text = re.sub(r"[ \t]+\n", "\n", text.replace("\r\n", "\n").replace("\r", "\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def _title(reader: Any) -> str:
    try:
        info = reader.metadata
        return str(info.title or "").strip() if info else ""
    except Exception:  # noqa: BLE001 (a title is optional: a broken info dictionary must not fail the load)
        return ""
