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
    """Planted fault checked: with .docx/.pptx/.xlsx/.eml left out of DOCUMENT_SUFFIXES, 4 are unsupported."""
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
