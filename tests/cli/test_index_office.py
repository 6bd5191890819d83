"""`ragline index` on a folder of Office files and mail: all added, none unsupported; a search for a table cell's row
and column names shows the cell's value; `ragline ask` answers from a table row and names the sheet it cites."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ragline.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from office_files import utc, write_docx, write_eml, write_pptx, write_xlsx  # noqa: E402


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--output", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def office_folder(docs: Path) -> None:
    docs.mkdir()
    write_docx(docs / "travel.docx", "Travel policy", [
        ("heading", 1, "Travel policy"),
        ("para", "Meals and lodging are reimbursed at these rates."),
        ("table", [["City", "Per diem", "Lodging cap"], ["Zurich", "$95", "$240"], ["Lyon", "$70", "$160"]]),
    ])  # fmt: skip
    write_pptx(docs / "review.pptx", [("bullets", "Quarterly review", ["Churn fell to 3%", "Revenue grew"], "")])
    write_xlsx(docs / "operations.xlsx", [
        ("Services", [["Service", "Hourly rate"], ["Audit", 180], ["Training", 95]]),
        ("Offices", [["Office", "Desks", "Manager"], ["Harbour", 120, "Mina Osei"], ["Ridge", 45, "Ada Brun"]]),
    ])  # fmt: skip
    write_eml(docs / "move.eml", "Jon Ark <jon@example.org>", "staff@example.org", "Depot move", utc(2026, 3, 3),
              "The depot moves to Hall 7 on Friday.\n")  # fmt: skip


def test_office_files_are_indexed_searched_by_cell_and_answered_with_their_sheet(capsys, tmp_path: Path) -> None:
    """Planted faults checked: with .docx/.pptx/.xlsx/.eml left out of DOCUMENT_SUFFIXES, 4 are unsupported; with
    the Word loader skipping tables, the search for "Zurich lodging cap" shows no "$240"."""
    office_folder(tmp_path / "docs")
    index = str(tmp_path / "idx")
    indexed = run_json(capsys, "index", str(tmp_path / "docs"), "--index", index, "--embedder", "none")
    assert (indexed["added"] > 0, indexed["skipped"], indexed["unsupported"]) == (True, 0, {})
    found = run_json(capsys, "search", "Zurich lodging cap", "--index", index, "--retriever", "bm25", "-k", "3")
    assert found["hits"][0]["doc_id"] == "travel" and "$240" in found["hits"][0]["snippet"]
    asked = run_json(capsys, "ask", "How many desks does the Harbour office have?", "--index", index,
                     "--retriever", "bm25", "--reader", "extractive")  # fmt: skip
    assert asked["answer"] == "120" and not asked["abstained"]
    (citation,) = asked["citations"]
    assert (citation["doc_id"], citation["sheet"]) == ("operations", "Offices")
    cited = next(s for s in asked["sources"] if s["n"] == citation["n"])
    assert cited["sheet"] == "Offices" and "page" not in cited
    mail = run_json(capsys, "search", "depot Hall", "--index", index, "--retriever", "bm25")
    assert mail["hits"][0]["doc_id"] == "move" and "slide" not in mail["hits"][0]
    deck = run_json(capsys, "search", "churn", "--index", index, "--retriever", "bm25")
    assert (deck["hits"][0]["doc_id"], deck["hits"][0]["slide"]) == ("review", 1)


def test_index_reports_bad_office_files_and_a_scanned_pdf_page_by_name_and_indexes_the_rest(
    capsys, tmp_path: Path
) -> None:
    """A truncated .docx, an encrypted .xlsx and a .msg that is not OLE are skipped and named on stderr with why;
    a PDF with a scanned page is indexed with a warning that names the page for OCR; the good files are indexed.
    Planted faults checked: ``check_office`` without its OLE check (the encrypted .xlsx is then "not a .xlsx file",
    not "encrypted"); ``read_layout`` not reporting image-only pages (no warning)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ingest"))
    from test_office import encrypted, report_pdf

    office_folder(tmp_path / "docs")
    docs = tmp_path / "docs"
    (docs / "cut.docx").write_bytes((docs / "travel.docx").read_bytes()[:-300])
    (docs / "locked.xlsx").write_bytes(encrypted((docs / "operations.xlsx").read_bytes()))
    (docs / "note.msg").write_text("From: someone\n\nnot an Outlook file")
    (docs / "report.pdf").write_bytes(report_pdf())  # page 5 is an image only
    assert main(["index", str(docs), "--index", str(tmp_path / "idx"), "--embedder", "none", "--output", "json"]) == 0
    captured = capsys.readouterr()
    indexed, stderr = json.loads(captured.out), captured.err
    assert (indexed["skipped"], indexed["unsupported"]) == (3, {})
    for name, why in [("cut.docx", "truncated or corrupt .docx"), ("locked.xlsx", "encrypted (password-protected)"),
                      ("note.msg", "not an Outlook .msg file")]:  # fmt: skip
        assert any(name in line and why in line for line in stderr.splitlines()), (name, stderr)
    (warning,) = indexed["warnings"]
    assert "report.pdf" in warning and "page(s) 5 are scanned images" in warning
    found = run_json(capsys, "search", "North revenue", "--index", str(tmp_path / "idx"), "--retriever", "bm25")
    assert found["hits"][0]["doc_id"] == "report" and "$4.1 million" in found["hits"][0]["snippet"]
    listed = run_json(capsys, "search", "depot Hall", "--index", str(tmp_path / "idx"), "--retriever", "bm25")
    assert listed["hits"][0]["doc_id"] == "move"
