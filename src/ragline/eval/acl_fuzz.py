"""ACL fuzz: random principals x queries x corpora; no restricted document in candidates, context, answer or trace.

Each document holds a marker word of its own, so a restricted document's text showing anywhere (a candidate, a
context source, a citation, the answer text, the agent's trace) is caught by that marker. An arm is one pipeline
fuzzed with its own seed and pair count (``ARMS``): most pairs on BM25 (in-memory indexes, cheap), some on
dense and hybrid retrieval with the real MiniLM, the entity-graph retrievers and the agent pipeline. The mutation
arm swaps in a retriever that filters after the top k, and the fuzz must find that leak, or it proves nothing.
``tests/trust/test_acl_fuzz.py`` runs each arm; ``benchmarks/acl_fuzz.py`` runs them all and writes the counts
that BENCHMARKS.md and the README quote (a regression file checks them).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragline.answer.pipeline import RAGPipeline, build_reader
from ragline.config import load_config
from ragline.index import Index, IndexSettings
from ragline.principals import Principal
from ragline.retrieve.base import Retriever, hits_for
from ragline.retrieve.registry import build_retriever
from ragline.types import Document

GROUPS = ("all", "hr", "finance", "legal", "ops", "exec")
TOPICS = (
    "leave",
    "salary",
    "travel",
    "bonus",
    "audit",
    "contract",
    "outage",
    "budget",
    "pension",
    "laptop",
    "merger",
    "rota",
    "expense",
    "payroll",
    "vendor",
    "incident",
)
FILLER = ("policy", "employees", "approval", "days", "amount", "team", "request", "manager", "review", "annual")

PipelineMaker = Callable[[Index], RAGPipeline]


def marker(doc_id: str) -> str:
    return f"zq{doc_id.replace('-', '')}x"


def random_corpus(rng: random.Random, n_docs: int) -> list[Document]:
    docs = []
    for i in range(n_docs):
        doc_id = f"d{i}"
        words = rng.choices(TOPICS, k=rng.randint(2, 5)) + rng.choices(FILLER, k=rng.randint(3, 8))
        rng.shuffle(words)
        acl = rng.sample(GROUPS, rng.choice((1, 1, 1, 2)))
        text = f"The {' '.join(words)} is {rng.randint(2, 90)} days. Code {marker(doc_id)}."
        docs.append(Document(doc_id, text, f"{rng.choice(TOPICS).title()} note", {"acl": acl}))
    return docs


def random_principal(rng: random.Random, n: int) -> Principal:
    return Principal(f"user{n}", tuple(rng.sample(GROUPS, rng.randint(1, 3))))


def random_query(rng: random.Random) -> str:
    return " ".join(rng.choices(TOPICS + FILLER, k=rng.randint(1, 4)))


def leaks(principal: Principal, docs: dict[str, Document], pipeline: RAGPipeline, query: str, depth: int) -> list[str]:
    """Where a document ``principal`` may not read shows up for ``query`` (empty: nowhere)."""
    restriction = principal.restriction()
    forbidden = {d for d, doc in docs.items() if not principal.can_read(doc.metadata.get("acl"))}
    found = []
    candidates = pipeline.retriever_obj.search(query, depth, restriction)
    found += [f"candidate {h.doc_id}" for h in candidates if h.doc_id in forbidden]
    if pipeline.reader is None:
        return found
    answer, context = pipeline.answer(query, restriction)
    found += [f"context {s.doc_id}" for s in context.sources if s.doc_id in forbidden]
    found += [f"citation {c.doc_id}" for c in answer.citations if c.doc_id in forbidden]
    shown = json.dumps({"answer": answer.text, "details": answer.details}, default=str)
    found += [f"answer or trace shows {d}" for d in forbidden if marker(d) in shown]
    return found


def fuzz(
    rng: random.Random,
    make_pipeline: PipelineMaker,
    settings: IndexSettings,
    corpora: int,
    pairs_per_corpus: int,
    n_docs: int = 40,
    depth: int = 10,
) -> tuple[int, list[str]]:
    """``(pairs tried, leaks found)`` over ``corpora`` random corpora of ``pairs_per_corpus`` pairs each."""
    pairs, found = 0, []
    for _ in range(corpora):
        docs = random_corpus(rng, n_docs)
        index = Index.create(None, settings)
        index.add(docs)
        index.commit()
        pipeline = make_pipeline(index)
        by_id = {d.id: d for d in docs}
        for n in range(pairs_per_corpus):
            principal, query = random_principal(rng, n), random_query(rng)
            found += [
                f"{principal.groups} {query!r}: {leak}" for leak in leaks(principal, by_id, pipeline, query, depth)
            ]
            pairs += 1
    return pairs, found


def extractive(retriever: str) -> PipelineMaker:
    return lambda index: RAGPipeline(index, build_reader("extractive"), retriever=retriever, k=5)


def configured(name: str) -> PipelineMaker:
    """A pipeline of ``pipelines/NAME.toml``, as ``ragline ask --config NAME`` builds it."""
    config = load_config(name)
    return lambda index: RAGPipeline.from_config(config, index)


class FilterAfterTopK(Retriever):
    """The mutation: ranks without the filter, then applies it to the top k (too late; never registered)."""

    name = "filter-after-top-k"

    def __init__(self, index: Index) -> None:
        super().__init__(index)
        self.inner = build_retriever("bm25", index)

    def rank(self, query: str, k: int = 10, filter: Any = None) -> list[tuple[str, float]]:
        return self.inner.rank(query, k, None)  # the filter would be applied to these k afterwards

    def search(self, query: str, k: int = 10, filter: Any = None) -> list[Any]:
        return hits_for(self.index, self.rank(query, k, filter))


def filter_after_top_k(index: Index) -> RAGPipeline:
    pipeline = RAGPipeline(index, build_reader("extractive"), retriever="bm25", k=5)
    pipeline.retriever_obj = FilterAfterTopK(index)
    return pipeline


@dataclass(frozen=True)
class Arm:
    """One fuzzed pipeline: ``corpora`` x ``pairs_per_corpus`` pairs from ``seed`` (``scale`` multiplies corpora)."""

    name: str
    make: Callable[[], PipelineMaker]
    seed: int
    corpora: int
    pairs_per_corpus: int
    n_docs: int = 40
    depth: int = 10
    embedder: str | None = None  # "minilm": the real model, exact (flat) vector search
    models: bool = False  # loads a model (tests mark these slow)

    def run(self, scale: float = 1.0) -> tuple[int, list[str]]:
        settings = IndexSettings(embedder=self.embedder, vector_index="flat") if self.embedder else IndexSettings()
        corpora = max(1, int(self.corpora * scale))
        return fuzz(
            random.Random(self.seed), self.make(), settings, corpora, self.pairs_per_corpus, self.n_docs, self.depth
        )


def _candidates_only(index: Index) -> RAGPipeline:
    return RAGPipeline(index, None, retriever="bm25")


ARMS: dict[str, Arm] = {
    arm.name: arm
    for arm in (
        Arm("BM25 candidates", lambda: _candidates_only, 13, corpora=20, pairs_per_corpus=400, depth=20),
        Arm("BM25 + extractive reader (candidates, context, answer)", lambda: extractive("bm25"), 14, 10, 100),
        Arm(
            "dense, real MiniLM, extractive reader",
            lambda: extractive("dense"),
            15,
            2,
            250,
            30,
            embedder="minilm",
            models=True,
        ),
        Arm(
            "hybrid, real MiniLM, extractive reader",
            lambda: extractive("hybrid"),
            15,
            2,
            250,
            30,
            embedder="minilm",
            models=True,
        ),
        Arm("ppr (BM25 seeds), extractive reader", lambda: extractive("ppr:first=bm25"), 18, 2, 150),
        Arm("graph-local, extractive reader", lambda: extractive("graph-local"), 18, 2, 150),
        Arm("agent (pipelines/agent.toml)", lambda: configured("agent"), 16, 2, 100),
    )
}
MUTATION = Arm("mutation: a retriever that filters after the top k", lambda: filter_after_top_k, 17, 2, 50)
