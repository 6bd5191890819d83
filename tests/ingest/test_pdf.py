from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from ragline.errors import InputError
from ragline.ingest import load_folder
from ragline.ingest.chunkers import build_chunker
from ragline.ingest.pdf import load_pdf, page_at

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from office_files import pdf_bytes, pdf_paragraph  # noqa: E402


def make_pdf(pages: list[str], title: str | None = None) -> bytes:
    """A minimal valid PDF: each page's lines in 12-point Helvetica (``benchmarks/office_files.py`` writes it).

    An empty string makes a page with no text at all (what a scanned page looks like to a text extractor).
    """
    return pdf_bytes([pdf_paragraph(72, 720, text.split("\n"), size=12) if text else [] for text in pages], title)


def encrypt(data: bytes, user: str, owner: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user, owner_password=owner, algorithm="RC4-128")  # RC4 needs no cryptography package
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


PAGES = [
    "Grid Maintenance Manual\nSubstations are inspected yearly.",
    "",  # a blank page: its number still counts
    "Step 4: Torque the M8 bolts to 25 N m.\nStep 5: Close the housing (twice).",
]


def test_pages_are_kept_and_page_numbers_follow_from_offsets(tmp_path: Path) -> None:
    path = tmp_path / "manual.pdf"
    path.write_bytes(make_pdf(PAGES, title="Maintenance Manual"))
    document = load_pdf(path, Path("manual.pdf"))
    assert document.id == "manual" and document.source == "manual.pdf"
    assert document.title == "Maintenance Manual"
    assert document.text == (
        "Grid Maintenance Manual\nSubstations are inspected yearly.\n\n\n\n"
        "Step 4: Torque the M8 bolts to 25 N m.\nStep 5: Close the housing (twice)."
    )
    starts = document.metadata["page_starts"]
    assert document.metadata["pages"] == 3 and len(starts) == 3
    assert document.text[starts[2] :].startswith("Step 4")
    assert page_at(document, document.text.index("Substations")) == 1
    assert page_at(document, document.text.index("Torque")) == 3
    chunks = build_chunker("sentences:window=1").chunk(document)
    pages = {c.text: c.metadata["page"] for c in chunks}
    assert pages["Step 4: Torque the M8 bolts to 25 N m."] == 3
    assert pages["Grid Maintenance Manual\nSubstations are inspected yearly."] == 1


def test_without_a_title_the_file_name_is_the_title(tmp_path: Path) -> None:
    path = tmp_path / "notes.pdf"
    path.write_bytes(make_pdf(["Some text."]))
    assert load_pdf(path, Path("notes.pdf")).title == "notes"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (make_pdf(PAGES)[:700], "truncated"),
        (make_pdf(PAGES).replace(b"/Type /Pages /Kids", b"/Type /Pages /Kidz"), "corrupt"),
        (make_pdf(PAGES).replace(b"xref\n0", b"xref\nX", 1).replace(b"obj\n", b"obk\n"), "corrupt"),
        (encrypt(make_pdf(PAGES), "secret", "owner"), r"encrypted .*\(decrypt it first\)"),
        (make_pdf(["", ""]), r"no extractable text \(scanned image\? run OCR first\)"),
        (b"<html>not a pdf</html>", "not a PDF"),
    ],
)
def test_unreadable_pdfs_are_reported_by_name(tmp_path: Path, data: bytes, reason: str) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(data)
    with pytest.raises(InputError, match=reason) as caught:
        load_pdf(path, Path("bad.pdf"))
    assert caught.value.source == str(path)


def test_a_pdf_locked_only_against_editing_loads(tmp_path: Path) -> None:
    path = tmp_path / "protected.pdf"
    path.write_bytes(encrypt(make_pdf(PAGES), "", "owner"))
    assert "Torque the M8 bolts" in load_pdf(path, Path("protected.pdf")).text


def test_load_folder_loads_pdfs_and_skips_bad_ones(tmp_path: Path) -> None:
    (tmp_path / "good.pdf").write_bytes(make_pdf(PAGES))
    (tmp_path / "scan.pdf").write_bytes(make_pdf([""]))
    (tmp_path / "cut.pdf").write_bytes(make_pdf(PAGES)[:-40])
    report = load_folder(tmp_path)
    assert [d.id for d in report.documents] == ["good"]
    assert sorted(Path(e.source).name for e in report.errors) == ["cut.pdf", "scan.pdf"]
