"""Generated office documents for the office benchmarks and tests: Word, PowerPoint, Excel, CSV, e-mail and PDF.

Every file is written here with the libraries the loaders read (python-docx, python-pptx, openpyxl, the standard
``email`` package) or, for PDF, by :func:`pdf_bytes`, a small hand-written PDF writer (Helvetica text at given
positions, ruled rectangles for table grids, grey image blocks standing for scanned pages). Names and figures are
drawn from a seeded generator out of invented syllables, so no fact is one a model may know.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

# --- PDF -------------------------------------------------------------------------------------------------

# A page item: ("text", x, y, size, string) | ("rect", x, y, w, h) | ("image", x, y, w, h); y from the bottom.
PdfItem = tuple


def pdf_bytes(pages: Sequence[Sequence[PdfItem]], title: str | None = None) -> bytes:
    """A valid PDF (correct xref table) of ``pages``, each a list of items drawn in Helvetica on US Letter."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b"",
                            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
                            b"<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray "
                            b"/BitsPerComponent 8 /Length 4 >>\nstream\n\x80\x40\x40\x80\nendstream"]  # fmt: skip
    kids = []
    for items in pages:
        ops: list[str] = []
        for item in items:
            if item[0] == "text":
                _, x, y, size, text = item
                ops.append(f"BT /F1 {size} Tf {x} {y} Td ({escape(text)}) Tj ET")
            elif item[0] == "rect":
                _, x, y, w, h = item
                ops.append(f"0.5 w {x} {y} {w} {h} re S")
            elif item[0] == "image":
                _, x, y, w, h = item
                ops.append(f"q {w} 0 0 {h} {x} {y} cm /Im1 Do Q")
        stream = "\n".join(ops).encode("cp1252", "replace")
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> /XObject << /Im1 4 0 R >> >> >>" % len(objects)
        )
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    info = b""
    if title is not None:
        objects.append(b"<< /Title (%s) >>" % escape(title).encode("cp1252"))
        info = b" /Info %d 0 R" % len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info, xref)
    return bytes(out)


def pdf_table(x: float, top: float, widths: Sequence[float], rows: Sequence[Sequence[str]], size: int = 10) -> list:
    """Items drawing ``rows`` as a ruled grid whose top edge is at ``top``; the first row is the header."""
    height = size * 2
    items: list = []
    for r, row in enumerate(rows):
        y = top - (r + 1) * height
        left = x
        for width, cell in zip(widths, row):
            items.append(("rect", left, y, width, height))
            items.append(("text", left + 4, y + size * 0.6, size, cell))
            left += width
    return items


def pdf_paragraph(x: float, top: float, lines: Sequence[str], size: int = 11) -> list:
    """Items for consecutive lines of text, the first one's baseline at ``top``."""
    return [("text", x, top - i * size * 1.3, size, line) for i, line in enumerate(lines)]


# --- names and figures -----------------------------------------------------------------------------------

_ONSETS = "b br c d dr f g gr k l m n p pr r s st t tr v z".split()
_VOWELS = "a e i o u ae ia ou".split()
_CODAS = "n r l s th nd rk m x".split()


def invented(rng: random.Random, syllables: int = 2) -> str:
    """An invented proper name ("Bralvor")."""
    word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables)) + rng.choice(_CODAS)
    return word.capitalize()


def unique(rng: random.Random, count: int, make) -> list[str]:  # type: ignore[no-untyped-def]
    out: list[str] = []
    while len(out) < count:
        value = make()
        if value not in out:
            out.append(value)
    return out


# --- Office files ----------------------------------------------------------------------------------------


def write_docx(path: Path, title: str, blocks: Sequence[tuple]) -> None:
    """A Word file: ("heading", level, text) | ("para", text) | ("bullet", text) | ("table", rows)."""
    import docx

    document = docx.Document()
    document.core_properties.title = title
    for block in blocks:
        if block[0] == "heading":
            document.add_heading(block[2], block[1])
        elif block[0] == "para":
            document.add_paragraph(block[1])
        elif block[0] == "bullet":
            document.add_paragraph(block[1], style="List Bullet")
        elif block[0] == "table":
            rows = block[1]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for i, row in enumerate(rows):
                for j, value in enumerate(row):
                    table.cell(i, j).text = str(value)
    document.save(str(path))


def write_pptx(path: Path, slides: Sequence[tuple]) -> None:
    """A deck: ("bullets", title, [lines], notes) | ("table", title, rows, notes)."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    for kind, title, body, notes in slides:
        if kind == "bullets":
            slide = deck.slides.add_slide(deck.slide_layouts[1])
            slide.shapes.title.text = title
            frame = slide.placeholders[1].text_frame
            frame.text = body[0]
            for line in body[1:]:
                frame.add_paragraph().text = line
        else:
            slide = deck.slides.add_slide(deck.slide_layouts[5])
            slide.shapes.title.text = title
            shape = slide.shapes.add_table(len(body), len(body[0]), Inches(0.5), Inches(1.8), Inches(9), Inches(4))
            for i, row in enumerate(body):
                for j, value in enumerate(row):
                    shape.table.cell(i, j).text = str(value)
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    deck.save(str(path))


def write_xlsx(path: Path, sheets: Sequence[tuple[str, Sequence[Sequence[object]]]]) -> None:
    """A workbook of (sheet name, rows) in order."""
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets:
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    book.save(str(path))


def write_eml(
    path: Path, sender: str, to: str, subject: str, when: datetime, body: str,
    attachments: Sequence[tuple[str, bytes, str]] = (),
) -> None:  # fmt: skip
    """An e-mail message with (file name, bytes, MIME type) attachments."""
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, to, subject
    message["Date"] = format_datetime(when)
    message.set_content(body)
    for name, data, mime in attachments:
        main, sub = mime.split("/")
        message.add_attachment(data, maintype=main, subtype=sub, filename=name)
    path.write_bytes(bytes(message))


def utc(year: int, month: int, day: int, hour: int = 9) -> datetime:
    return datetime(year, month, day, hour, 0, tzinfo=UTC)
