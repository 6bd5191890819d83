"""The chunking experiment (Lecture 3 §2.3): chunker x context x retriever on a typed-question corpus.

For each chunker and contextualizer it builds an index of the corpus's chunks and reports, per
retriever, Hit@1 by question type and Recall@k of all gold documents (``ragline.eval.typed``), plus
the share of annotated evidence sentences that a chunk boundary splits: a split sentence can be found
by no retriever, whole; what chunking cost (seconds; for the ``llm`` chunker its model calls and tokens);
and, for each reader asked for, the answers' outcomes (correct / wrong /
abstained) with the default pipeline's reading stage; and each row paired against the first chunker.
The lecture's qualitative findings, which this measures on real parts: small fixed chunks split
evidence and fail literal questions; context prefixes fix section questions; late chunking lifts
dense retrieval on section questions.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, TypeVar

from ragline.corpora.base import Corpus
from ragline.eval.answers import OUTCOMES, grade_question, match_for
from ragline.eval.typed import acl_filter, hit_by_type
from ragline.index.store import IndexSettings
from ragline.ingest.chunkers import build_chunker
from ragline.ingest.llm_chunker import LLMChunker
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
    "sentence-pack:tokens=128,overlap=1",  # the default (pipelines/default.toml)
)  # and ``llm`` (the LLM chooses boundaries: minutes of model time, so asked for by name, not swept)
CONTEXTS = ("none", "breadcrumb", "late")
RETRIEVERS = ("bm25", "dense", "hybrid")  # the sweep (and the demo's table): one retriever per family
C = TypeVar("C", bound=Corpus)
KS = (1, 3, 5)  # Hit@k and Recall@k depths; the table shows Hit@1 by type and Recall@5 (all gold documents)


def sample_corpus(corpus: C, documents: int, seed: int = 0) -> C:
    """A smaller world for chunkers that cost model time: questions drawn at random (``seed``) while their
    gold documents fit in ``documents``, then every question those documents answer (and each unanswerable
    one whose forbidden documents are all kept); facts of the kept documents."""
    import random
    from dataclasses import replace

    drawn = [q for q in corpus.questions if q.gold_doc_ids]
    random.Random(seed).shuffle(drawn)
    kept: set[str] = set()
    for q in drawn:
        if len(kept | set(q.gold_doc_ids)) <= documents:
            kept |= set(q.gold_doc_ids)
    questions = [q for q in corpus.questions if set(q.gold_doc_ids or q.forbidden_doc_ids or ["-"]) <= kept]
    return replace(
        corpus,
        name=f"{corpus.name} ({len(kept)} documents, seed {seed})",
        documents=[d for d in corpus.documents if d.id in kept],
        questions=questions,
        facts=[f for f in corpus.facts if f.doc_id in kept],
    )


def split_evidence_share(chunks: Sequence[Document], corpus: Corpus) -> float:
    """Share of the corpus's answer-bearing sentences that no single chunk contains whole."""
    spans = _chunk_spans(chunks)
    split = 0
    for fact in corpus.facts:
        text = corpus.document(fact.doc_id).text
        begin = text.find(fact.sentence)
        end = begin + len(fact.sentence)
        split += not any(s <= begin and end <= e for s, e in spans.get(fact.doc_id, []))
    return split / len(corpus.facts) if corpus.facts else 0.0


def answer_outcomes(index: Any, retriever: str, reader: str, questions: Sequence[Any]) -> dict[str, Any]:
    """Correct / wrong / abstained of ``reader`` over ``retriever``'s top 5 (the default pipeline's
    reading stage), each question asked as its user; per question 1.0 when correct (for paired tests)."""
    from ragline.answer.pipeline import RAGPipeline, build_reader

    pipeline = RAGPipeline(index, build_reader(reader), retriever=retriever)
    match = match_for(reader)
    counts = dict.fromkeys(OUTCOMES, 0)
    correct: dict[str, float] = {}
    for q in questions:
        answer, context = pipeline.answer(q.text, acl_filter(q))
        outcome = grade_question(q, answer, context, match=match).outcome
        counts[outcome] += 1
        correct[q.id] = float(outcome == "correct")
    return {**counts, "accuracy": counts["correct"] / len(questions) if questions else None, "per_question": correct}


def cut_evidence_share(chunks: Sequence[Document], corpus: Corpus) -> float:
    """Share of the corpus's answer-bearing sentences that some chunk holds only a part of: a chunk
    boundary falls inside the sentence, so a reader given that chunk reads a fragment ("... a memory
    leak in the report"). Overlap can make a sentence whole in another chunk (``split`` 0) and still cut."""
    spans = _chunk_spans(chunks)
    cut = 0
    for fact in corpus.facts:
        begin = corpus.document(fact.doc_id).text.find(fact.sentence)
        end = begin + len(fact.sentence)
        cut += any(s < end and begin < e and not (s <= begin and end <= e) for s, e in spans.get(fact.doc_id, []))
    return cut / len(corpus.facts) if corpus.facts else 0.0


def _chunk_spans(chunks: Sequence[Document]) -> dict[str, list[tuple[int, int]]]:
    spans: dict[str, list[tuple[int, int]]] = {}
    for chunk in chunks:
        spans.setdefault(chunk.document_id, []).append(
            (int(chunk.metadata.get("start", 0)), int(chunk.metadata.get("end", 0)))
        )
    return spans


def run(
    corpus: Corpus,
    chunkers: Sequence[str] = CHUNKERS,
    contexts: Sequence[str] = CONTEXTS,
    retrievers: Sequence[str] = RETRIEVERS,
    embedder: str = "minilm",
    readers: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """One row per (chunker, context, retriever). Late chunking only changes vectors, so it is run
    with the retrievers that use them. Each row holds Hit@1 per question (``hit@1_per_question``) and,
    for each of ``readers``, the answers' outcomes (:func:`answer_outcomes`)."""
    rows = []
    for chunker in chunkers:
        built = build_chunker(chunker)
        began = time.perf_counter()
        chunks = chunk_documents(corpus.documents, IngestConfig(chunker), chunker=built)[0]
        cost = {"seconds": round(time.perf_counter() - began, 2)}  # every chunker's; an LLM's calls and tokens too
        cost.update(built.cost.to_dict() if isinstance(built, LLMChunker) else {})
        split, cut = split_evidence_share(chunks, corpus), cut_evidence_share(chunks, corpus)
        for context in contexts:
            wanted = [r for r in retrievers if context != "late" or r != "bm25"]
            embed = any(r != "bm25" for r in wanted)
            settings = IndexSettings(embedder=embedder if embed else None, vector_index="flat")
            index = build_index(corpus.documents, IngestConfig(chunker, context), settings, chunker=built)
            for name in wanted:
                hits: dict[str, float] = {}
                scores = hit_by_type(build_retriever(name, index), corpus.questions, ks=KS, per_question=hits)
                answers = {reader: answer_outcomes(index, name, reader, corpus.questions) for reader in readers}
                rows.append(
                    {
                        "chunker": chunker,
                        "context": context,
                        "retriever": name,
                        "chunks": len(index),
                        "split_evidence": split,
                        "cut_evidence": cut,
                        "chunking_cost": cost,
                        "by_type": scores,
                        "hit@1_per_question": hits,
                        "answers": answers,
                    }
                )
    return rows


def paired_against_first(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row against the first row of the same context and retriever (the first chunker given):
    Hit@1 and each reader's accuracy, paired by question (``ragline.eval.stats.compare``)."""
    from ragline.eval.stats import compare

    first: dict[tuple[str, str], dict[str, Any]] = {}
    out = []
    for row in rows:
        key = (row["context"], row["retriever"])
        base = first.setdefault(key, row)
        if base is row:
            continue
        metrics = {"hit@1": (base["hit@1_per_question"], row["hit@1_per_question"])}
        for reader, outcome in row["answers"].items():
            metrics[f"{reader} correct"] = (base["answers"][reader]["per_question"], outcome["per_question"])
        for metric, (a, b) in metrics.items():
            out.append(
                {
                    "baseline": base["chunker"],
                    "chunker": row["chunker"],
                    "context": row["context"],
                    "retriever": row["retriever"],
                    "metric": metric,
                    **compare(a, b),
                }
            )
    return out
