"""The real-PDF table questions (``benchmarks/pdf_tables``): the files are the ones SOURCE.md names, and every gold
answer is in its PDF's text on the page the question names, so a score of 0 is the loaders' and reader's, not the
question set's."""

from __future__ import annotations

import hashlib
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import office_pdf_tables  # noqa: E402


def test_every_gold_answer_is_in_its_pdf_on_its_page() -> None:
    """Planted fault checked: a gold answer mistyped ("102.1" -> "102.7") fails here."""
    import pypdf

    items = office_pdf_tables.questions()
    assert len(items) == 12 and {q["doc"] for q in items} == {"12s0324", "data"}
    for name, digest in office_pdf_tables.SHA256.items():
        assert hashlib.sha256((office_pdf_tables.DATA / name).read_bytes()).hexdigest() == digest
    for item in items:
        reader = pypdf.PdfReader(io.BytesIO((office_pdf_tables.DATA / f"{item['doc']}.pdf").read_bytes()))
        page = " ".join(reader.pages[item["anchor"]["page"] - 1].extract_text().split()).replace(" .", ".")
        assert any(answer in page for answer in item["answers"]), item["id"]
