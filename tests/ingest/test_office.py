"""Word, PowerPoint, Excel, CSV, e-mail and PDF-layout loaders: the text they write, their anchors, bad files.

The files are built here with the libraries the loaders read (``benchmarks/office_files.py``), from invented text.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from ragline.errors import InputError
from ragline.ingest import load_folder
from ragline.ingest.chunkers import build_chunker
from ragline.ingest.loaders import load_file
from ragline.ingest.tables import keep_tables_whole, markdown_tables

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from office_files import (  # noqa: E402
    pdf_bytes,
    pdf_paragraph,
    pdf_table,
    utc,
    write_docx,
    write_eml,
    write_pptx,
    write_xlsx,
)

RATES = [["City", "Per diem", "Lodging cap"], ["Zurich", "$95", "$240"], ["Lyon", "$70", "$160"]]


def docx_file(path: Path) -> Path:
    write_docx(path, "Travel policy", [
        ("heading", 1, "Travel policy"),
        ("para", "Staff travel is reimbursed as follows."),
        ("heading", 2, "Per diem rates"),
        ("table", RATES),
        ("bullet", "Keep every receipt."),
    ])  # fmt: skip
    return path


def test_a_word_file_keeps_its_headings_lists_and_table_with_its_header(tmp_path: Path) -> None:
    """Planted fault checked: markdown_tables dropping the header row fails the table line."""
    document = load_file(docx_file(tmp_path / "policy.docx"), Path("policy.docx"))
    assert document.id == "policy" and document.title == "Travel policy"
    assert document.text == (
        "# Travel policy\n\nStaff travel is reimbursed as follows.\n\n## Per diem rates\n\n"
        "| City | Per diem | Lodging cap |\n| --- | --- | --- |\n| Zurich | $95 | $240 |\n| Lyon | $70 | $160 |\n\n"
        "- Keep every receipt."
    )
    chunk = next(c for c in build_chunker("structure").chunk(document) if "Zurich" in c.text)
    assert chunk.metadata["section"] == ["Travel policy", "Per diem rates"]


def test_a_deck_is_one_section_per_slide_and_each_chunk_names_its_slide(tmp_path: Path) -> None:
    """Planted fault checked: anchors_at without slides leaves the chunks without ``slide``."""
    write_pptx(tmp_path / "review.pptx", [
        ("bullets", "Quarterly review", ["Revenue grew", "Churn fell to 3%"], ""),
        ("table", "Headcount", [["Team", "Engineers"], ["Platform", "14"], ["Search", "9"]], "Hiring resumes."),
    ])  # fmt: skip
    document = load_file(tmp_path / "review.pptx", Path("review.pptx"))
    assert document.metadata["slides"] == 2
    assert "# Headcount\n\n| Team | Engineers |\n| --- | --- |\n| Platform | 14 |" in document.text
    assert "## Notes\n\nHiring resumes." in document.text
    chunks = build_chunker("fixed:size=200").chunk(document)  # one window would hold both slides
    assert [(c.metadata["slide"], c.text.split("\n")[0]) for c in chunks] == [
        (1, "# Quarterly review"), (2, "# Headcount")
    ]  # fmt: skip
    assert "slide_starts" not in chunks[0].metadata


def test_a_workbook_is_one_table_per_sheet_with_its_header_found_and_sheet_named(tmp_path: Path) -> None:
    """Planted faults checked: header_row returning 0 (the title row becomes the header); split_at_anchors not
    applied (the Contacts chunk starts on sheet Rates and is cited as Rates)."""
    write_xlsx(tmp_path / "book.xlsx", [
        ("Rates", [["Rate card 2026"], ["Service", "Hourly rate"], ["Audit", 180], ["Training", 95.5]]),
        ("Contacts", [["Name", "Role"], ["Mina Osei", "Auditor"]]),
    ])  # fmt: skip
    document = load_file(tmp_path / "book.xlsx", Path("book.xlsx"))
    assert document.text.startswith(
        "# Rates\n\nRate card 2026\n| Service | Hourly rate |\n| --- | --- |\n| Audit | 180 |\n| Training | 95.5 |"
    )
    assert document.metadata["sheet_names"] == ["Rates", "Contacts"]
    chunks = build_chunker("fixed:size=100").chunk(document)
    contacts = next(c for c in chunks if "Mina Osei" in c.text)
    assert contacts.metadata["sheet"] == "Contacts" and "Training" not in contacts.text


def test_every_chunk_holding_a_row_of_a_long_table_holds_its_header(tmp_path: Path) -> None:
    """A sheet of 300 rows, chunked in 40-word windows. Planted faults checked: no header repeated per row group
    (markdown_tables writing one block), and keep_tables_whole not applied (windows cut row groups)."""
    rows = [["Part", "Supplier", "Price"], *([f"P{i}", f"Vendor {i % 7}", f"{i}.50"] for i in range(300))]
    write_xlsx(tmp_path / "parts.xlsx", [("Parts", rows)])
    document = load_file(tmp_path / "parts.xlsx", Path("parts.xlsx"))
    chunks = build_chunker("fixed:size=40,overlap=10").chunk(document)
    with_rows = [c for c in chunks if "| P" in c.text]
    assert len(with_rows) > 10
    for chunk in with_rows:
        assert "| Part | Supplier | Price |" in chunk.text, chunk.text
        assert all(line.count("|") == 4 for line in chunk.text.splitlines() if line.startswith("|")), "a cut row"
    assert all(f"| P{i} |" in document.text for i in range(300))


def test_keep_tables_whole_moves_boundaries_out_of_a_table_block() -> None:
    text = "Intro words here.\n\n" + markdown_tables(RATES[1:], header=RATES[0]) + "\n\nAfter."
    inside = text.index("Zurich")
    assert keep_tables_whole(text, [(0, inside), (inside, len(text))]) == [
        (0, text.index("\n\nAfter")), (text.index("| City"), len(text))
    ]  # fmt: skip


def test_a_csv_file_is_one_table_with_its_delimiter_sniffed(tmp_path: Path) -> None:
    (tmp_path / "scores.csv").write_text("name;score\nalpha;3\nbeta;5\n")
    document = load_file(tmp_path / "scores.csv", Path("scores.csv"))
    assert document.text == "| name | score |\n| --- | --- |\n| alpha | 3 |\n| beta | 5 |"


def test_an_email_has_its_header_table_and_metadata_and_reads_its_attachment(tmp_path: Path) -> None:
    """Planted fault checked: attachments not recursed (the attached Word table is missing)."""
    attached = docx_file(tmp_path / "policy.docx").read_bytes()
    write_eml(tmp_path / "mail.eml", "Jon Ark <jon@example.org>", "staff@example.org, hr@example.org",
              "Travel rates", utc(2026, 3, 3), "Hello,\n\nThe new rates are attached.\n",
              [("policy.docx", attached, "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
               ("logo.png", b"\x89PNG", "image/png")])  # fmt: skip
    document = load_file(tmp_path / "mail.eml", Path("mail.eml"))
    assert document.title == "Travel rates"
    assert document.metadata["from"] == "Jon Ark <jon@example.org>"
    assert document.metadata["to"] == ["staff@example.org", "hr@example.org"]
    assert document.metadata["date"] == "2026-03-03T09:00:00+00:00"
    assert document.text.startswith(
        "# Travel rates\n\n| Field | Email message |\n| --- | --- |\n| From (sender) | Jon Ark <jon@example.org> |\n"
        "| Sent (date) | Tue, 03 Mar 2026 09:00:00 +0000 |\n| To (recipients) | staff@example.org, hr@example.org |\n"
    )
    assert "## Attachment: policy.docx\n\n### Travel policy" in document.text
    assert "| Zurich | $95 | $240 |" in document.text
    assert "## Attachment: logo.png\n\n(not read: attachment of type '.png' is not read)" in document.text


def encrypted(data: bytes) -> bytes:
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(data)).encrypt("secret", out)
    return out.getvalue()


def test_bad_office_files_are_reported_by_name_and_the_rest_load(tmp_path: Path) -> None:
    """A truncated .docx, an encrypted .xlsx and a .msg that is not OLE are skipped, each named with why.
    Planted fault checked: ``check_office`` without its OLE check (the .xlsx is then "not a .xlsx file")."""
    good = docx_file(tmp_path / "good.docx")
    (tmp_path / "cut.docx").write_bytes(good.read_bytes()[:-300])
    write_xlsx(tmp_path / "plain.xlsx", [("Sheet", [["a", "b"], ["1", "2"]])])
    (tmp_path / "locked.xlsx").write_bytes(encrypted((tmp_path / "plain.xlsx").read_bytes()))
    (tmp_path / "plain.xlsx").unlink()
    (tmp_path / "note.msg").write_text("From: someone\n\nnot an Outlook file")
    report = load_folder(tmp_path)
    assert [d.id for d in report.documents] == ["good"]
    reasons = {Path(e.source).name: e.reason for e in report.errors}
    assert set(reasons) == {"cut.docx", "locked.xlsx", "note.msg"}
    assert "truncated or corrupt .docx" in reasons["cut.docx"]
    assert "encrypted (password-protected)" in reasons["locked.xlsx"]
    assert "not an Outlook .msg file (not an OLE compound file" in reasons["note.msg"]
    assert report.keep.ids == {"cut", "locked", "note"}  # their earlier indexed versions stay


def report_pdf() -> bytes:
    pages = []
    for number in range(1, 5):
        items: list = [("text", 72, 760, 9, "Acme annual report"), ("text", 280, 40, 9, f"Page {number} of 5")]
        items += [("text", 72, 700, 18, f"Part {number}")]
        items += pdf_paragraph(72, 670, ["The board approved the main-", "tenance budget in March."])
        if number == 2:
            items += pdf_table(72, 600, [150, 150], [["Region", "Revenue"], ["North", "$4.1 million"],
                                                      ["South", "$2.2 million"]])  # fmt: skip
        pages.append(items)
    pages.append([("image", 0, 0, 612, 792)])  # a scanned page: an image, no text
    return pdf_bytes(pages)


def test_pdf_layout_tables_headings_furniture_hyphens_and_scanned_pages(tmp_path: Path) -> None:
    """Planted faults checked: furniture removal off (the running header stays), the hyphen join off,
    ``read_layout`` not reporting image-only pages (no ``ocr_pages``, no warning)."""
    (tmp_path / "report.pdf").write_bytes(report_pdf())
    report = load_folder(tmp_path)
    (document,) = report.documents
    assert "Acme annual report" not in document.text and "Page 2 of 5" not in document.text
    assert "maintenance budget" in document.text
    assert "| Region | Revenue |\n| --- | --- |\n| North | $4.1 million |" in document.text
    assert document.text.startswith("# Part 1\n\n")
    assert document.metadata["ocr_pages"] == [5]
    (warning,) = report.warnings
    assert warning.source == str(tmp_path / "report.pdf") and "page(s) 5 are scanned images" in warning.reason
    table = next(c for c in build_chunker("fixed:size=100,overlap=30").chunk(document) if "North" in c.text)
    assert table.metadata["page"] == 2


def test_without_layout_a_pdf_table_is_a_run_of_cells(tmp_path: Path) -> None:
    from ragline.ingest.pdf import load_pdf

    (tmp_path / "report.pdf").write_bytes(report_pdf())
    flat = load_pdf(tmp_path / "report.pdf", Path("report.pdf"), layout=False)
    assert "| Region |" not in flat.text and "Acme annual report" in flat.text


def test_an_unreadable_office_file_raises_input_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "empty.pptx"
    path.write_bytes(b"")
    with pytest.raises(InputError, match="not a .pptx file") as caught:
        load_file(path, Path("empty.pptx"))
    assert caught.value.source == str(path)


def test_a_ruled_table_whose_row_names_sit_outside_its_rules_keeps_them(tmp_path: Path) -> None:
    """As LaTeX and R print a table (``benchmarks/pdf_tables/data.pdf``): the rules frame the figures only, the row
    names stand left of the frame. Planted fault checked: ``_beyond_rules`` returning None (the table then has
    no row names, and they follow it as loose lines)."""
    rows = [["Revenue", "Growth"], ["$4.1 million", "2.5%"], ["$2.2 million", "-1.0%"], ["$3.0 million", "0.4%"]]
    items = pdf_table(200, 600, [120, 90], rows)
    for r, name in enumerate(["North", "South", "Coast"], start=1):
        items.append(("text", 72, 600 - (r + 1) * 20 + 6, 10, name))
    items += pdf_paragraph(72, 700, ["Revenue by region, in the year to March."])
    (tmp_path / "regions.pdf").write_bytes(pdf_bytes([items]))
    text = load_file(tmp_path / "regions.pdf", Path("regions.pdf")).text
    assert "| South | $2.2 million | -1.0% |" in text
    assert "\nSouth\n" not in text and text.count("South") == 1
    (tmp_path / "framed.pdf").write_bytes(report_pdf())  # a table wholly inside its rules is read as before
    framed = load_file(tmp_path / "framed.pdf", Path("framed.pdf")).text
    assert "| North | $4.1 million |\n| South | $2.2 million |" in framed
