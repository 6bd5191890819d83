"""ACL fuzz: random principals x queries x corpora; no restricted chunk in candidates, context, answer or trace.

Each document holds a marker word of its own, so a restricted document's text showing anywhere (a
candidate, a context source, the answer text, a citation, the agent's trace) is caught by that marker.
Most pairs run on BM25 (in-memory indexes, cheap); some on dense and hybrid retrieval with the real
MiniLM; some on the agent pipeline (``pipelines/agent.toml``). A reranked pipeline joins through
``PIPELINES`` (a name -> config builder). The mutation check swaps in a retriever that filters after
the top k and asserts that the fuzz then finds the leak. ``RAGLINE_ACL_FUZZ_SCALE`` multiplies the pair
counts (the benchmark runs more).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from typing import Any

import pytest

from ragline.answer.pipeline import RAGPipeline, build_reader
from ragline.config import PipelineConfig, load_config
from ragline.index import Index, IndexSettings
from ragline.principals import Principal
from ragline.retrieve.base import Retriever, hits_for
from ragline.retrieve.registry import build_retriever
from ragline.types import Document

SCALE = float(os.environ.get("RAGLINE_ACL_FUZZ_SCALE", "1"))
GROUPS = ("all", "hr", "finance", "legal", "ops", "exec")
TOPICS = ("leave", "salary", "travel", "bonus", "audit", "contract", "outage", "budget", "pension", "laptop",
          "merger", "rota", "expense", "payroll", "vendor", "incident")  # fmt: skip
FILLER = ("policy", "employees", "approval", "days", "amount", "team", "request", "manager", "review", "annual")


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
    rng: random.Random, make_pipeline: Callable[[Index], RAGPipeline], settings: IndexSettings,
    corpora: int, pairs_per_corpus: int, n_docs: int = 40, depth: int = 10,
) -> tuple[int, list[str]]:  # fmt: skip
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
            found += [f"{principal.groups} {query!r}: {leak}"
                      for leak in leaks(principal, by_id, pipeline, query, depth)]  # fmt: skip
            pairs += 1
    return pairs, found


def _n(count: int) -> int:
    return max(1, int(count * SCALE))


def extractive(retriever: str) -> Callable[[Index], RAGPipeline]:
    return lambda index: RAGPipeline(index, build_reader("extractive"), retriever=retriever, k=5)


# name -> a config that the fuzz builds with RAGPipeline.from_config (a reranked pipeline adds itself here)
PIPELINES: dict[str, Callable[[], PipelineConfig]] = {"agent": lambda: load_config("agent")}


def test_bm25_retrieval_never_returns_what_the_principal_cannot_read() -> None:
    rng = random.Random(13)
    # candidates only (no reader): the cheap bulk of the pairs
    pairs, found = fuzz(rng, lambda index: RAGPipeline(index, None, retriever="bm25"), IndexSettings(),
                        corpora=_n(20), pairs_per_corpus=400, depth=20)  # fmt: skip
    assert pairs >= 8000 * min(SCALE, 1)
    assert found == []


def test_bm25_answers_never_show_what_the_principal_cannot_read() -> None:
    pairs, found = fuzz(random.Random(14), extractive("bm25"), IndexSettings(), corpora=_n(10), pairs_per_corpus=100)
    assert pairs >= 1000 * min(SCALE, 1)
    assert found == []


@pytest.mark.slow
@pytest.mark.parametrize("retriever", ["dense", "hybrid"])
def test_dense_and_hybrid_with_minilm(retriever: str) -> None:
    settings = IndexSettings(embedder="minilm", vector_index="flat")
    make = extractive(retriever)
    pairs, found = fuzz(random.Random(15), make, settings, corpora=_n(2), pairs_per_corpus=250, n_docs=30)
    assert pairs >= 500 * min(SCALE, 1)
    assert found == []


@pytest.mark.slow
@pytest.mark.parametrize("retriever", ["ppr:first=bm25", "graph-local"])
def test_graph_retrievers(retriever: str) -> None:
    """The entity-graph retrievers: the graph is built from every chunk, the filter applies inside the walk
    (graph-global is fuzzed in tests/retrieve/test_graph_search.py, on a corpus whose communities give reports)."""
    pairs, found = fuzz(random.Random(18), extractive(retriever), IndexSettings(), corpora=_n(2), pairs_per_corpus=150)
    assert pairs >= 300 * min(SCALE, 1)
    assert found == []


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_configured_pipelines(name: str) -> None:
    config = PIPELINES[name]()
    make = lambda index: RAGPipeline.from_config(config, index)  # noqa: E731
    pairs, found = fuzz(random.Random(16), make, IndexSettings(), corpora=_n(2), pairs_per_corpus=100)
    assert pairs >= 200 * min(SCALE, 1)
    assert found == []


class FilterAfterTopK(Retriever):
    """The mutation: ranks without the filter, then applies it to the top k (too late: test only)."""

    name = "filter-after-top-k"

    def __init__(self, index: Index) -> None:
        super().__init__(index)
        self.inner = build_retriever("bm25", index)

    def rank(self, query: str, k: int = 10, filter: Any = None) -> list[tuple[str, float]]:
        return self.inner.rank(query, k, None)  # the filter would be applied to these k afterwards

    def search(self, query: str, k: int = 10, filter: Any = None) -> list[Any]:
        return hits_for(self.index, self.rank(query, k, filter))


def test_mutation_filter_after_top_k_is_caught() -> None:
    def make(index: Index) -> RAGPipeline:
        pipeline = RAGPipeline(index, build_reader("extractive"), retriever="bm25", k=5)
        pipeline.retriever_obj = FilterAfterTopK(index)
        return pipeline

    pairs, found = fuzz(random.Random(17), make, IndexSettings(), corpora=2, pairs_per_corpus=50)
    assert found, "the fuzz did not notice a retriever that filters after the top k"
    assert any(f.split(": ", 1)[1].startswith(("candidate", "context")) for f in found)
