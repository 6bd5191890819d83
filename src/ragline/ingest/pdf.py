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

Text extraction is pypdf's: reading order follows the content stream, columns may interleave, and a
word hyphenated at a line end stays split. Headings are not recovered: a PDF is one section (unless
its text happens to hold Markdown heading lines).
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


def load_pdf(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One PDF file as a Document; raises ``InputError`` saying what is wrong with it."""
    data = read_capped(path, max_bytes)
    where = str(path)
    if b"%PDF-" not in data[:1024]:
        raise InputError(where, "not a PDF (no %PDF- header)")
    if b"%%EOF" not in data[-1024:]:  # viewers accept the marker anywhere in the last 1 KiB
        raise InputError(where, "truncated PDF (no %%EOF marker at the end): download or export it again")
    pages, pdf_title = _read(data, where)
    if not pages:
        raise InputError(where, "corrupt PDF: it has no pages (a broken page tree?)")
    if not any(text.strip() for text in pages):
        raise InputError(where, "no extractable text (scanned image? run OCR first)")
    text, page_starts = "", []
    for page in pages:
        text += PAGE_SEPARATOR if text else ""
        page_starts.append(len(text))
        text += page
    metadata: dict[str, Any] = {"pages": len(pages), "page_starts": page_starts}
    with_sidecar(metadata, path, "PDF")
    title = str(metadata.pop("title", "") or pdf_title or path.stem)
    return Document(document_id(relative), text, title, metadata, source=relative.as_posix())


def page_at(document: Document, offset: int) -> int | None:
    """The 1-based page holding character ``offset`` of a PDF's text; None for documents without pages."""
    starts = document.metadata.get("page_starts")
    if not isinstance(starts, list) or not starts:
        return None
    return max(bisect_right(starts, offset), 1)


def _read(data: bytes, where: str) -> tuple[list[str], str]:
    """The text of each page and the /Title, or ``InputError``."""
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
