"""The chunking experiment's measures on the frozen Orrin Grid corpus (BM25 only: no model)."""

from __future__ import annotations

import pytest

from ragline.corpora.orrin import build_orrin
from ragline.eval import chunking
from ragline.ingest.pipeline import IngestConfig, chunk_documents


def test_whole_documents_split_no_evidence_and_small_fixed_chunks_split_some() -> None:
    corpus = build_orrin()
    whole, _ = chunk_documents(corpus.documents, IngestConfig("none"))
    small, _ = chunk_documents(corpus.documents, IngestConfig("fixed:size=30"))
    assert chunking.split_evidence_share(whole, corpus) == 0.0
    assert chunking.split_evidence_share(small, corpus) > 0.1


@pytest.mark.slow
def test_breadcrumbs_help_section_questions_on_small_chunks() -> None:
    """The lecture's finding: "which policy is this?" is lost in a small chunk; a prefix restores it."""
    rows = chunking.run(build_orrin(), chunkers=["fixed:size=30"], contexts=["none", "breadcrumb"], retrievers=["bm25"])
    by_context = {row["context"]: row["by_type"]["section"]["hit@1"] for row in rows}
    assert len(rows) == 2 and rows[0]["chunks"] == rows[1]["chunks"] > 87
    assert by_context["breadcrumb"] > by_context["none"]
