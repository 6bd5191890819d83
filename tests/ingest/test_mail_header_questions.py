"""Questions about a mail's header (who sent it, when) are answered from the header table, with a citation.

The header fields are a table (``mail._head``): a row is read, and its support checked, under its column's and row's
names, so "sender" and "sent" in the row and "Email message" in the header carry the question. The phrasings here
are not those of ``benchmarks/office_docs.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from office_files import utc, write_eml  # noqa: E402

CHUNKER = "fixed:size=100,overlap=30"  # the default pipeline's


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory):
    from ragline.answer.pipeline import RAGPipeline
    from ragline.config import load_config
    from ragline.index import Index
    from ragline.index.settings import IndexSettings
    from ragline.ingest import load_folder
    from ragline.ingest.pipeline import IngestConfig, chunk_documents

    root = tmp_path_factory.mktemp("mail")
    docs = root / "docs"
    docs.mkdir()
    write_eml(docs / "boiler.eml", "Mina Osei <mina@example.org>", "Ada Brun <ada@example.org>",
              "Boiler repair in the east wing", utc(2026, 4, 14),
              "Hello Ada,\n\nThe boiler in the east wing is repaired; heating is back on.\n\nMina\n")  # fmt: skip
    write_eml(docs / "parking.eml", "Jon Ark <jon@example.org>", "staff@example.org", "Parking closed on Monday",
              utc(2026, 5, 2), "The car park is closed on Monday for resurfacing.\n")  # fmt: skip
    units, _ = chunk_documents(load_folder(docs).documents, IngestConfig(CHUNKER, "none"))
    index = Index.create(root / "index", IndexSettings(embedder=None, chunker=CHUNKER))
    index.sync(units)
    index.commit()
    config = load_config("default").with_overrides(retrieve={"retriever": "bm25"}, read={"reader": "extractive"})
    yield RAGPipeline.from_config(config, index)
    index.close()


@pytest.mark.parametrize(
    ("question", "answer", "doc"),
    [
        ("Who sent the email about the boiler repair?", "Mina Osei", "boiler"),
        ("Who is the sender of the email about parking?", "Jon Ark", "parking"),
        ("When was the email about the parking sent?", "02 May 2026", "parking"),
        ("What date was the boiler repair email sent?", "14 Apr 2026", "boiler"),
    ],
)
def test_who_sent_a_mail_and_when_are_answered_from_its_header_table(pipeline, question, answer, doc) -> None:
    """Planted faults checked, each failing all four: the header as "From: ..."/"Sent: ..." lines (the rendering
    before: "email" is in no line, the support check abstains); the e-mail answer-type rule ahead of "who" and
    "when" in ``questions._TYPE_RULES`` (the order before: an address is the answer)."""
    result, context = pipeline.answer(question)
    assert (result.text, result.abstained) == (answer, False)
    assert context.source(result.citations[0].n).hit.document_id == doc
