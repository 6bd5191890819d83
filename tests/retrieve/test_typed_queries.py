"""Typed queries: HyDE's vector reaches a vector leg of every retriever that searches the index's vectors.

Every registered retriever that needs embeddings (so searches vectors) is built over one index whose
document ``target`` holds exactly HyDE's vector and shares no word with the question or the hypothetical
passage: only the vector can find it. Planted fault, checked: ``milvus-dense`` without ``rank_vector``
(its ``takes`` back to text only) ranks HyDE's passage text, ``target`` drops out and its case fails; so
does ``hybrid``'s when ``HybridRetriever.rank_query`` hands its legs ``Query(query.text)``, ``ppr``'s when its
``rank_query`` seeds from ``self.first.rank(query.text)``, and ``raptor``'s without its ``VECTOR`` in ``takes``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from llm_fakes import FakeLLM
from ragline.components import build, component, names
from ragline.index.store import Index, IndexSettings
from ragline.retrieve.base import needs_embeddings
from ragline.roles import VECTOR, Query
from ragline.types import Document

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from embedding_fakes import HashEmbedder  # noqa: E402

QUESTION = "does aspirin lower a fever"
PASSAGE = "Aspirin lowers a fever within an hour."
TARGET = "d17"
# Retrievers whose defaults load a model: the cheapest spec that keeps them a vector retriever.
CHEAP = {"reranked": "reranked:first=hybrid,reranker=llm-listwise"}
DERIVED = ["transformed:first=dense", "transformed:first=hybrid", "reranked:first=dense,reranker=llm-listwise"]

# Score the vectors of a structure they built (RAPTOR's tree nodes), not the index's: their own ``rank_vector``
# is the vector leg the query must reach.
OWN_VECTORS = {"raptor"}


def vector_retrievers() -> list:
    ragline_own = [n for n in names("retriever") if component("retriever", n).factory.__module__.startswith("ragline.")]
    specs = [spec for spec in [CHEAP.get(n, n) for n in ragline_own] + DERIVED if needs_embeddings(spec)]
    return [pytest.param(s, id=s) for s in specs]


@pytest.fixture(scope="module")
def setup() -> tuple[Index, object, Query]:
    embedder = HashEmbedder(dim=16)
    question, passage = embedder.embed_queries([QUESTION, PASSAGE])
    mean = question / np.linalg.norm(question) + passage / np.linalg.norm(passage)
    hyde_vector = (mean / np.linalg.norm(mean)).astype(np.float32)
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((40, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[int(TARGET[1:])] = hyde_vector
    docs = [Document(f"d{i}", f"filler{i} text{i} words{i}") for i in range(40)]
    docs[0] = Document("d0", "Aspirin lowers a fever and eases pain.")
    index = Index.create(None, IndexSettings(embedder="minilm"))
    index.add(docs, vectors=vectors)
    index.commit()
    index._embedder = embedder  # queries embedded without a model
    llm = FakeLLM(lambda messages, *rest: PASSAGE if "passage" in messages[-1]["content"] else "[1]")
    hyde = build("query_transform", "hyde", index=index, llm=llm)
    (_, _), (typed, _) = hyde.transform(QUESTION)
    assert isinstance(typed, Query) and typed.vector is not None
    np.testing.assert_allclose(typed.vector, hyde_vector, atol=1e-5)
    return index, llm, typed


class SearchedVectors:
    """Records the vectors the index is searched with: every vector leg's search ends in ``Index.search_vector``
    (a text query's embedding, or a typed query's vector)."""

    def __init__(self, index: object, monkeypatch: pytest.MonkeyPatch, method: str = "search_vector") -> None:
        self.vectors: list[np.ndarray] = []
        search = getattr(index, method)

        def spy(vector, *args, **kwargs):
            self.vectors.append(np.asarray(vector, dtype=np.float32))
            return search(vector, *args, **kwargs)

        monkeypatch.setattr(index, method, spy)

    def reached(self, vector: np.ndarray) -> bool:
        return any(np.allclose(v, vector, atol=1e-6) for v in self.vectors)


@pytest.mark.parametrize("spec", vector_retrievers())
def test_hydes_vector_reaches_a_vector_leg(setup, spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    index, llm, typed = setup
    retriever = build("retriever", spec, index=index, llm=llm)
    assert VECTOR in retriever.takes, f"{spec} searches vectors but does not take a vector query"
    if spec in OWN_VECTORS:
        searched = SearchedVectors(retriever, monkeypatch, "rank_vector")
    else:
        searched = SearchedVectors(index, monkeypatch)
    ranked = retriever.rank_query(typed, 3)
    assert searched.reached(typed.vector), f"HyDE's vector did not reach {spec}'s vector leg"
    assert TARGET in dict(ranked)  # the document that holds exactly that vector
    searched.vectors.clear()
    retriever.rank_query(Query(typed.text), 3)
    assert searched.vectors and not searched.reached(typed.vector)  # a text query searches its own embedding


@pytest.mark.parametrize("spec", ["dense", "hybrid", "milvus-dense", "milvus-hybrid"])
def test_a_pipelines_hyde_transform_reaches_the_retrievers_vector_leg(
    setup, spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragline.answer.pipeline import RAGPipeline

    index, llm, typed = setup
    hyde = build("query_transform", "hyde", index=index, llm=llm)
    searched = SearchedVectors(index, monkeypatch)
    hits = RAGPipeline(index, None, retriever=spec, k=3, transforms=[hyde], versions="all").retrieve(QUESTION)
    assert searched.reached(typed.vector) and TARGET in [h.doc_id for h in hits]


def test_a_text_retriever_ranks_a_vector_query_by_its_text(setup) -> None:
    index, _, typed = setup
    bm25 = build("retriever", "bm25", index=index)
    assert VECTOR not in bm25.takes
    assert bm25.rank_query(typed, 5) == bm25.rank(typed.text, 5)
