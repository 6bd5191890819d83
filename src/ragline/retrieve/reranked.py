"""A first stage and a reranker as one retriever, so retrieval metrics can score a reranked pipeline.

``reranked:first=hybrid,reranker="cross:model=trained:scifact",depth=100`` retrieves ``max(depth, k)``
candidates with ``first``, reorders the best ``depth`` with ``reranker`` and returns them first; the
candidates below ``depth`` follow in their first-stage order (scored below every reranked one), so a deep
evaluation (``ragline eval --depth 1000``) still sees the whole first-stage list and Recall@1000 is the first
stage's. A reranker spec with several keys is quoted, since ``,`` separates this spec's own keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragline.components import build, register
from ragline.errors import ConfigError
from ragline.index.bm25 import BM25Params
from ragline.index.filters import FilterLike
from ragline.index.store import Index
from ragline.retrieve.base import Ranked, Retriever, empty_query_reason, hits_for, needs_embeddings
from ragline.roles import Query

Spec = str | Mapping[str, Any]


@register("retriever", "reranked")
class RerankedRetriever(Retriever):
    """A first stage (first=SPEC) whose best depth candidates a reranker (reranker=SPEC) reorders."""

    name = "reranked"

    def __init__(
        self,
        index: Index,
        first: Spec = "hybrid",
        reranker: Spec = "cross",
        depth: int = 100,
        bm25: BM25Params | None = None,
        llm: Any = None,
    ) -> None:
        super().__init__(index)
        if int(depth) < 1:
            raise ConfigError(f"retriever 'reranked': depth (candidates reranked) must be >= 1, got {depth}")
        # The pipeline's model (``llm``) goes on to an LLM reranker or transform inside, which would
        # otherwise load a second one of its own.
        self.first: Retriever = build("retriever", first, index=index, bm25=bm25 or index.settings.bm25, llm=llm)
        self.reranker = build("reranker", reranker, index=index, llm=llm)
        self.depth = int(depth)

    @staticmethod
    def needs_embeddings(params: Mapping[str, Any]) -> bool:
        return needs_embeddings(params.get("first", "hybrid"))

    @property
    def takes(self) -> frozenset[str]:  # type: ignore[override]
        return self.first.takes

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.rank_query(Query(query), k, filter)

    def rank_query(self, query: Query, k: int = 10, filter: FilterLike = None) -> Ranked:
        """The first stage ranks ``query`` as it takes it; the reranker reads its text."""
        candidates = self.first.rank_query(query, max(self.depth, k), filter)
        if not candidates or empty_query_reason(query.text, self.index.settings.analyzer):
            return candidates[:k]
        hits = hits_for(self.index, candidates[: self.depth])
        reranked = [(hit.doc_id, hit.score) for hit in self.reranker.rerank(query.text, hits, len(hits))]
        seen = {doc_id for doc_id, _ in reranked}
        floor = min((score for _, score in reranked), default=0.0)
        rest = [doc_id for doc_id, _ in candidates if doc_id not in seen]
        # Below the reranked ones, in first-stage order: decreasing scores under the lowest reranked score.
        tail = [(doc_id, floor - 1.0 - position) for position, doc_id in enumerate(rest)]
        return (reranked + tail)[:k]

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "first": self.first.config(),
            "reranker": self.reranker.config(),
            "depth": self.depth,
        }
