"""The chunking experiment (Lecture 3 §2.3): chunker x context x retriever on a typed-question corpus.

For each chunker and contextualizer it builds an index of the corpus's chunks and reports, per
retriever, Hit@1 by question type and Recall@k of all gold documents (``ragline.eval.typed``), plus
the share of annotated evidence sentences that a chunk boundary splits: a split sentence can be found
by no retriever, whole.
The lecture's qualitative findings, which this measures on real parts: small fixed chunks split
evidence and fail literal questions; context prefixes fix section questions; late chunking lifts
dense retrieval on section questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragline.corpora.base import Corpus
from ragline.eval.typed import hit_by_type
from ragline.index.store import IndexSettings
from ragline.ingest.pipeline import IngestConfig, build_index, chunk_documents
from ragline.retrieve.registry import build_retriever
from ragline.types import Document

CHUNKERS = (
    "none",
    "fixed:size=30",
    "fixed:size=100,overlap=30",
    "sentences:window=3",
    "structure:max_words=200",
    "recursive:size=100",
)
CONTEXTS = ("none", "breadcrumb", "late")
RETRIEVERS = ("bm25", "dense", "hybrid")  # the sweep (and the demo's table): one retriever per family
KS = (1, 3, 5)  # Hit@k and Recall@k depths; the table shows Hit@1 by type and Recall@5 (all gold documents)


def split_evidence_share(chunks: Sequence[Document], corpus: Corpus) -> float:
    """Share of the corpus's answer-bearing sentences that no single chunk contains whole."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for chunk in chunks:
        doc_id = chunk.document_id
        spans.setdefault(doc_id, []).append((int(chunk.metadata.get("start", 0)), int(chunk.metadata.get("end", 0))))
    split = 0
    for fact in corpus.facts:
        text = corpus.document(fact.doc_id).text
        begin = text.find(fact.sentence)
        end = begin + len(fact.sentence)
        split += not any(s <= begin and end <= e for s, e in spans.get(fact.doc_id, []))
    return split / len(corpus.facts) if corpus.facts else 0.0


def run(
    corpus: Corpus,
    chunkers: Sequence[str] = CHUNKERS,
    contexts: Sequence[str] = CONTEXTS,
    retrievers: Sequence[str] = RETRIEVERS,
    embedder: str = "minilm",
) -> list[dict[str, Any]]:
    """One row per (chunker, context, retriever). Late chunking only changes vectors, so it is run
    with the retrievers that use them."""
    rows = []
    for chunker in chunkers:
        split = split_evidence_share(chunk_documents(corpus.documents, IngestConfig(chunker))[0], corpus)
        for context in contexts:
            wanted = [r for r in retrievers if context != "late" or r != "bm25"]
            embed = any(r != "bm25" for r in wanted)
            settings = IndexSettings(embedder=embedder if embed else None, vector_index="flat")
            index = build_index(corpus.documents, IngestConfig(chunker, context), settings)
            for name in wanted:
                scores = hit_by_type(build_retriever(name, index), corpus.questions, ks=KS)
                rows.append({"chunker": chunker, "context": context, "retriever": name, "chunks": len(index),
                             "split_evidence": split, "by_type": scores})  # fmt: skip
    return rows
